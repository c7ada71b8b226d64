/**
 * @module @gatehouse/authn/domain/signup
 * `POST /v1/signup` (behaviour.md §3.2). With email verification on, the user is created unverified
 * and a `basic_auth_signup` link is mailed (no tokens). The MFA gate (§4.1) is not wired yet: a
 * successful signup without verification issues tokens.
 */
import { randomUUID } from 'node:crypto';
import { AppError } from '@gatehouse/errors';
import { hashPassword } from '@gatehouse/crypto';
import type { CallContext } from '@gatehouse/rpc';
import type { UserRecord } from '../storage/ports.ts';
import { emptyAuthResponse, type AuthResponse } from './auth-response.ts';
import type { AuthnContext } from './deps.ts';
import { openSessionAndRespond } from './issue.ts';
import { checkRedirectUri } from './redirect.ts';
import { DEFAULT_SCOPE, grantedRoles, selfServiceRoles } from './roles.ts';
import { userSignedUp } from '../events.ts';
import { PROFILE_FIELDS } from './user.ts';
import { issueLink, verifyEmailLink } from './verification.ts';
import {
  MAX_URL_CHARS, asObject, checkPasswordPolicy, normaliseEmail, normalisePhone, optAppData, optBool, optString, optStringList,
} from './validation.ts';

const invalid = (m: string) => new AppError('invalid_argument', m);
const precondition = (m: string) => new AppError('failed_precondition', m);

/** behaviour.md §3.2: the answer to an email signup with verification on, fresh or duplicate. */
export const VERIFICATION_SENT = 'Verification email has been sent. Please check your inbox';

/** Phone-only signup with phone verification needs the SMS OTP leg of the mfa service (not in this release). */
function phoneVerificationNotAvailable(): never {
  throw new AppError('unimplemented', 'signup with phone verification is not available yet');
}

export async function signup(c: AuthnContext, ctx: CallContext, raw: unknown): Promise<AuthResponse> {
  const o = c.options;
  const req = asObject(raw);
  // Types first: a wrong JSON type is a 400 whatever else is wrong.
  const rawEmail = optString(req, 'email', 320);
  const rawPhone = optString(req, 'phone_number', 64);
  const password = optString(req, 'password', 1024);
  const confirm = optString(req, 'confirm_password', 1024);
  const profile = Object.fromEntries(PROFILE_FIELDS.map(([wire, key]) => [key, optString(req, wire)?.trim() || null]));
  const picture = optString(req, 'picture', MAX_URL_CHARS)?.trim() || null;
  const rolesReq = optStringList(req, 'roles');
  const scopeReq = optStringList(req, 'scope');
  const redirectUri = optString(req, 'redirect_uri', MAX_URL_CHARS);
  const state = optString(req, 'state', MAX_URL_CHARS);
  const appData = optAppData(req);
  optBool(req, 'is_multi_factor_auth_enabled'); // accepted and ignored (graphql.md D5)

  const hasEmail = rawEmail !== undefined && rawEmail.trim() !== '';
  const hasPhone = rawPhone !== undefined && rawPhone.trim() !== '';
  if (!hasEmail && !hasPhone) throw invalid('email or phone number is required');
  if (!o.enableSignup) throw precondition('signup is disabled for this instance');
  if (hasEmail && !o.enableBasicAuthentication) throw precondition('basic authentication is disabled for this instance');
  if (!hasEmail && !o.enableMobileBasicAuthentication) throw precondition('mobile basic authentication is disabled for this instance');
  if (password === undefined || confirm === undefined || password !== confirm) throw invalid('password and confirm password does not match');
  checkPasswordPolicy(password, o.enableStrongPassword);
  const email = hasEmail ? normaliseEmail(rawEmail) : null;
  const phone = hasPhone ? normalisePhone(rawPhone) : null;
  const roles = selfServiceRoles(o, rolesReq);
  const redirect = checkRedirectUri(o, redirectUri);

  const emailVerificationPath = email !== null && o.enableEmailVerification;
  const phoneVerificationPath = email === null && o.enablePhoneVerification;
  const passwordHash = await hashPassword(password);
  const now = c.now();
  const user: UserRecord = {
    id: randomUUID(),
    email,
    emailVerifiedAt: email !== null && !o.enableEmailVerification ? now : null,
    passwordHash,
    signupMethods: email !== null ? 'basic_auth' : 'mobile_basic_auth',
    givenName: profile.givenName ?? null,
    familyName: profile.familyName ?? null,
    middleName: profile.middleName ?? null,
    nickname: profile.nickname ?? null,
    gender: profile.gender ?? null,
    birthdate: profile.birthdate ?? null,
    picture,
    phoneNumber: phone,
    phoneNumberVerifiedAt: phone !== null && !o.enablePhoneVerification ? now : null,
    roles,
    createdAt: now,
    updatedAt: now,
    revokedTimestamp: null,
    deactivatedAt: null,
    isMultiFactorAuthEnabled: null,
    hasSkippedMfaSetupAt: null,
    mfaLockedAt: null,
    appData: appData ?? null,
  };

  const created = await c.users.transaction(async (tx) => {
    if (email !== null) await tx.users.lockIdentifier('email', email);
    if (phone !== null) await tx.users.lockIdentifier('phone', phone);
    if (email !== null && (await tx.users.findByEmail(email))) {
      // verification on: answer exactly like a fresh signup, create and send nothing (§0.2)
      if (emailVerificationPath) return false;
      throw invalid('user with given email already exists');
    }
    if (phone !== null && (await tx.users.findByPhone(phone))) throw invalid('user with given phone number already exists');
    if (phoneVerificationPath) phoneVerificationNotAvailable();
    await tx.users.create(user);
    userSignedUp(tx.events, user, user.signupMethods);
    if (emailVerificationPath) {
      await issueLink(c, tx, {
        purpose: 'basic_auth_signup', user, redirectUri: redirect, state: state ?? null, scope: scopeReq ?? null,
        linkOf: (token, r) => verifyEmailLink(o.url, token, r),
      });
    }
    return true;
  });
  if (emailVerificationPath) {
    c.logger.debug({ created }, 'signup with email verification');
    return emptyAuthResponse(VERIFICATION_SENT);
  }

  const { response } = await openSessionAndRespond(c, ctx, user, {
    loginMethod: user.signupMethods,
    roles: grantedRoles(o, user.roles, rolesReq),
    scope: scopeReq ?? [...DEFAULT_SCOPE],
    authTime: now,
  }, 'Signed up successfully.');
  return response;
}
