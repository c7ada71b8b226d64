/**
 * @module @gatehouse/authn/domain/password-reset
 * `forgot_password` and `reset_password` (behaviour.md §3.4), email-link legs. The SMS OTP legs
 * (a 300 s OTP and a `password_reset` MFA session) belong to the mfa service, which is not part of
 * this release: the phone path of forgot_password answers `unimplemented` once SMS is configured, and
 * an OTP reset always fails with 401 `invalid session` (no MFA session can exist).
 */
import { AppError } from '@gatehouse/errors';
import { hashPassword } from '@gatehouse/crypto';
import type { AuthnContext } from './deps.ts';
import { lockoutKey } from './lockout.ts';
import { isEmailServiceEnabled, isSmsServiceEnabled } from './options.ts';
import { checkRedirectUri } from './redirect.ts';
import { isRevoked, type ContactInput } from './user.ts';
import { checkPasswordPolicy, MAX_URL_CHARS, normaliseEmail, normalisePhone, optText, type Opt } from './validation.ts';
import { findRedeemable, issueLink, resetPasswordLink, userOf } from './verification.ts';
import { USER_REVOKED } from './verify-email.ts';

export const RESET_LINK_SENT =
  "If an account exists for this email, a password reset link has been sent. Please check your inbox. If you don't receive it within a few minutes, double-check the email address for typos.";
export const PASSWORD_UPDATED = 'Password updated successfully.';

const invalid = (m: string) => new AppError('invalid_argument', m);
const precondition = (m: string) => new AppError('failed_precondition', m);

/** Where reset links point: the request's redirect_uri, else `--reset-password-url`, else `<url>/app/reset-password`. */
function resetTarget(c: AuthnContext, requested: string | undefined): string {
  if (requested !== undefined && requested.trim() !== '') return checkRedirectUri(c.options, requested);
  return c.options.resetPasswordUrl || `${c.options.url}/app/reset-password`;
}

/** A forgot_password request: an email, else a phone number. */
export interface ForgotPasswordRequest extends ContactInput {
  state?: Opt<string>;
  /** where the mailed link points (validated per behaviour.md §3.1) */
  redirectUri?: Opt<string>;
}

/** A reset_password request: a link token, or an OTP with the phone number; the new password twice. */
export interface ResetPasswordRequest {
  token?: Opt<string>;
  otp?: Opt<string>;
  phoneNumber?: Opt<string>;
  password?: Opt<string>;
  confirmPassword?: Opt<string>;
}

/**
 * `POST /v1/forgot_password`: the answer is always {@link RESET_LINK_SENT}. Email: mails a 30 min
 * `forgot_password` link `<redirect>?token=…` to an existing, active account (at most one per 60 s)
 * and answers the same text whether or not the account exists.
 * @throws AppError `invalid_argument` `email or phone number is required` / `invalid email address` /
 *   `invalid phone number` / `invalid redirect URI`; `failed_precondition` for a disabled login
 *   method, `email service not enabled`, `SMS service not enabled`; `unimplemented` for the SMS leg
 */
export async function forgotPassword(c: AuthnContext, req: ForgotPasswordRequest): Promise<void> {
  const o = c.options;
  const rawEmail = optText('email', req.email, 320);
  const rawPhone = optText('phone_number', req.phoneNumber, 64);
  optText('state', req.state, MAX_URL_CHARS);
  const redirectReq = optText('redirect_uri', req.redirectUri, MAX_URL_CHARS);
  const hasEmail = rawEmail !== undefined && rawEmail.trim() !== '';
  const hasPhone = rawPhone !== undefined && rawPhone.trim() !== '';
  if (!hasEmail && !hasPhone) throw invalid('email or phone number is required');
  if (!hasEmail) {
    if (!o.enableMobileBasicAuthentication) throw precondition('mobile basic authentication is disabled for this instance');
    if (!isSmsServiceEnabled(o)) throw precondition('SMS service not enabled');
    normalisePhone(rawPhone!);
    throw new AppError('unimplemented', 'password reset by SMS is not available yet');
  }
  if (!o.enableBasicAuthentication) throw precondition('basic authentication is disabled for this instance');
  if (!isEmailServiceEnabled(o)) throw precondition('email service not enabled');
  const email = normaliseEmail(rawEmail!);
  const target = resetTarget(c, redirectReq);

  await c.users.transaction(async (tx) => {
    const user = await tx.users.findByEmail(email);
    // unknown or revoked: the same answer, nothing sent (behaviour.md §3.1)
    if (!user || isRevoked(user)) return;
    await issueLink(c, tx, {
      purpose: 'forgot_password', user, redirectUri: target,
      linkOf: (token) => resetPasswordLink(target, token),
    });
  });
}

/**
 * `POST /v1/reset_password`, answered {@link PASSWORD_UPDATED}. Token leg:
 * a valid `forgot_password` or `invite_member` token; sets the password, verifies the email, consumes
 * the token, deletes every session of the user and clears the login lockout. No tokens, no cookies.
 * @throws AppError `invalid_argument` `token or otp is required` / `phone number is required` /
 *   `invalid token` / `passwords don't match` / a password-policy message; `unauthenticated`
 *   `invalid session` for the OTP leg; `failed_precondition` `user access has been revoked`
 */
export async function resetPassword(c: AuthnContext, req: ResetPasswordRequest): Promise<{ userId: string }> {
  const o = c.options;
  const token = optText('token', req.token, 512);
  const otp = optText('otp', req.otp, 64);
  const phone = optText('phone_number', req.phoneNumber, 64);
  const password = optText('password', req.password, 1024);
  const confirm = optText('confirm_password', req.confirmPassword, 1024);
  const hasToken = token !== undefined && token.trim() !== '';
  if (!hasToken && (otp === undefined || otp.trim() === '')) throw invalid('token or otp is required');
  if (!hasToken) {
    if (phone === undefined || phone.trim() === '') throw invalid('phone number is required');
    // the password_reset MFA session is opened by the mfa service, which this release does not run
    throw new AppError('unauthenticated', 'invalid session');
  }
  const now = c.now();
  // the token is checked first (read-only), so a bad token never reveals the password rules
  await c.users.transaction((tx) => findRedeemable(c, tx, token, ['forgot_password', 'invite_member'], 'invalid token'));
  if (password === undefined || confirm === undefined || password !== confirm) throw invalid("passwords don't match");
  checkPasswordPolicy(password, o.enableStrongPassword);
  const passwordHash = await hashPassword(password);

  const user = await c.users.transaction(async (tx) => {
    const r = await findRedeemable(c, tx, token, ['forgot_password', 'invite_member'], 'invalid token');
    const u = await userOf(tx, r);
    if (!u || u.email !== r.email) throw invalid('invalid token');
    if (isRevoked(u)) throw precondition(USER_REVOKED);
    if (!(await tx.verifications.consume(r.id, now))) throw invalid('invalid token');
    const next = { ...u, passwordHash, emailVerifiedAt: u.emailVerifiedAt ?? now, updatedAt: now };
    await tx.users.update(next);
    return next;
  });
  // behaviour.md §2.2: every session goes before the response is sent
  await c.sessions.deleteAllForUser(user.id);
  if (user.email) await c.lockout.clear(lockoutKey('email', user.email));
  if (user.phoneNumber) await c.lockout.clear(lockoutKey('phone', user.phoneNumber));
  return { userId: user.id };
}
