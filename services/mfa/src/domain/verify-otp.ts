/**
 * @module @gatehouse/mfa/domain/verify-otp
 * The verdict on an MFA session's email/SMS code (behaviour.md §4.3 verify_otp). mfa proves the code
 * and consumes the session; authn, which asked, issues the withheld tokens (§4.1 "no gate": the code
 * just proven satisfies the gate for this login). mfa never calls authn (issue 14 §5).
 */
import { assertNotLocked, recordFailure } from '@gatehouse/auth';
import { AppError } from '@gatehouse/errors';
import type { MfaContext } from './deps.ts';
import { INVALID_SESSION, requireMfaSession, type SessionClaim } from './mfa-session.ts';
import { otpMatches } from './otp.ts';

/** the longest input accepted: TOTP codes and recovery codes share the field (behaviour.md §4.3) */
const MAX_OTP_CHARS = 16;

/** Lockout key of a user's email/SMS code verifications (TOTP counts apart, behaviour.md §4.4). */
export const otpLockoutKey = (userId: string): string => `otp:${userId}`;

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
}

/**
 * Proves the session's code and consumes the session and the code (single use: of two concurrent
 * completions only the one that deletes the session wins).
 * @param handle the `mfa` cookie's value
 * @throws AppError `invalid_argument` (no otp, or over 16 characters); `unauthenticated` `invalid
 *   session`; `failed_precondition` `authenticator app is not set up for this account` (`isTotp`:
 *   no TOTP can be enrolled in this release); `resource_exhausted` after 5 failures in 15 min;
 *   `not_found` `OTP not found`; `invalid_argument` `otp expired` / `invalid otp`
 */
export async function verifyOtpChallenge(c: MfaContext, handle: string | undefined, attempt: OtpAttempt): Promise<MfaVerdict> {
  const input = (attempt.otp ?? '').trim();
  if (!input) throw new AppError('invalid_argument', 'otp is required');
  if (input.length > MAX_OTP_CHARS) throw new AppError('invalid_argument', `otp must be at most ${MAX_OTP_CHARS} characters`);
  const purpose = attempt.purpose ?? 'login';
  if (purpose !== 'login' && purpose !== 'password_reset') throw new AppError('invalid_argument', `unsupported MFA session purpose: ${purpose}`);
  const session = await requireMfaSession(c, handle, attempt, purpose);
  if (attempt.isTotp === true) throw new AppError('failed_precondition', 'authenticator app is not set up for this account');

  const now = c.now();
  const lockKey = otpLockoutKey(session.userId);
  await assertNotLocked(c.store.failures, lockKey, now, 'otp_lockout');
  const channel = session.channel;
  const otp = channel ? await c.store.findOtp(session.userId, channel) : null;
  if (!channel || !otp) throw new AppError('not_found', 'OTP not found');
  if (otp.expiresAt <= now) throw new AppError('invalid_argument', 'otp expired');
  if (!otpMatches(c.otpKey, session.userId, channel, input, otp.digest)) {
    await recordFailure(c.store.failures, lockKey, now);
    throw new AppError('invalid_argument', 'invalid otp');
  }
  await c.store.failures.clear(lockKey);
  const consumed = await c.store.transaction(async (tx) => {
    if (!(await tx.sessions.delete(session.id))) return false;
    await tx.otps.delete(session.userId, channel);
    return true;
  });
  if (!consumed) throw new AppError('unauthenticated', INVALID_SESSION);
  return {
    userId: session.userId,
    verifiedChannel: channel,
    verifiedContact: session.contact ?? '',
    loginMethod: session.loginMethod,
    roles: session.roles,
    scope: session.scope,
    state: session.state,
    authTime: session.authTime,
  };
}
