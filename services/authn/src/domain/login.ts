/**
 * @module @gatehouse/authn/domain/login
 * `POST /v1/login` (behaviour.md §3.3). The MFA gate (§4.1) is not wired yet: step 9 passes. An
 * unverified email with SMTP configured gets an emailed code and an MFA session from the mfa service
 * (step 8), completed by verify_otp.
 */
import { AppError } from '@gatehouse/errors';
import { dummyVerify, hashPassword, verifyPassword } from '@gatehouse/crypto';
import type { CallContext } from '@gatehouse/rpc';
import { emptyAuthResponse, type AuthResponse } from './auth-response.ts';
import type { AuthnTx } from '../storage/ports.ts';
import type { AuthnContext } from './deps.ts';
import { openSessionAndRespond } from './issue.ts';
import { assertNotLocked, lockoutKey, recordLoginFailure } from './lockout.ts';
import { isEmailServiceEnabled, isSmsServiceEnabled } from './options.ts';
import { DEFAULT_SCOPE, grantedRoles } from './roles.ts';
import { userLoggedIn } from '../events.ts';
import { isRevoked, publicUser } from './user.ts';
import { MAX_URL_CHARS, asObject, optString, optStringList } from './validation.ts';

export const INVALID_CREDENTIALS = 'invalid credentials';
export const EMAIL_OTP_SENT = 'Please check email inbox for the OTP';
export const MFA_LOCKED_MESSAGE = "your account's multi-factor authentication is locked; contact your administrator to regain access";

export async function login(c: AuthnContext, ctx: CallContext, raw: unknown): Promise<AuthResponse> {
  const o = c.options;
  const req = asObject(raw);
  const rawEmail = optString(req, 'email', 320);
  const rawPhone = optString(req, 'phone_number', 64);
  const password = optString(req, 'password', 1024) ?? '';
  const rolesReq = optStringList(req, 'roles');
  const scopeReq = optStringList(req, 'scope');
  const state = optString(req, 'state', MAX_URL_CHARS) ?? null;

  // 1. identifier; the email wins when both are given
  const email = rawEmail?.trim().toLowerCase() || null;
  const phone = email === null ? rawPhone?.trim() || null : null;
  if (email === null && phone === null) throw new AppError('invalid_argument', 'email or phone number is required');
  // 2. the login method is enabled
  if (email !== null && !o.enableBasicAuthentication) throw new AppError('failed_precondition', 'basic authentication is disabled for this instance');
  if (phone !== null && !o.enableMobileBasicAuthentication) throw new AppError('failed_precondition', 'mobile basic authentication is disabled for this instance');
  // 3. lockout, even with the right password
  const key = email !== null ? lockoutKey('email', email) : lockoutKey('phone', phone!);
  await assertNotLocked(c.lockout, key, c.now());
  // 4. one answer for every failure, and the same work whether or not the account exists
  const user = email !== null ? await c.users.findByEmail(email) : await c.users.findByPhone(phone!);
  let check = { ok: false, needsRehash: false };
  if (user?.passwordHash) check = await verifyPassword(user.passwordHash, password);
  else await dummyVerify(password);
  if (!user || !check.ok || isRevoked(user)) {
    await recordLoginFailure(c.lockout, key, c.now());
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
    if (!isEmailServiceEnabled(o) || !c.mfa) throw new AppError('failed_precondition', 'email address is not verified');
    // the mfa service owns MFA sessions and codes: it mails the code and sets the `mfa` cookie;
    // verify_otp then marks the email verified and issues tokens with this grant (§4.1)
    await c.mfa.OpenOtpChallenge({
      user: publicUser(user), channel: 'email', purpose: 'login', login_method: loginMethod, roles, scope, state, auth_time: c.now(),
    }, ctx);
    if (newHash) await c.users.transaction((tx) => upgradeHash(tx, user.id, newHash));
    return { ...emptyAuthResponse(EMAIL_OTP_SENT), should_show_email_otp_screen: true };
  }
  if (phone !== null && user.phoneNumberVerifiedAt === null) {
    if (isSmsServiceEnabled(o)) throw new AppError('unimplemented', 'SMS OTP verification at login is not available yet');
    throw new AppError('failed_precondition', 'phone number is not verified');
  }
  // 10. tokens
  const { response } = await openSessionAndRespond(c, ctx, user, { loginMethod, roles, scope, authTime: c.now() }, 'Logged in successfully');
  await c.users.transaction(async (tx) => {
    if (newHash) await upgradeHash(tx, user.id, newHash);
    userLoggedIn(tx.events, user, loginMethod);
  });
  return response;
}

/** Step 5: an outdated hash (bcrypt, weaker argon2 parameters) is replaced after a successful check. */
async function upgradeHash(tx: AuthnTx, userId: string, newHash: string): Promise<void> {
  const current = await tx.users.findById(userId);
  if (current) await tx.users.update({ ...current, passwordHash: newHash });
}
