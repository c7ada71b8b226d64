/**
 * @module @gatehouse/authn/domain/login
 * `POST /v1/login` (behaviour.md §3.3). An unverified email with SMTP configured gets an emailed code,
 * an unverified phone with SMS configured a texted one, and an MFA session from the mfa service (step
 * 8), completed by verify_otp; otherwise the MFA gate (step 9, §4.1) decides between tokens and a
 * challenge or offer.
 */
import { AppError } from '@gatehouse/errors';
import { dummyVerify, hashPassword, verifyPassword } from '@gatehouse/crypto';
import type { AuthnTx } from '../storage/ports.ts';
import type { AuthnContext, MfaChallenges } from './deps.ts';
import type { AuthOutcome } from './issue.ts';
import { MFA_LOCKED_MESSAGE, passMfaGate } from './mfa-gate.ts';
import { claimLoginAttempt, lockoutKey } from './lockout.ts';
import { isEmailServiceEnabled, isSmsServiceEnabled } from './options.ts';
import { DEFAULT_SCOPE, grantedRoles, type GrantRequest } from './roles.ts';
import { isRevoked, type ContactInput } from './user.ts';
import { MAX_URL_CHARS, normaliseList, optText, type Opt } from './validation.ts';

/** behaviour.md §9 */
export const LOGGED_IN = 'Logged in successfully';
export const EMAIL_OTP_SENT = 'Please check email inbox for the OTP';
export const MOBILE_OTP_SENT = 'Please check text message for the OTP';
export const INVALID_CREDENTIALS = 'invalid credentials';
export { MFA_LOCKED_MESSAGE } from './mfa-gate.ts';

/** A password login: by email, else by phone number; the roles asked for are a subset of the user's (§2.1). */
export interface LoginRequest extends GrantRequest, ContactInput {
  password?: Opt<string>;
}

/**
 * Runs the steps of behaviour.md §3.3 in order: identifier, method enabled, lockout, password (one
 * answer for every failure, the same work whether or not the account exists), roles, MFA lock,
 * verified identifier, tokens (`user.login`).
 * @param mfa the mfa service's challenges for this call; null without the mfa service (step 8 then
 *   refuses as if no channel existed)
 * @returns `Logged in successfully` with tokens and the session cookie, {@link EMAIL_OTP_SENT} /
 *   {@link MOBILE_OTP_SENT} with nothing issued when a code was mailed or texted (step 8), or the
 *   gate's challenge/offer (step 9)
 * @throws AppError `invalid_argument` (no identifier, a field over its length, `invalid roles`);
 *   `failed_precondition` (a disabled method, the MFA lock, an unverified identifier);
 *   `resource_exhausted` (lockout, with `Retry-After`); `unauthenticated` `invalid credentials`
 */
export async function login(c: AuthnContext, mfa: MfaChallenges | null, req: LoginRequest): Promise<AuthOutcome> {
  const o = c.options;
  const rawEmail = optText('email', req.email, 320);
  const rawPhone = optText('phone_number', req.phoneNumber, 64);
  const password = optText('password', req.password, 1024) ?? '';
  const rolesReq = normaliseList('roles', req.roles);
  const scopeReq = normaliseList('scope', req.scope);
  const state = optText('state', req.state, MAX_URL_CHARS) ?? null;

  // 1. identifier; the email wins when both are given
  const email = rawEmail?.trim().toLowerCase() || null;
  const phone = email === null ? rawPhone?.trim() || null : null;
  if (email === null && phone === null) throw new AppError('invalid_argument', 'email or phone number is required');
  // 2. the login method is enabled
  if (email !== null && !o.enableBasicAuthentication) throw new AppError('failed_precondition', 'basic authentication is disabled for this instance');
  if (phone !== null && !o.enableMobileBasicAuthentication) throw new AppError('failed_precondition', 'mobile basic authentication is disabled for this instance');
  // 3. lockout, even with the right password: the attempt is recorded before it is judged, so
  // concurrent attempts cannot outrun the count (issue 30 §1)
  const key = email !== null ? lockoutKey('email', email) : lockoutKey('phone', phone!);
  await claimLoginAttempt(c.lockout, key, c.now());
  // 4. one answer for every failure, and the same work whether or not the account exists
  const user = email !== null ? await c.users.findByEmail(email) : await c.users.findByPhone(phone!);
  let check = { ok: false, needsRehash: false };
  if (user?.passwordHash) check = await verifyPassword(user.passwordHash, password);
  else await dummyVerify(password);
  if (!user || !check.ok || isRevoked(user)) {
    // the claim of step 3 stays as the failure
    c.logger.debug({ reason: user ? 'bad_password_or_revoked' : 'unknown_identifier' }, 'login refused');
    throw new AppError('unauthenticated', INVALID_CREDENTIALS);
  }
  // 5. success clears the counter; an outdated hash is upgraded below
  await c.lockout.clear(key);
  // 6. roles
  const roles = grantedRoles(o, user.roles, rolesReq);
  // 7. MFA lock
  if (user.mfaLockedAt !== null) throw new AppError('failed_precondition', MFA_LOCKED_MESSAGE);
  // 8. the identifier used must be verified; checked after the password, so it is no oracle
  const loginMethod = email !== null ? 'basic_auth' : 'mobile_basic_auth';
  const scope = scopeReq ?? [...DEFAULT_SCOPE];
  const newHash = check.needsRehash ? await hashPassword(password) : null;
  if (email !== null && user.emailVerifiedAt === null) {
    if (!isEmailServiceEnabled(o) || !mfa) throw new AppError('failed_precondition', 'email address is not verified');
    // the mfa service owns MFA sessions and codes: it mails the code and sets the `mfa` cookie;
    // verify_otp then marks the email verified and issues tokens with this grant (§4.1)
    await mfa.openEmailOtp({ user, grant: { loginMethod, roles, scope, authTime: c.now() }, state });
    if (newHash) await c.users.transaction((tx) => upgradeHash(tx, user.id, newHash));
    return { message: EMAIL_OTP_SENT, issued: null, emailOtpSent: true };
  }
  if (phone !== null && user.phoneNumberVerifiedAt === null) {
    if (!isSmsServiceEnabled(o) || !mfa) throw new AppError('failed_precondition', 'phone number is not verified');
    // the code goes by SMS through the mfa service; verify_otp then marks the phone verified (§4.1)
    await mfa.openOtp({ channel: 'sms', user, grant: { loginMethod, roles, scope, authTime: c.now() }, state });
    if (newHash) await c.users.transaction((tx) => upgradeHash(tx, user.id, newHash));
    return { message: MOBILE_OTP_SENT, issued: null, mobileOtpSent: true };
  }
  if (newHash) await c.users.transaction((tx) => upgradeHash(tx, user.id, newHash));
  // 9. the MFA gate; 10. tokens (`user.login`)
  return passMfaGate(c, mfa, { user, grant: { loginMethod, roles, scope, authTime: c.now() }, state, issuedMessage: LOGGED_IN, emitLogin: true });
}

/** Step 5: an outdated hash (bcrypt, weaker argon2 parameters) is replaced after a successful check. */
async function upgradeHash(tx: AuthnTx, userId: string, newHash: string): Promise<void> {
  const current = await tx.users.findById(userId);
  if (current) await tx.users.update({ ...current, passwordHash: newHash });
}
