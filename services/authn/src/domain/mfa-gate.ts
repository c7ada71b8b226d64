/**
 * @module @gatehouse/authn/domain/mfa-gate
 * authn's side of the MFA gate (behaviour.md §4.1-§4.3, §4.7): after every first step authn checks
 * G0, asks mfa for rows G1-G7, and either issues tokens or answers with mfa's challenge/offer. The
 * completions that change the user row (skip_mfa_setup, lock_mfa) and the setups that need its record
 * are here too; mfa owns factors, MFA sessions and verdicts (docs/architecture.md §7).
 *
 * HOOK for the later first steps (social, SSO and SAML callbacks): call {@link passMfaGate} with the
 * user, the grant (`loginMethod` the provider, e.g. `google`, `sso`) and the request's `state`, and
 * answer with its outcome (tokens, or the gate's AuthResponse with the `mfa` cookie mfa set on the
 * call); a redirecting callback builds its Location with {@link gateRedirectParams}.
 */
import { AppError } from '@gatehouse/errors';
import type { common } from '@gatehouse/contracts';
import type { UserRecord } from '../storage/ports.ts';
import { userLoggedIn } from '../events.ts';
import type { Audit, AuthnContext, MfaChallenges } from './deps.ts';
import { openSession, type AuthOutcome, type Issued, type SessionGrant } from './issue.ts';
import { isMfaAvailable, isMfaEnforced } from './options.ts';
import { activeUser, isRevoked, type ContactInput } from './user.ts';

/** behaviour.md §3.3 step 7, §4.1 G0 */
export const MFA_LOCKED_MESSAGE = "your account's multi-factor authentication is locked; contact your administrator to regain access";
/** behaviour.md §9 */
export const MFA_SETUP_SKIPPED = 'MFA setup skipped';
export const MFA_LOCKED = 'Your account is locked. Contact your administrator to regain access.';
export const EMAIL_OTP_SETUP_SENT = 'Check your email for the verification code';
export const SMS_OTP_SETUP_SENT = 'Check your phone for the verification code';
/** behaviour.md §4.7 */
export const CANNOT_ENABLE_MFA = 'cannot enable MFA: no MFA method is available on this server';
export const CANNOT_DISABLE_MFA = 'cannot disable multi factor authentication as it is enforced by organization';

/** What a first step hands the gate. */
export interface FirstStep {
  user: UserRecord;
  grant: SessionGrant;
  state: string | null;
  /** the message when tokens are issued (`Logged in successfully`, `Signed up successfully.`, ...) */
  issuedMessage: string;
  /** emit `user.login` when tokens are issued (every login-type flow but signup, behaviour.md §8) */
  emitLogin: boolean;
}

/**
 * Runs the gate after a successful first step (behaviour.md §4.1): G0 here, G1-G7 by mfa, then the
 * tokens (G1, G6) or mfa's answer, tokens withheld, with the `mfa` cookie mfa set on the call.
 * Without the mfa service (split mode without `--mfa-address`) no factor can be asked for: tokens.
 * @throws AppError `failed_precondition` {@link MFA_LOCKED_MESSAGE} (G0); mfa's codes
 */
export async function passMfaGate(c: AuthnContext, mfa: MfaChallenges | null, step: FirstStep): Promise<AuthOutcome> {
  const { user, grant } = step;
  if (user.mfaLockedAt !== null) throw new AppError('failed_precondition', MFA_LOCKED_MESSAGE);
  if (mfa) {
    const d = await mfa.evaluateGate(user, grant, step.state);
    if (d.outcome !== 'issue' && d.response) return { message: d.response.message, issued: null, gate: d.response };
  }
  const issued = await withEnrolled(mfa, await openSession(c, user, grant));
  if (step.emitLogin) await c.users.transaction(async (tx) => userLoggedIn(tx.events, user, grant.loginMethod));
  return { message: step.issuedMessage, issued };
}

/** `issued` with the user's `enrolled_mfa_methods` from mfa (behaviour.md §5.3); unchanged without mfa. */
export async function withEnrolled(mfa: MfaChallenges | null, issued: Issued): Promise<Issued> {
  if (!mfa) return issued;
  const methods = (await mfa.enrolledMethods([issued.user.id])).get(issued.user.id) ?? [];
  return { ...issued, enrolledMfaMethods: methods };
}

/**
 * The query a redirecting first step (the `GET /verify_email` link, later social/SSO callbacks) adds
 * when gated (behaviour.md §3.4): `mfa_required=1`, `mfa_methods` (the methods on offer or to verify
 * with, of `totp,webauthn,email_otp,sms_otp`) and `mfa_gate=verify|offer`.
 */
export function gateRedirectParams(r: common.AuthResponse): Record<string, string> {
  const verify = r.should_show_email_otp_screen || r.should_show_mobile_otp_screen || r.should_offer_webauthn_mfa_verify || r.message === 'Proceed to mfa verification';
  const methods = verify
    ? [r.should_show_totp_screen && 'totp', r.should_offer_webauthn_mfa_verify && 'webauthn', r.should_show_email_otp_screen && 'email_otp', r.should_show_mobile_otp_screen && 'sms_otp']
    : [r.should_show_totp_screen && 'totp', r.should_offer_webauthn_mfa_setup && 'webauthn', r.should_offer_email_otp_mfa_setup && 'email_otp', r.should_offer_sms_otp_mfa_setup && 'sms_otp'];
  return { mfa_required: '1', mfa_methods: methods.filter(Boolean).join(','), mfa_gate: verify ? 'verify' : 'offer' };
}

const noMfa = (): never => {
  throw new AppError('failed_precondition', 'MFA is not available');
};

/**
 * `skip_mfa_setup` (behaviour.md §4.3): mfa checks the offer state and consumes the session; authn
 * sets `has_skipped_mfa_setup_at` and issues the withheld tokens (`user.login`).
 * @throws AppError mfa's (`invalid session`, `cannot skip multi factor authentication setup`);
 *   `failed_precondition` revoked / locked
 */
export async function skipMfaSetup(c: AuthnContext, mfa: MfaChallenges | null, claim: ContactInput): Promise<AuthOutcome> {
  if (!mfa) return noMfa();
  const v = await mfa.skip(claim);
  const now = c.now();
  const user = await c.users.transaction(async (tx) => {
    const u = await tx.users.findById(v.userId);
    if (!u) throw new AppError('not_found', 'user not found');
    if (isRevoked(u)) throw new AppError('failed_precondition', 'user access has been revoked');
    if (u.mfaLockedAt !== null) throw new AppError('failed_precondition', MFA_LOCKED_MESSAGE);
    const next: UserRecord = { ...u, hasSkippedMfaSetupAt: u.hasSkippedMfaSetupAt ?? now, updatedAt: now };
    await tx.users.update(next);
    return next;
  });
  const issued = await withEnrolled(mfa, await openSession(c, user, { ...v.grant, amr: [], authTime: v.grant.authTime || now }));
  await c.users.transaction(async (tx) => userLoggedIn(tx.events, user, v.grant.loginMethod));
  return { message: MFA_SETUP_SKIPPED, issued };
}

/**
 * `lock_mfa` (behaviour.md §4.3): mfa refuses while a verified OTP fallback exists and ends the
 * session; authn sets `mfa_locked_at` and records `user.mfa_locked`. No tokens.
 * @throws AppError mfa's (`invalid session`, the fallback refusal)
 */
export async function lockMfa(c: AuthnContext, mfa: MfaChallenges | null, claim: ContactInput, audit: Audit): Promise<string> {
  if (!mfa) return noMfa();
  const userId = await mfa.lock(claim);
  const now = c.now();
  await c.users.transaction(async (tx) => {
    const u = await tx.users.findById(userId);
    if (!u) throw new AppError('not_found', 'user not found');
    await tx.users.update({ ...u, mfaLockedAt: u.mfaLockedAt ?? now, updatedAt: now });
    tx.events.emit('audit.recorded', audit('user.mfa_locked', { actor: { type: 'user', id: u.id, email: u.email }, resourceType: 'user', resourceId: u.id }));
  });
  return MFA_LOCKED;
}

/** The caller of a setup: a user credential (its session's grant), or none (the MFA-session mode). */
export interface SetupCaller {
  userId: string;
  grant: SessionGrant;
}

/**
 * `email_otp_mfa_setup` / `sms_otp_mfa_setup` (behaviour.md §4.3).
 * @param caller the signed-in user, or null for the MFA-session mode (the `mfa` cookie, `claim`)
 * @returns the §9 message
 * @throws AppError `unauthenticated` `unauthorized` (user gone or revoked); mfa's refusals
 */
export async function beginOtpSetup(
  c: AuthnContext, mfa: MfaChallenges | null, channel: 'email' | 'sms', caller: SetupCaller | null, claim: ContactInput,
): Promise<string> {
  if (!mfa) return noMfa();
  const user = caller ? await activeUser(c.users, caller.userId) : null;
  await mfa.beginOtpEnrolment(channel, user && caller ? { user, grant: caller.grant } : null, caller ? {} : claim);
  return channel === 'email' ? EMAIL_OTP_SETUP_SENT : SMS_OTP_SETUP_SENT;
}

/**
 * `totp_mfa_setup` (behaviour.md §4.3, §4.5): the AuthResponse with the secret, QR and recovery codes.
 * @throws AppError `unauthenticated` `unauthorized`; mfa's `authenticator app MFA is not available on this server`
 */
export async function beginTotpSetup(c: AuthnContext, mfa: MfaChallenges | null, caller: SetupCaller): Promise<common.AuthResponse> {
  if (!mfa) throw new AppError('failed_precondition', 'authenticator app MFA is not available on this server');
  const user = await activeUser(c.users, caller.userId);
  return mfa.beginTotpEnrolment(user, caller.grant);
}

/**
 * The §4.7 rule for setting `is_multi_factor_auth_enabled` (update_profile and admin update_user):
 * `true` needs MFA available; `false` is refused while enforced.
 * @returns the value to store
 * @throws AppError `failed_precondition` {@link CANNOT_ENABLE_MFA} / {@link CANNOT_DISABLE_MFA}
 */
export function checkMfaPreference(c: AuthnContext, value: boolean): boolean {
  if (value && !isMfaAvailable(c.options)) throw new AppError('failed_precondition', CANNOT_ENABLE_MFA);
  if (!value && isMfaEnforced(c.options)) throw new AppError('failed_precondition', CANNOT_DISABLE_MFA);
  return value;
}

/**
 * Admin `reset_mfa` (behaviour.md §4.7), the user-row half: clears `mfa_locked_at`,
 * `is_multi_factor_auth_enabled` and `has_skipped_mfa_setup_at`. The caller (admin update_user) stores
 * it and calls {@link MfaChallenges.resetUserMfa} for the factors, after its transaction commits.
 */
export function withMfaReset(u: UserRecord, now: number): UserRecord {
  return { ...u, mfaLockedAt: null, isMultiFactorAuthEnabled: null, hasSkippedMfaSetupAt: null, updatedAt: now };
}
