/**
 * @module @gatehouse/authn/domain/signup
 * `POST /v1/signup` (behaviour.md §3.2). With email verification on, the user is created unverified
 * and a `basic_auth_signup` link is mailed (no tokens), both after the answer so a taken address
 * takes the same time (issue 30 §6); otherwise the MFA gate (§4.1) decides.
 */
import { randomUUID } from 'node:crypto';
import { assertSmsCountryAllowed, sendCapsOf } from '@gatehouse/auth';
import { AppError } from '@gatehouse/errors';
import { hashPassword } from '@gatehouse/crypto';
import type { UserRecord } from '../storage/ports.ts';
import { userSignedUp } from '../events.ts';
import type { Audit, AuthnContext, MfaChallenges } from './deps.ts';
import type { AuthOutcome } from './issue.ts';
import { passMfaGate } from './mfa-gate.ts';
import { checkRedirectUri } from './redirect.ts';
import { DEFAULT_SCOPE, grantedRoles, selfServiceRoles, type GrantRequest } from './roles.ts';
import { PROFILE_FIELDS, type ProfileInput } from './user.ts';
import { claimLinkMail, issueLink, verifyEmailLink } from './verification.ts';
import {
  MAX_URL_CHARS, checkAppData, checkPasswordPolicy, normaliseEmail, normaliseList, normalisePhone, optText, type Opt,
} from './validation.ts';

const invalid = (m: string) => new AppError('invalid_argument', m);
const precondition = (m: string) => new AppError('failed_precondition', m);

/** behaviour.md §9 */
export const SIGNED_UP = 'Signed up successfully.';
/** behaviour.md §3.2: the answer to an email signup with verification on, fresh or duplicate. */
export const VERIFICATION_SENT = 'Verification email has been sent. Please check your inbox';

/**
 * A signup request: an email or a phone number, the password twice, the optional profile, and
 * self-service roles (behaviour.md §3.1; none: `--default-roles`).
 */
export interface SignupRequest extends ProfileInput, GrantRequest {
  password?: Opt<string>;
  confirmPassword?: Opt<string>;
  /** where the verification link leads (validated per behaviour.md §3.1) */
  redirectUri?: Opt<string>;
}

/** behaviour.md §3.2, §9: phone-only signup with phone verification on; a code went by SMS. */
export const PHONE_OTP_SENT = 'Please check the OTP in your inbox';

/**
 * Creates the account (`user.created`, `user.signup`) and logs it in, or, with email verification
 * on, mails a `basic_auth_signup` link instead; a duplicate email then gets the same answer and
 * nothing is created or sent (behaviour.md §0.2), in the same time: the account is looked up and
 * written after the answer ({@link signupWithVerification}, issue 30 §6).
 * Phone-only with phone verification on: the user is created with the phone unverified, and the mfa
 * service texts a 600 s code and opens an MFA session (`mfa` cookie); verify_otp completes it.
 * @param mfa the mfa service's challenges for this call (the gate, phone verification); null without
 *   the mfa service
 * @param audit builds this call's `user.signup` audit event, emitted with the account when email
 *   verification is on (otherwise the caller records it for `createdUserId`)
 * @returns `Signed up successfully.` with tokens and the session cookie, {@link VERIFICATION_SENT}
 *   with nothing issued and no `createdUserId` (the account is written after the answer), {@link PHONE_OTP_SENT} with the mobile OTP screen, or the gate's offer
 *   (`Proceed to mfa setup`)
 * @throws AppError `invalid_argument` (no identifier, a field over its length, the password rules,
 *   an invalid email or phone, roles, redirect URI or app_data, a taken identifier; with email
 *   verification on a taken email is no error, and a taken phone is one only beside a free email);
 *   `failed_precondition` for a disabled method; `unavailable` for phone verification without the
 *   mfa service; mfa's codes when it cannot open the challenge (the account then exists unverified,
 *   and a password login texts a new code, §3.3 step 8)
 */
export async function signup(c: AuthnContext, mfa: MfaChallenges | null, req: SignupRequest, audit?: Audit): Promise<AuthOutcome> {
  const o = c.options;
  // every field's own rule first: a field over its length is a 400 whatever else is wrong
  const rawEmail = optText('email', req.email, 320);
  const rawPhone = optText('phone_number', req.phoneNumber, 64);
  const password = optText('password', req.password, 1024);
  const confirm = optText('confirm_password', req.confirmPassword, 1024);
  const profile = Object.fromEntries(PROFILE_FIELDS.map(([field, key]) => [key, optText(field, req[key])?.trim() || null]));
  const picture = optText('picture', req.picture, MAX_URL_CHARS)?.trim() || null;
  const rolesReq = normaliseList('roles', req.roles);
  const scopeReq = normaliseList('scope', req.scope);
  const redirectUri = optText('redirect_uri', req.redirectUri, MAX_URL_CHARS);
  const state = optText('state', req.state, MAX_URL_CHARS);
  const appData = checkAppData(req.appData);

  const hasEmail = rawEmail !== undefined && rawEmail.trim() !== '';
  const hasPhone = rawPhone !== undefined && rawPhone.trim() !== '';
  if (!hasEmail && !hasPhone) throw invalid('email or phone number is required');
  if (!o.enableSignup) throw precondition('signup is disabled for this instance');
  if (hasEmail && !o.enableBasicAuthentication) throw precondition('basic authentication is disabled for this instance');
  if (!hasEmail && !o.enableMobileBasicAuthentication) throw precondition('mobile basic authentication is disabled for this instance');
  // a missing field is named, not reported as a mismatch (issue 15: validation messages name the missing field)
  if (password === undefined || password === '') throw invalid('password is required');
  if (confirm === undefined || confirm === '') throw invalid('confirm_password is required');
  if (password !== confirm) throw invalid('password and confirm password does not match');
  checkPasswordPolicy(password, o.enableStrongPassword);
  const email = hasEmail ? normaliseEmail(rawEmail) : null;
  const phone = hasPhone ? normalisePhone(rawPhone) : null;
  const roles = selfServiceRoles(o, rolesReq);
  const redirect = checkRedirectUri(o, redirectUri);

  const emailVerificationPath = email !== null && o.enableEmailVerification;
  const phoneVerificationPath = email === null && o.enablePhoneVerification;
  if (phoneVerificationPath && !mfa) throw new AppError('unavailable', 'phone verification needs the mfa service');
  // the verification SMS could not go to this number: refused before the account exists (issue 30 §2)
  if (phoneVerificationPath) assertSmsCountryAllowed(sendCapsOf(o), phone!);
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

  if (emailVerificationPath) {
    await signupWithVerification(c, user, { redirectUri: redirect, state: state ?? null, scope: scopeReq ?? null }, audit);
    return { message: VERIFICATION_SENT, issued: null };
  }
  await c.users.transaction(async (tx) => {
    if (email !== null) await tx.users.lockIdentifier('email', email);
    if (phone !== null) await tx.users.lockIdentifier('phone', phone);
    if (email !== null && (await tx.users.findByEmail(email))) throw invalid('user with given email already exists');
    if (phone !== null && (await tx.users.findByPhone(phone))) throw invalid('user with given phone number already exists');
    await tx.users.create(user);
    userSignedUp(tx.events, user, user.signupMethods);
  });
  const grant = { loginMethod: user.signupMethods, roles: grantedRoles(o, user.roles, rolesReq), scope: scopeReq ?? [...DEFAULT_SCOPE], authTime: now };
  if (phoneVerificationPath) {
    await mfa!.openOtp({ channel: 'sms', user, grant, state: state ?? null, signupVerification: true });
    return { message: PHONE_OTP_SENT, issued: null, mobileOtpSent: true, createdUserId: user.id };
  }

  // the MFA gate (behaviour.md §3.2: a new user has no factor and has never skipped)
  const outcome = await passMfaGate(c, mfa, { user, grant, state: state ?? null, issuedMessage: SIGNED_UP, emitLogin: false });
  return { ...outcome, createdUserId: user.id };
}

/** Where the verification link of {@link signupWithVerification} leads, and what it carries. */
interface VerificationTarget {
  redirectUri: string;
  state: string | null;
  scope: string[] | null;
}

/**
 * Email signup with verification on (behaviour.md §3.2): a fresh and a taken address get the same
 * answer (§0.2) in the same time (issue 30 §6), so before the answer only what both share runs: the
 * password hash (done by the caller), the claim of the link mail (its caps answer 429 alike), and,
 * when a phone number comes along, its uniqueness (§3.2: always a 400, checked after the email, so
 * only beside a free email; phone numbers are enumerable through signup). The email's lookup, the
 * account, its `user.created` and `user.signup` events, the `basic_auth_signup` link mail and the
 * `user.signup` audit event commit together after the answer, as forgot_password and
 * magic_link_login do; a taken email there creates and sends nothing.
 * @param user the account to create, its email unverified
 * @throws AppError `resource_exhausted` from the address's send caps; `invalid_argument` `user with
 *   given phone number already exists`
 */
async function signupWithVerification(c: AuthnContext, user: UserRecord, target: VerificationTarget, audit?: Audit): Promise<void> {
  const email = user.email!;
  const phone = user.phoneNumber;
  const claim = await claimLinkMail(c, email, 'basic_auth_signup');
  if (phone !== null && (await c.users.findByPhone(phone)) && !(await c.users.findByEmail(email))) {
    throw invalid('user with given phone number already exists');
  }
  await c.afterAnswer(() => c.users.transaction(async (tx) => {
    await tx.users.lockIdentifier('email', email);
    if (phone !== null) await tx.users.lockIdentifier('phone', phone);
    // taken (or, for the phone, taken since the answer): nothing is created or sent
    const taken = (await tx.users.findByEmail(email)) !== null || (phone !== null && (await tx.users.findByPhone(phone)) !== null);
    c.logger.debug({ created: !taken }, 'signup with email verification');
    if (taken) return;
    await tx.users.create(user);
    userSignedUp(tx.events, user, user.signupMethods);
    await issueLink(c, tx, {
      purpose: 'basic_auth_signup', user, redirectUri: target.redirectUri, state: target.state, scope: target.scope,
      linkOf: (token, r) => verifyEmailLink(c.options.url, token, r),
    }, claim);
    if (audit) {
      tx.events.emit('audit.recorded', audit('user.signup', {
        actor: { type: 'user', id: user.id, email }, resourceType: 'user', resourceId: user.id, details: {}, at: user.createdAt,
      }));
    }
  }));
}
