/**
 * @module @gatehouse/authn/domain/profile
 * `profile`, `update_profile` and `deactivate_account` (behaviour.md §3.5, §2.2, §4.7).
 */
import { AppError } from '@gatehouse/errors';
import { clearMfaCookie, clearSessionCookies, type UserCaller } from '@gatehouse/auth';
import { hashPassword, verifyPassword } from '@gatehouse/crypto';
import type { CallContext } from '@gatehouse/rpc';
import type { UserRecord } from '../storage/ports.ts';
import type { AuthnContext } from './deps.ts';
import { cookieOptions, isMfaAvailable, isMfaEnforced } from './options.ts';
import { PROFILE_FIELDS } from './signup.ts';
import type { common } from '@gatehouse/contracts';
import { userDeactivated } from '../events.ts';
import { isRevoked, publicUser } from './user.ts';
import { issueLink, verifyEmailLink } from './verification.ts';
import {
  MAX_URL_CHARS, asObject, checkPasswordPolicy, normaliseEmail, normalisePhone, optAppData, optBool, optString,
} from './validation.ts';

const invalid = (m: string) => new AppError('invalid_argument', m);

export const PROFILE_UPDATED = 'Profile details updated successfully.';
/** behaviour.md §3.5: appended when an update_email link was mailed */
export const EMAIL_CHANGE_SUFFIX = ' For the email change we have sent new verification email, please verify and continue';

async function currentUser(c: AuthnContext, ctx: CallContext): Promise<{ caller: UserCaller; user: UserRecord }> {
  const caller = await c.authenticator.requireUser(ctx);
  const user = await c.users.findById(caller.userId);
  if (!user || isRevoked(user)) throw new AppError('unauthenticated', 'unauthorized');
  return { caller, user };
}

/** `GET /v1/profile`: the caller's User. @throws `unauthenticated` `unauthorized` */
export async function profile(c: AuthnContext, ctx: CallContext): Promise<common.User> {
  return publicUser((await currentUser(c, ctx)).user);
}

/**
 * `POST /v1/update_profile`. A password change deletes every other session; an email or phone
 * change deletes every session and clears the cookies. Uniqueness → 409 `already_exists`. With
 * `--enable-email-verification` a new address is unverified and an `update_email` link is mailed
 * in the same transaction (the message then carries the §3.5 suffix).
 */
export async function updateProfile(c: AuthnContext, ctx: CallContext, raw: unknown): Promise<{ message: string }> {
  const o = c.options;
  const req = asObject(raw);
  const oldPassword = optString(req, 'old_password', 1024);
  const newPassword = optString(req, 'new_password', 1024);
  const confirmNew = optString(req, 'confirm_new_password', 1024);
  const rawEmail = optString(req, 'email', 320);
  const rawPhone = optString(req, 'phone_number', 64);
  const fields = PROFILE_FIELDS.map(([wire, key]) => [key, optString(req, wire)] as const);
  const picture = optString(req, 'picture', MAX_URL_CHARS);
  const mfa = optBool(req, 'is_multi_factor_auth_enabled');
  const appData = optAppData(req);
  const given = [oldPassword, newPassword, confirmNew, rawEmail, rawPhone, picture, mfa, appData, ...fields.map(([, v]) => v)];
  if (given.every((v) => v === undefined)) throw invalid('please enter at least one param to update');

  const { caller, user } = await currentUser(c, ctx);
  const now = c.now();
  const next: UserRecord = { ...user };

  let passwordChanged = false;
  if (newPassword !== undefined || confirmNew !== undefined || oldPassword !== undefined) {
    if (!o.enableBasicAuthentication) throw new AppError('failed_precondition', 'basic authentication is disabled for this instance');
    if (!newPassword) throw invalid('new password is required');
    if (confirmNew === undefined || confirmNew === '') throw invalid('confirm password is required');
    if (newPassword !== confirmNew) throw invalid('password and confirm password does not match');
    if (user.passwordHash) {
      if (!oldPassword) throw invalid('old password is required');
      if (!(await verifyPassword(user.passwordHash, oldPassword)).ok) throw invalid('incorrect old password');
    }
    checkPasswordPolicy(newPassword, o.enableStrongPassword);
    next.passwordHash = await hashPassword(newPassword);
    passwordChanged = true;
  }

  let identifierChanged = false;
  const email = rawEmail !== undefined && rawEmail.trim() !== '' ? normaliseEmail(rawEmail) : undefined;
  if (email !== undefined && email !== user.email) {
    next.email = email;
    // with verification on the new address is unverified and an update_email link is mailed (below)
    next.emailVerifiedAt = o.enableEmailVerification ? null : now;
    identifierChanged = true;
  }
  const phone = rawPhone !== undefined && rawPhone.trim() !== '' ? normalisePhone(rawPhone) : undefined;
  if (phone !== undefined && phone !== user.phoneNumber) {
    next.phoneNumber = phone;
    next.phoneNumberVerifiedAt = o.enablePhoneVerification ? null : now;
    identifierChanged = true;
  }
  for (const [key, value] of fields) if (value !== undefined) next[key] = value.trim() || null;
  if (picture !== undefined) next.picture = picture.trim() || null;
  if (appData !== undefined) next.appData = appData;
  if (mfa !== undefined) {
    if (mfa && !isMfaAvailable(o)) throw new AppError('failed_precondition', 'cannot enable MFA: no MFA method is available on this server');
    if (!mfa && isMfaEnforced(o)) throw new AppError('failed_precondition', 'cannot disable multi factor authentication as it is enforced by organization');
    next.isMultiFactorAuthEnabled = mfa;
  }
  next.updatedAt = now;

  let verificationMailed = false;
  await c.users.transaction(async (tx) => {
    if (next.email !== user.email && next.email !== null) {
      await tx.users.lockIdentifier('email', next.email);
      const other = await tx.users.findByEmail(next.email);
      if (other && other.id !== user.id) throw new AppError('already_exists', 'user with given email already exists');
    }
    if (next.phoneNumber !== user.phoneNumber && next.phoneNumber !== null) {
      await tx.users.lockIdentifier('phone', next.phoneNumber);
      const other = await tx.users.findByPhone(next.phoneNumber);
      if (other && other.id !== user.id) throw new AppError('already_exists', 'user with given phone number already exists');
    }
    await tx.users.update(next);
    if (o.enableEmailVerification && next.email !== user.email && next.email !== null) {
      // a link suppressed by the 60 s limit is answered the same way (behaviour.md §10: silent)
      await issueLink(c, tx, {
        purpose: 'update_email', user: next, redirectUri: `${o.url}/app`,
        linkOf: (token, r) => verifyEmailLink(o.url, token, r),
      });
      verificationMailed = true;
    }
  });

  // sessions go before the response is sent (behaviour.md §2.2)
  if (identifierChanged) {
    await c.sessions.deleteAllForUser(user.id);
    const co = cookieOptions(o);
    ctx.setCookies.push(...clearSessionCookies(co), clearMfaCookie(co));
  } else if (passwordChanged) {
    await c.sessions.deleteAllForUser(user.id, caller.sessionId);
  }
  return { message: verificationMailed ? `${PROFILE_UPDATED}${EMAIL_CHANGE_SUFFIX}` : PROFILE_UPDATED };
}

/** `POST /v1/deactivate_account`: sets revoked_timestamp, deletes all sessions, clears cookies, emits `user.deactivated`. */
export async function deactivateAccount(c: AuthnContext, ctx: CallContext): Promise<{ message: string }> {
  const { user } = await currentUser(c, ctx);
  const now = c.now();
  await c.users.transaction(async (tx) => {
    const current = (await tx.users.findById(user.id)) ?? user;
    const next = { ...current, revokedTimestamp: now, deactivatedAt: now, updatedAt: now };
    await tx.users.update(next);
    userDeactivated(tx.events, next);
  });
  await c.sessions.deleteAllForUser(user.id);
  const co = cookieOptions(c.options);
  ctx.setCookies.push(...clearSessionCookies(co), clearMfaCookie(co));
  return { message: 'user account deactivated successfully' };
}
