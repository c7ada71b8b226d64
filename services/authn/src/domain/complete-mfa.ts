/**
 * @module @gatehouse/authn/domain/complete-mfa
 * Issuing the withheld tokens once the mfa service has proven a challenge (behaviour.md §4.1 "no
 * gate", §4.3 verify_otp). authn is the one place sessions are issued (issue 14 §5).
 */
import { AppError } from '@gatehouse/errors';
import type { UserRecord } from '../storage/ports.ts';
import { userLoggedIn } from '../events.ts';
import type { Audit, AuthnContext, MfaChallenges, MfaVerdict, OtpAttempt } from './deps.ts';
import { openSession, type Issued } from './issue.ts';
import { MFA_LOCKED_MESSAGE } from './login.ts';
import { withEnrolled } from './mfa-gate.ts';
import { isRevoked } from './user.ts';
import { USER_REVOKED } from './verify-email.ts';

/** behaviour.md §9 */
export const OTP_VERIFIED = 'OTP verified successfully.';

/**
 * `POST /v1/verify_otp` (behaviour.md §4.3): asks mfa for the verdict on the caller's MFA session and
 * code, then issues the withheld tokens.
 * @param mfa the mfa service's challenges for this call; null without the mfa service
 * @throws AppError `failed_precondition` `MFA is not available` without the mfa service; mfa's codes
 *   (`unauthenticated` `invalid session`, `invalid_argument` `invalid otp`, `resource_exhausted`, ...);
 *   {@link completeMfaLogin}'s
 */
export async function verifyOtp(c: AuthnContext, mfa: MfaChallenges | null, attempt: OtpAttempt, audit?: Audit): Promise<Issued> {
  if (!mfa) throw new AppError('failed_precondition', 'MFA is not available');
  return withEnrolled(mfa, await completeMfaLogin(c, await mfa.verifyOtp(attempt), audit));
}

/**
 * Marks the contact the code was proven on as verified (an email code verifies the email, behaviour.md
 * §3.3 step 8, §4.3; a TOTP or recovery code proves none), opens a session with the grant stored in
 * the MFA session and the factor's `amr`, and emits `user.login` (and `user.mfa_enabled` when the
 * completion verified a new factor).
 * @returns the tokens and the session cookie
 * @throws AppError `not_found` `user not found` (deleted meanwhile); `failed_precondition`
 *   `user access has been revoked` or the MFA-lock message; `failed_precondition` when the proven
 *   address is no longer the user's (changed during the challenge); `invalid_argument` for an
 *   unknown channel
 */
export async function completeMfaLogin(c: AuthnContext, v: MfaVerdict, audit?: Audit): Promise<Issued> {
  if (v.verifiedChannel !== 'email' && v.verifiedChannel !== 'sms' && v.verifiedChannel !== '') {
    throw new AppError('invalid_argument', `unknown verified channel: ${v.verifiedChannel}`);
  }
  const now = c.now();
  const user = await c.users.transaction(async (tx) => {
    const u = await tx.users.findById(v.userId);
    if (!u) throw new AppError('not_found', 'user not found');
    if (isRevoked(u)) throw new AppError('failed_precondition', USER_REVOKED);
    if (u.mfaLockedAt !== null) throw new AppError('failed_precondition', MFA_LOCKED_MESSAGE);
    if (v.enrolledMethod && audit) {
      tx.events.emit('audit.recorded', audit('user.mfa_enabled', {
        actor: { type: 'user', id: u.id, email: u.email }, resourceType: 'user', resourceId: u.id, details: { method: v.enrolledMethod },
      }));
    }
    // TOTP and recovery codes prove no contact
    if (v.verifiedChannel === '') return u;
    const email = v.verifiedChannel === 'email';
    if ((email ? u.email : u.phoneNumber) !== v.verifiedContact) {
      throw new AppError('failed_precondition', `the ${email ? 'email address' : 'phone number'} the code was sent to is no longer the account's`);
    }
    const verified = email ? u.emailVerifiedAt : u.phoneNumberVerifiedAt;
    if (verified !== null) return u;
    const next: UserRecord = email ? { ...u, emailVerifiedAt: now, updatedAt: now } : { ...u, phoneNumberVerifiedAt: now, updatedAt: now };
    await tx.users.update(next);
    return next;
  });
  const issued = await openSession(c, user, { ...v.grant, authTime: v.grant.authTime || now });
  await c.users.transaction(async (tx) => {
    userLoggedIn(tx.events, user, v.grant.loginMethod);
  });
  return issued;
}
