/**
 * @module @gatehouse/authn/domain/password-reset
 * `forgot_password` and `reset_password` (behaviour.md §3.4): the email-link legs, and the phone legs
 * (issue 16), where the mfa service texts a 300 s code and holds a `password_reset` MFA session, and
 * reset_password with `otp` + `phone_number` asks it for the verdict.
 */
import { AppError } from '@gatehouse/errors';
import { hashPassword } from '@gatehouse/crypto';
import type { AuthnTx, UserRecord } from '../storage/ports.ts';
import type { Audit, AuthnContext, MfaChallenges, MfaVerdict } from './deps.ts';
import { lockoutKey } from './lockout.ts';
import { isEmailServiceEnabled, isSmsServiceEnabled } from './options.ts';
import { checkRedirectUri } from './redirect.ts';
import { logoutRelyingParties } from './rp-logout.ts';
import { blankUser, isRevoked, type ContactInput } from './user.ts';
import { checkPasswordPolicy, MAX_URL_CHARS, normaliseEmail, normalisePhone, optText, type Opt } from './validation.ts';
import { claimLinkMail, findRedeemable, issueLink, resetPasswordLink, userOf } from './verification.ts';
import { USER_REVOKED } from './verify-email.ts';

export const RESET_LINK_SENT =
  "If an account exists for this email, a password reset link has been sent. Please check your inbox. If you don't receive it within a few minutes, double-check the email address for typos.";
export const PASSWORD_UPDATED = 'Password updated successfully.';
/** behaviour.md §3.4, §9: the phone leg of forgot_password, for known and unknown numbers alike. */
export const RESET_OTP_SENT = 'Please enter the OTP sent to your phone number and change your password.';
/** behaviour.md §4.3: the longest code input accepted (TOTP and recovery codes share the field). */
const MAX_OTP_CHARS = 16;

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
 * `POST /v1/forgot_password`. Email: mails a 30 min `forgot_password` link `<redirect>?token=…` to an
 * existing, active account (at most one per 60 s) and answers {@link RESET_LINK_SENT} whether or not
 * the account exists. Phone: the mfa service texts a 300 s code and opens a `password_reset` MFA
 * session (`mfa` cookie); an unknown or revoked number gets the same answer and a decoy session that
 * no code satisfies (behaviour.md §3.4). Audit `user.forgot_password_requested` for a real account.
 * @param mfa the mfa service's challenges for this call (the phone leg needs it)
 * @returns which leg ran: `email` ({@link RESET_LINK_SENT}) or `phone` ({@link RESET_OTP_SENT})
 * @throws AppError `invalid_argument` `email or phone number is required` / `invalid email address` /
 *   `invalid phone number` / `invalid redirect URI`; `failed_precondition` for a disabled login
 *   method, `email service not enabled`, `SMS service not enabled`
 */
export async function forgotPassword(
  c: AuthnContext, req: ForgotPasswordRequest, mfa: MfaChallenges | null = null, audit?: Audit,
): Promise<'email' | 'phone'> {
  const o = c.options;
  const rawEmail = optText('email', req.email, 320);
  const rawPhone = optText('phone_number', req.phoneNumber, 64);
  const state = optText('state', req.state, MAX_URL_CHARS) ?? null;
  const redirectReq = optText('redirect_uri', req.redirectUri, MAX_URL_CHARS);
  const hasEmail = rawEmail !== undefined && rawEmail.trim() !== '';
  const hasPhone = rawPhone !== undefined && rawPhone.trim() !== '';
  if (!hasEmail && !hasPhone) throw invalid('email or phone number is required');
  if (!hasEmail) {
    if (!o.enableMobileBasicAuthentication) throw precondition('mobile basic authentication is disabled for this instance');
    if (!isSmsServiceEnabled(o) || !mfa) throw precondition('SMS service not enabled');
    await forgotPasswordByPhone(c, mfa, normalisePhone(rawPhone!), state, audit);
    return 'phone';
  }
  if (!o.enableBasicAuthentication) throw precondition('basic authentication is disabled for this instance');
  if (!isEmailServiceEnabled(o)) throw precondition('email service not enabled');
  const email = normaliseEmail(rawEmail!);
  const target = resetTarget(c, redirectReq);
  // claimed for every address, known or not, so the answer (and a 429 cap) never tells them apart
  const claim = await claimLinkMail(c, email, 'forgot_password');

  // the lookup and the mail happen after the answer, so its timing says nothing about the account (issue 30 §6)
  await c.afterAnswer(() => c.users.transaction(async (tx) => {
    const user = await tx.users.findByEmail(email);
    // unknown or revoked: the same answer, nothing sent (behaviour.md §3.1)
    if (!user || isRevoked(user)) return;
    await issueLink(c, tx, {
      purpose: 'forgot_password', user, redirectUri: target,
      linkOf: (token) => resetPasswordLink(target, token),
    }, claim);
    if (audit) {
      tx.events.emit('audit.recorded', audit('user.forgot_password_requested', {
        actor: { type: 'user', id: user.id, email: user.email }, resourceType: 'user', resourceId: user.id, details: { channel: 'email' }, at: c.now(),
      }));
    }
  }));
  return 'email';
}

/**
 * The phone leg of forgot_password: a real, active account gets a texted code and a
 * `password_reset` MFA session; anyone else the same cookie on a decoy session (behaviour.md §3.4).
 */
async function forgotPasswordByPhone(c: AuthnContext, mfa: MfaChallenges, phone: string, state: string | null, audit?: Audit): Promise<void> {
  const now = c.now();
  const user = await c.users.findByPhone(phone);
  const grant = { loginMethod: 'mobile_basic_auth', roles: [], scope: [], authTime: now };
  if (!user || isRevoked(user)) {
    // a throwaway id and the number given: nothing is sent, no code matches, the answer is the same
    await mfa.openOtp({ channel: 'sms', purpose: 'password_reset', decoy: true, user: { ...blankUser(now), phoneNumber: phone }, grant, state });
    return;
  }
  await mfa.openOtp({ channel: 'sms', purpose: 'password_reset', user, grant, state });
  if (audit) {
    await c.users.transaction(async (tx) => {
      tx.events.emit('audit.recorded', audit('user.forgot_password_requested', {
        actor: { type: 'user', id: user.id, email: user.email }, resourceType: 'user', resourceId: user.id, details: { channel: 'sms' }, at: now,
      }));
    });
  }
}

/**
 * `POST /v1/reset_password`, answered {@link PASSWORD_UPDATED}. Token leg: a valid `forgot_password`
 * or `invite_member` token; sets the password, verifies the email and consumes the token. OTP leg
 * (`otp` + `phone_number`, the `password_reset` MFA session of forgot_password by phone): the
 * passwords are checked first, so a typo never uses up the session; then mfa's verdict on the code
 * (lockout §4.4) consumes the session, and the password is set and the phone verified. Both legs
 * delete every session of the user and clear the login lockout; audit `user.password_reset`. No
 * tokens, no cookies.
 * @param mfa the mfa service's challenges for this call (the OTP leg needs it)
 * @throws AppError `invalid_argument` `token or otp is required` / `phone number is required` /
 *   `invalid token` / `passwords don't match` / a password-policy message / `otp must be at most 16
 *   characters` / `invalid otp` / `otp expired`; `unauthenticated` `invalid session`;
 *   `resource_exhausted` after 5 wrong codes; `failed_precondition` `user access has been revoked`
 */
export async function resetPassword(c: AuthnContext, req: ResetPasswordRequest, mfa: MfaChallenges | null = null, audit?: Audit): Promise<void> {
  const o = c.options;
  const token = optText('token', req.token, 512);
  const otp = optText('otp', req.otp, MAX_OTP_CHARS);
  const phone = optText('phone_number', req.phoneNumber, 64);
  const password = optText('password', req.password, 1024);
  const confirm = optText('confirm_password', req.confirmPassword, 1024);
  const hasToken = token !== undefined && token.trim() !== '';
  if (!hasToken && (otp === undefined || otp.trim() === '')) throw invalid('token or otp is required');
  if (!hasToken) {
    if (phone === undefined || phone.trim() === '') throw invalid('phone number is required');
    // without the mfa cookie there is no password_reset MFA session (mfa decides on a present one)
    if (!mfa?.hasSession()) throw new AppError('unauthenticated', 'invalid session');
  }
  // the token is checked first (read-only), so a bad token never reveals the password rules
  if (hasToken) await c.users.transaction((tx) => findRedeemable(c, tx, token, ['forgot_password', 'invite_member'], 'invalid token'));
  if (password === undefined || confirm === undefined || password !== confirm) throw invalid("passwords don't match");
  checkPasswordPolicy(password, o.enableStrongPassword);
  const passwordHash = await hashPassword(password);
  const user = hasToken
    ? await setPasswordByToken(c, token, passwordHash, audit)
    : await setPasswordByOtp(c, await mfa!.verifyOtp({ otp, phoneNumber: phone, purpose: 'password_reset' }), passwordHash, audit);
  // behaviour.md §2.2: every session goes before the response is sent
  await c.sessions.deleteAllForUser(user.id);
  // issue 34 §6: OIDC Back-Channel / Front-Channel Logout 1.0: the relying parties hear it
  await logoutRelyingParties(c, { userId: user.id });
  if (user.email) await c.lockout.clear(lockoutKey('email', user.email));
  if (user.phoneNumber) await c.lockout.clear(lockoutKey('phone', user.phoneNumber));
}

/** `user.password_reset` for `u` (behaviour.md §5.7). */
function auditReset(tx: AuthnTx, audit: Audit | undefined, u: UserRecord, via: 'token' | 'otp', at: number): void {
  if (!audit) return;
  tx.events.emit('audit.recorded', audit('user.password_reset', {
    actor: { type: 'user', id: u.id, email: u.email }, resourceType: 'user', resourceId: u.id, details: { via }, at,
  }));
}

/** The token leg: redeems the token, sets the password and verifies the email. */
async function setPasswordByToken(c: AuthnContext, token: string, passwordHash: string, audit?: Audit): Promise<UserRecord> {
  const now = c.now();
  return c.users.transaction(async (tx) => {
    const r = await findRedeemable(c, tx, token, ['forgot_password', 'invite_member'], 'invalid token');
    const u = await userOf(tx, r);
    if (!u || u.email !== r.email) throw invalid('invalid token');
    if (isRevoked(u)) throw precondition(USER_REVOKED);
    if (!(await tx.verifications.consume(r.id, now))) throw invalid('invalid token');
    const next = { ...u, passwordHash, emailVerifiedAt: u.emailVerifiedAt ?? now, updatedAt: now };
    await tx.users.update(next);
    auditReset(tx, audit, next, 'token', now);
    return next;
  });
}

/**
 * The OTP leg, after mfa proved the code of a `password_reset` session: sets the password and
 * verifies the phone the code was texted to, if it is still the user's.
 */
async function setPasswordByOtp(c: AuthnContext, v: MfaVerdict, passwordHash: string, audit?: Audit): Promise<UserRecord> {
  const now = c.now();
  return c.users.transaction(async (tx) => {
    const u = await tx.users.findById(v.userId);
    // deleted, or the number changed since the code was sent: the session no longer names this account
    if (!u || v.verifiedChannel !== 'sms' || u.phoneNumber !== v.verifiedContact) throw new AppError('unauthenticated', 'invalid session');
    if (isRevoked(u)) throw precondition(USER_REVOKED);
    const next = { ...u, passwordHash, phoneNumberVerifiedAt: u.phoneNumberVerifiedAt ?? now, updatedAt: now };
    await tx.users.update(next);
    auditReset(tx, audit, next, 'otp', now);
    return next;
  });
}
