/**
 * @module @gatehouse/mfa/domain/verify-otp
 * `POST /v1/verify_otp` (behaviour.md §4.3) for email/SMS codes: proves the session's code, ends the
 * MFA session and has authn issue the withheld tokens (§4.1 "no gate": the code just proven
 * satisfies the gate for this login).
 */
import { assertNotLocked, clearMfaCookie, recordFailure } from '@gatehouse/auth';
import { AppError } from '@gatehouse/errors';
import type { mfa } from '@gatehouse/contracts';
import type { CallContext } from '@gatehouse/rpc';
import type { MfaContext } from './deps.ts';
import { INVALID_SESSION, requireMfaSession } from './mfa-session.ts';
import { cookieOptions } from './options.ts';
import { otpMatches } from './otp.ts';

export const OTP_VERIFIED = 'OTP verified successfully.';
/** the longest input accepted: TOTP codes and recovery codes share the field (behaviour.md §4.3) */
const MAX_OTP_CHARS = 16;


/** Lockout key of a user's email/SMS code verifications (TOTP counts apart, behaviour.md §4.4). */
export const otpLockoutKey = (userId: string): string => `otp:${userId}`;

/**
 * @returns authn's AuthResponse (`OTP verified successfully.` with tokens); the session cookies and
 *   the cleared `mfa` cookie are on `ctx.setCookies`
 * @throws AppError `invalid_argument` (no otp, or over 16 characters); `unauthenticated` `invalid
 *   session`; `failed_precondition` `authenticator app is not set up for this account` (`is_totp`:
 *   no TOTP can be enrolled in this release); `resource_exhausted` after 5 failures in 15 min;
 *   `not_found` `OTP not found`; `invalid_argument` `otp expired` / `invalid otp`; authn's
 *   `failed_precondition` `user access has been revoked`
 */
export async function verifyOtp(c: MfaContext, ctx: CallContext, req: mfa.VerifyOtpRequest): Promise<Record<string, unknown>> {
  const input = (req.otp ?? '').trim();
  if (!input) throw new AppError('invalid_argument', 'otp is required');
  if (input.length > MAX_OTP_CHARS) throw new AppError('invalid_argument', `otp must be at most ${MAX_OTP_CHARS} characters`);
  const { session } = await requireMfaSession(c, ctx, req, 'login');
  if (req.is_totp === true) throw new AppError('failed_precondition', 'authenticator app is not set up for this account');

  const now = c.now();
  const lockKey = otpLockoutKey(session.userId);
  await assertNotLocked(c.store.failures, lockKey, now, 'otp_lockout');
  const otp = session.channel ? await c.store.findOtp(session.userId, session.channel) : null;
  if (!session.channel || !otp) throw new AppError('not_found', 'OTP not found');
  if (otp.expiresAt <= now) throw new AppError('invalid_argument', 'otp expired');
  if (!otpMatches(c.otpKey, session.userId, session.channel, input, otp.digest)) {
    await recordFailure(c.store.failures, lockKey, now);
    throw new AppError('invalid_argument', 'invalid otp');
  }
  await c.store.failures.clear(lockKey);
  // single use: of two concurrent completions only the one that deletes the session goes on
  const consumed = await c.store.transaction(async (tx) => {
    if (!(await tx.sessions.delete(session.id))) return false;
    await tx.otps.delete(session.userId, session.channel!);
    return true;
  });
  if (!consumed) throw new AppError('unauthenticated', INVALID_SESSION);
  ctx.setCookies.push(clearMfaCookie(cookieOptions(c.options)));
  return c.authn.call('CompleteMfaLogin', {
    user_id: session.userId,
    verified_channel: session.channel,
    verified_contact: session.contact ?? '',
    login_method: session.loginMethod,
    roles: session.roles,
    scope: session.scope,
    state: session.state,
    auth_time: session.authTime,
    message: OTP_VERIFIED,
  }, ctx);
}
