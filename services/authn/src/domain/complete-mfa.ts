/**
 * @module @gatehouse/authn/domain/complete-mfa
 * Issuing the withheld tokens once the mfa service has proven a challenge (behaviour.md §4.1 "no
 * gate", §4.3 verify_otp).
 */
import { AppError } from '@gatehouse/errors';
import type { CallContext } from '@gatehouse/rpc';
import type { UserRecord } from '../storage/ports.ts';
import type { AuthResponse } from './auth-response.ts';
import type { AuthnContext } from './deps.ts';
import { openSessionAndRespond } from './issue.ts';
import { MFA_LOCKED_MESSAGE } from './login.ts';
import { isRevoked } from './user.ts';
import { USER_REVOKED } from './verify-email.ts';
import type { mfa } from '@gatehouse/contracts';
import { userLoggedIn } from '../events.ts';

/** A challenge mfa has proven (proto `MfaVerdict`), and the message of the AuthResponse (behaviour.md §9). */
type CompleteMfaLoginRequest = mfa.MfaVerdict & { message: string };

export const OTP_VERIFIED = 'OTP verified successfully.';

/**
 * `POST /v1/verify_otp` (behaviour.md §4.3): authn asks mfa for the verdict on the caller's MFA session
 * and code (the `mfa` cookie travels in `ctx`; mfa clears it through `ctx.setCookies`), then issues the
 * withheld tokens. authn is the one place sessions are issued (issue 14 §5).
 * @throws AppError `failed_precondition` `MFA is not available` without the mfa service; mfa's codes
 *   (`unauthenticated` `invalid session`, `invalid_argument` `invalid otp`, `resource_exhausted`, ...);
 *   {@link completeMfaLogin}'s
 */
export async function verifyOtp(c: AuthnContext, ctx: CallContext, req: mfa.VerifyOtpChallengeRequest): Promise<AuthResponse> {
  if (!c.mfa) throw new AppError('failed_precondition', 'MFA is not available');
  const verdict = await c.mfa.VerifyOtpChallenge(req, ctx);
  return completeMfaLogin(c, ctx, { ...verdict, message: OTP_VERIFIED });
}

/**
 * Marks the contact the code was proven on as verified (an email code verifies the email, behaviour.md
 * §3.3 step 8, §4.3), opens a session with the grant stored in the MFA session, sets both session
 * cookies and emits `user.login`.
 * @returns AuthResponse with `req.message` and tokens
 * @throws AppError `not_found` `user not found` (deleted meanwhile); `failed_precondition`
 *   `user access has been revoked` or the MFA-lock message; `failed_precondition` when the proven
 *   address is no longer the user's (changed during the challenge); `invalid_argument` for an
 *   unknown channel
 */
export async function completeMfaLogin(c: AuthnContext, ctx: CallContext, req: CompleteMfaLoginRequest): Promise<AuthResponse> {
  if (req.verified_channel !== 'email' && req.verified_channel !== 'sms') {
    throw new AppError('invalid_argument', `unknown verified channel: ${req.verified_channel}`);
  }
  const now = c.now();
  const user = await c.users.transaction(async (tx) => {
    const u = await tx.users.findById(req.user_id);
    if (!u) throw new AppError('not_found', 'user not found');
    if (isRevoked(u)) throw new AppError('failed_precondition', USER_REVOKED);
    if (u.mfaLockedAt !== null) throw new AppError('failed_precondition', MFA_LOCKED_MESSAGE);
    const email = req.verified_channel === 'email';
    if ((email ? u.email : u.phoneNumber) !== req.verified_contact) {
      throw new AppError('failed_precondition', `the ${email ? 'email address' : 'phone number'} the code was sent to is no longer the account's`);
    }
    const verified = email ? u.emailVerifiedAt : u.phoneNumberVerifiedAt;
    if (verified !== null) return u;
    const next: UserRecord = email ? { ...u, emailVerifiedAt: now, updatedAt: now } : { ...u, phoneNumberVerifiedAt: now, updatedAt: now };
    await tx.users.update(next);
    return next;
  });
  const { response } = await openSessionAndRespond(c, ctx, user, {
    loginMethod: req.login_method, roles: [...req.roles], scope: [...req.scope], authTime: req.auth_time || now,
  }, req.message);
  await c.users.transaction(async (tx) => {
    userLoggedIn(tx.events, user, req.login_method);
  });
  return response;
}
