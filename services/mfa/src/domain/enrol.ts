/**
 * @module @gatehouse/mfa/domain/enrol
 * Enrolment and the gate's other exits, as mfa decides them (behaviour.md §4.3, §4.5, §4.7):
 * email/SMS OTP setup, TOTP setup, skip_mfa_setup, lock_mfa, and the admin reset. authn asks for each
 * through MfaInternal and does what touches the user row (flags, tokens, audit).
 */
import type { common } from '@gatehouse/contracts';
import { AppError } from '@gatehouse/errors';
import type { MfaSessionRecord, OtpChannel } from '../storage/ports.ts';
import { openOtpChallenge } from './challenge.ts';
import type { ArmedSession, MfaContext } from './deps.ts';
import { factorsOf, openBareSession, stagePendingTotp, type GateRequest, type GateScreens } from './gate.ts';
import { INVALID_SESSION, MFA_SESSION_TTL_SECONDS, requireMfaSession, type SessionClaim } from './mfa-session.ts';
import { queueOtp } from '../events.ts';
import { assertChannelService } from './options.ts';
import { generateOtp, OTP_TTL_SECONDS, otpDigest } from './otp.ts';
import { mustClaimCodeSend, writeClaimedSend } from './send-gate.ts';
import { otpLockoutKey, totpLockoutKey } from './verify-otp.ts';

/** behaviour.md §4.3 refusals */
export const CANNOT_SKIP = 'cannot skip multi factor authentication setup';
export const LOCK_REFUSED = 'a verified email or SMS OTP fallback is available — use it instead of locking your account';
export const TOTP_NOT_AVAILABLE = 'authenticator app MFA is not available on this server';

/** An email/SMS OTP setup: the user-credential caller's record and grant, or else the caller's MFA session. */
export interface OtpEnrolmentRequest {
  channel: OtpChannel;
  /** user-credential mode; null: MFA-session mode (`handle`, `claim`) */
  caller: GateRequest | null;
  handle: string | undefined;
  claim: SessionClaim;
}

/**
 * `email_otp_mfa_setup` / `sms_otp_mfa_setup` (behaviour.md §4.3): creates or replaces a pending
 * enrolment, sends a code to the user's own address and arms an MFA session on that channel; verify_otp
 * completes it. In MFA-session mode the caller's session is re-armed; otherwise a new one is opened
 * with the caller's grant.
 * @returns the armed session (the `mfa` cookie)
 * @throws AppError `unauthenticated` `invalid session`; `failed_precondition` `email OTP is not
 *   available on this server` / `SMS OTP is not available on this server` / `account has no email
 *   address to send an OTP to` / `account has no phone number to send an OTP to`;
 *   `resource_exhausted` `please wait before requesting another OTP` within 30 s of the last code
 *   (MFA-session mode; a user-credential setup keeps a code that young, as a login does)
 */
export async function beginOtpEnrolment(c: MfaContext, req: OtpEnrolmentRequest): Promise<ArmedSession> {
  const email = req.channel === 'email';
  const usable = email ? c.methods.emailOtp : c.methods.smsOtp;
  const session = req.caller ? null : await requireMfaSession(c, req.handle, req.claim, 'login');
  if (!usable) throw new AppError('failed_precondition', `${email ? 'email' : 'SMS'} OTP is not available on this server`);
  const user: common.User | null = req.caller ? req.caller.user : session!.user;
  const destination = (email ? user?.email : user?.phone_number) ?? '';
  if (!user?.id) throw new AppError('invalid_argument', 'the setup needs the user');
  if (!destination) throw new AppError('failed_precondition', `account has no ${email ? 'email address' : 'phone number'} to send an OTP to`);
  assertChannelService(c.options, req.channel);
  const now = c.now();
  const enrolment = await c.store.findOtpEnrolment(user.id, req.channel);
  // a verified enrolment stays verified; a fresh setup (re)starts a pending one
  const pending = { userId: user.id, channel: req.channel, verifiedAt: enrolment?.verifiedAt ?? null, createdAt: enrolment?.createdAt ?? now };
  if (req.caller) {
    await c.store.transaction((tx) => tx.otpEnrolments.put(pending));
    const armed = await openOtpChallenge(c, { ...req.caller, channel: req.channel, purpose: 'login' });
    return armed;
  }
  const s = session!;
  // one code per destination every 30 s (behaviour.md §4.4), claimed atomically (issue 30 §2)
  await mustClaimCodeSend(c, req.channel, destination, now);
  const code = generateOtp();
  const expiresAt = now + MFA_SESSION_TTL_SECONDS;
  await writeClaimedSend(c, req.channel, destination, () => c.store.transaction(async (tx) => {
    await tx.otpEnrolments.put(pending);
    await tx.otps.put({ userId: user.id, channel: req.channel, digest: otpDigest(c.otpKey, user.id, req.channel, code), expiresAt: now + OTP_TTL_SECONDS, sentAt: now });
    await tx.sessions.setChannel(s.id, req.channel, destination, expiresAt);
    queueOtp(tx, c.jobKey, req.channel, destination, code, user);
  }));
  return { handle: req.handle!, expiresAt, armedAt: now };
}

/**
 * `totp_mfa_setup` (behaviour.md §4.3, §4.5): a pending TOTP enrolment (staged for 600 s while a
 * verified one keeps working) and an MFA session without a channel; verify_otp with `is_totp`
 * completes it.
 * @returns what the AuthResponse shows once, and the armed session (the `mfa` cookie)
 * @throws AppError `failed_precondition` {@link TOTP_NOT_AVAILABLE}
 */
export async function beginTotpEnrolment(c: MfaContext, req: GateRequest): Promise<{ totp: NonNullable<GateScreens['totp']>; armed: ArmedSession }> {
  if (!c.methods.totp) throw new AppError('failed_precondition', TOTP_NOT_AVAILABLE);
  if (!req.user?.id) throw new AppError('invalid_argument', 'the setup needs the user');
  const totp = await stagePendingTotp(c, req.user);
  const armed = await openBareSession(c, req);
  return { totp, armed };
}

/**
 * Consumes the caller's session: of two concurrent completions only one deletes it.
 * @throws AppError `unauthenticated` `invalid session` when another completion won
 */
async function consume(c: MfaContext, session: MfaSessionRecord): Promise<void> {
  const won = await c.store.transaction((tx) => tx.sessions.delete(session.id));
  if (!won) throw new AppError('unauthenticated', INVALID_SESSION);
}

/**
 * Is the MFA session in the offer/enrol state (behaviour.md §4.1 G5, G7)? MFA is available, the user
 * has no verified factor, and the session is no code challenge: a session with a code is a setup
 * only when the code is an email/SMS OTP enrolment's (login step 8, G2 and G3 are challenges).
 * skip_mfa_setup also needs "not enforced"; a passkey set up here completes the gate (§4.3).
 */
export async function isSetupState(c: MfaContext, session: MfaSessionRecord): Promise<boolean> {
  const f = await factorsOf(c, session.userId);
  const setup = session.channel ? await c.store.findOtpEnrolment(session.userId, session.channel) : null;
  const challenge = session.channel !== null && (setup === null || setup.verifiedAt !== null);
  return c.methods.available && !(f.totp || f.emailOtp || f.smsOtp || f.passkey) && !challenge;
}

/**
 * `skip_mfa_setup` (behaviour.md §4.3): only in the offer state: not enforced and no verified factor.
 * @returns the session's grant, for authn to set `has_skipped_mfa_setup_at` and issue tokens
 * @throws AppError `unauthenticated` `invalid session`; `failed_precondition` {@link CANNOT_SKIP}
 */
export async function skipMfaSetup(c: MfaContext, handle: string | undefined, claim: SessionClaim): Promise<MfaSessionRecord> {
  const session = await requireMfaSession(c, handle, claim, 'login');
  if (c.methods.enforced || !(await isSetupState(c, session))) throw new AppError('failed_precondition', CANNOT_SKIP);
  await consume(c, session);
  return session;
}

/**
 * `lock_mfa` (behaviour.md §4.3): refused while a verified email/SMS OTP enrolment is a usable
 * fallback; ends the MFA session.
 * @returns the user to lock (authn sets `mfa_locked_at`)
 * @throws AppError `unauthenticated` `invalid session`; `failed_precondition` {@link LOCK_REFUSED}
 */
export async function lockMfa(c: MfaContext, handle: string | undefined, claim: SessionClaim): Promise<string> {
  const session = await requireMfaSession(c, handle, claim, 'login');
  const f = await factorsOf(c, session.userId);
  if (f.emailOtp || f.smsOtp) throw new AppError('failed_precondition', LOCK_REFUSED);
  await c.store.transaction((tx) => tx.sessions.deleteAllOfUser(session.userId));
  return session.userId;
}

/**
 * Admin `reset_mfa` (behaviour.md §4.7): deletes the user's TOTP (active and pending), recovery codes,
 * OTP enrolments and live codes, passkeys and MFA sessions, in one transaction.
 * @returns how many factors were deleted
 */
export async function resetUserMfa(c: MfaContext, userId: string): Promise<number> {
  if (!userId) throw new AppError('invalid_argument', 'user_id is required');
  return c.store.transaction(async (tx) => {
    let n = 0;
    n += await tx.totp.delete(userId, 'active');
    n += await tx.totp.delete(userId, 'pending');
    n += await tx.recoveryCodes.deleteAllOfUser(userId);
    n += await tx.otpEnrolments.deleteAllOfUser(userId);
    n += await tx.passkeys.deleteAllOfUser(userId);
    await tx.otps.delete(userId, 'email');
    await tx.otps.delete(userId, 'sms');
    await tx.sessions.deleteAllOfUser(userId);
    return n;
  });
}

/**
 * A deleted user (behaviour.md §5.3 delete_user, from the `user.deleted` consumer): everything
 * {@link resetUserMfa} deletes, and the user's OTP and TOTP lockout counters. Idempotent.
 * @returns how many factors were deleted
 */
export async function forgetUser(c: MfaContext, userId: string): Promise<number> {
  const factors = await resetUserMfa(c, userId);
  await c.store.failures.clear(otpLockoutKey(userId));
  await c.store.failures.clear(totpLockoutKey(userId));
  return factors;
}
