/**
 * @module @gatehouse/mfa/domain/verify-otp
 * The verdict on an MFA session's email/SMS code, or with `is_totp` a TOTP or recovery code
 * (behaviour.md §4.3 verify_otp, §4.5). mfa proves the code and consumes the session; authn, which asked, issues the withheld tokens (§4.1 "no gate": the code
 * just proven satisfies the gate for this login). mfa never calls authn (issue 14 §5).
 */
import { claimAttempt } from '@gatehouse/auth';
import { AppError } from '@gatehouse/errors';
import type { MfaContext } from './deps.ts';
import { INVALID_SESSION, requireMfaSession, type SessionClaim } from './mfa-session.ts';
import { otpMatches } from './otp.ts';
import { codeUsed } from './send-gate.ts';
import type { MfaSessionRecord } from '../storage/ports.ts';
import { looksLikeRecoveryCode, matchingStep, recoveryCodeHash } from './totp.ts';

/** the longest input accepted (behaviour.md §4.3), but for a UUID-shaped recovery code with `is_totp` (§4.5) */
const MAX_OTP_CHARS = 16;

/** Lockout key of a user's email/SMS code verifications (TOTP counts apart, behaviour.md §4.4). */
export const otpLockoutKey = (userId: string): string => `otp:${userId}`;
/** Lockout key of a user's TOTP and recovery-code verifications (behaviour.md §4.4). */
export const totpLockoutKey = (userId: string): string => `totp:${userId}`;
export const TOTP_NOT_SET_UP = 'authenticator app is not set up for this account';

/** A code to check against the caller's MFA session. */
export interface OtpAttempt extends SessionClaim {
  otp: string | null | undefined;
  /** the caller says the code is a TOTP code */
  isTotp: boolean | null | undefined;
  /** the purpose the session must have (default `login`); `password_reset` for reset_password (behaviour.md §3.4) */
  purpose?: string | null | undefined;
}

/** A proven challenge: who proved which contact, and the grant of the first step (§4.1). */
export interface MfaVerdict {
  userId: string;
  /** `email` or `sms`: that contact becomes verified */
  verifiedChannel: string;
  /** the address the code was sent to */
  verifiedContact: string;
  loginMethod: string;
  roles: string[];
  scope: string[];
  state: string | null;
  /** Unix seconds of the first step */
  authTime: number;
  /** RFC 8176 values of the factor proven: `otp` for an email code, TOTP or recovery code; `sms` */
  amr: string[];
  /** the factor verified for the first time by this completion, or '' */
  enrolledMethod: string;
}

/** The verdict of a consumed session. */
const verdictOf = (session: MfaSessionRecord, channel: string, contact: string, amr: string[], enrolledMethod: string): MfaVerdict => ({
  userId: session.userId, verifiedChannel: channel, verifiedContact: contact, loginMethod: session.loginMethod,
  roles: session.roles, scope: session.scope, state: session.state, authTime: session.authTime, amr, enrolledMethod,
});

/**
 * Proves the session's code and consumes the session and the code (single use: of two concurrent
 * completions only the one that deletes the session wins). Without `isTotp` the session's email/SMS
 * code is checked and a pending OTP enrolment on that channel becomes verified; with it, {@link verifyTotp}.
 * @param handle the `mfa` cookie's value
 * @throws AppError `invalid_argument` (no otp, or over 16 characters but a recovery code); `unauthenticated` `invalid
 *   session`; `failed_precondition` `authenticator app is not set up for this account`;
 *   `resource_exhausted` after 5 failures in 15 min;
 *   `not_found` `OTP not found`; `invalid_argument` `otp expired` / `invalid otp`
 */
export async function verifyOtpChallenge(c: MfaContext, handle: string | undefined, attempt: OtpAttempt): Promise<MfaVerdict> {
  const input = (attempt.otp ?? '').trim();
  if (!input) throw new AppError('invalid_argument', 'otp is required');
  // behaviour.md §4.3 limits `otp` to 16 characters, while §4.5 makes recovery codes UUIDs (36) that
  // verify_otp with `is_totp` accepts: a UUID-shaped code is the one longer input (services/mfa/README.md)
  const recoveryShaped = attempt.isTotp === true && looksLikeRecoveryCode(input);
  if (input.length > MAX_OTP_CHARS && !recoveryShaped) throw new AppError('invalid_argument', `otp must be at most ${MAX_OTP_CHARS} characters`);
  const purpose = attempt.purpose ?? 'login';
  if (purpose !== 'login' && purpose !== 'password_reset') throw new AppError('invalid_argument', `unsupported MFA session purpose: ${purpose}`);
  const session = await requireMfaSession(c, handle, attempt, purpose);
  if (attempt.isTotp === true && purpose === 'login') return verifyTotp(c, session, input);

  const now = c.now();
  const lockKey = otpLockoutKey(session.userId);
  // the attempt is recorded before the code is judged, so concurrent guesses cannot outrun the count
  // (issue 30 §1); one that finds no code to compare gives its claim back
  const claim = await claimAttempt(c.store.failures, lockKey, now, 'otp_lockout');
  const channel = session.channel;
  const otp = channel ? await c.store.findOtp(session.userId, channel) : null;
  if (!channel || !otp || otp.expiresAt <= now) {
    await c.store.failures.release(claim);
    throw !channel || !otp ? new AppError('not_found', 'OTP not found') : new AppError('invalid_argument', 'otp expired');
  }
  // a wrong code leaves the claim as the failure
  if (!otpMatches(c.otpKey, session.userId, channel, input, otp.digest)) throw new AppError('invalid_argument', 'invalid otp');
  await c.store.failures.clear(lockKey);
  // the code is used up: the next may go at once (§4.4 "while a code is live")
  await codeUsed(c, channel, session.contact ?? '');
  const consumed = await c.store.transaction(async (tx) => {
    if (!(await tx.sessions.delete(session.id))) return null;
    await tx.otps.delete(session.userId, channel);
    return { enrolled: await tx.otpEnrolments.verify(session.userId, channel, now) };
  });
  if (!consumed) throw new AppError('unauthenticated', INVALID_SESSION);
  const amr = channel === 'sms' ? ['sms'] : ['otp'];
  return verdictOf(session, channel, session.contact ?? '', amr, consumed.enrolled ? `${channel}_otp` : '');
}

/**
 * verify_otp with `is_totp` (behaviour.md §4.3, §4.5): a 6-digit code against the pending enrolment
 * (which it then confirms, replacing the active one and its recovery codes) or the active one, ±1
 * step after the last accepted step; or an unused recovery code of the active set, which is used up.
 * Failures count toward the TOTP lockout, apart from email/SMS codes (§4.4).
 * @throws AppError `failed_precondition` {@link TOTP_NOT_SET_UP} when the user has no TOTP at all;
 *   `resource_exhausted` when locked; `invalid_argument` `invalid otp`; `unauthenticated` `invalid
 *   session` when another completion consumed the session first
 */
async function verifyTotp(c: MfaContext, session: MfaSessionRecord, input: string): Promise<MfaVerdict> {
  const now = c.now();
  const userId = session.userId;
  const active = await c.store.findTotp(userId, 'active');
  const rawPending = await c.store.findTotp(userId, 'pending');
  const pending = rawPending && (rawPending.expiresAt ?? 0) > now ? rawPending : null;
  if (!c.methods.totp || (!active && !pending)) throw new AppError('failed_precondition', TOTP_NOT_SET_UP);
  const lockKey = totpLockoutKey(userId);
  // claimed before any code is compared (issue 30 §1); a wrong code leaves the claim as the failure
  await claimAttempt(c.store.failures, lockKey, now, 'totp_lockout');

  const fail = (): never => {
    throw new AppError('invalid_argument', 'invalid otp');
  };
  const pendingStep = pending ? await matchingStep(c.totpKey, pending, input, now) : null;
  const activeStep = pendingStep === null && active ? await matchingStep(c.totpKey, active, input, now) : null;
  const recovery = pendingStep === null && activeStep === null && active && looksLikeRecoveryCode(input)
    ? await c.store.findRecoveryCode(userId, recoveryCodeHash(input))
    : null;
  if (pendingStep === null && activeStep === null && (!recovery || recovery.usedAt !== null)) return fail();

  const REPLAYED = new Error('replayed');
  const outcome = await c.store.transaction(async (tx) => {
    if (!(await tx.sessions.delete(session.id))) return 'gone';
    // each proof is single use: the step guard and the code's used_at are conditional updates; a
    // lost race throws, so the session's deletion rolls back with it
    if (pendingStep !== null) {
      if (!(await tx.totp.advanceStep(userId, 'pending', pendingStep))) throw REPLAYED;
      await tx.totp.promote(userId, pendingStep);
      await tx.recoveryCodes.promote(userId);
    } else if (activeStep !== null) {
      if (!(await tx.totp.advanceStep(userId, 'active', activeStep))) throw REPLAYED;
    } else if (!(await tx.recoveryCodes.use(recovery!.id, now))) {
      throw REPLAYED;
    }
    return 'ok';
  }).catch((err: unknown) => {
    if (err === REPLAYED) return 'replayed' as const;
    throw err;
  });
  if (outcome === 'replayed') return fail();
  if (outcome === 'gone') throw new AppError('unauthenticated', INVALID_SESSION);
  await c.store.failures.clear(lockKey);
  // a first TOTP enrolment is confirmed when there was no active one before
  return verdictOf(session, '', '', ['otp'], pendingStep !== null && !active ? 'totp' : '');
}
