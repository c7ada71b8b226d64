/**
 * @module @gatehouse/authn/domain/profile
 * `update_profile` and `deactivate_account` (behaviour.md §3.5, §2.2, §4.7); `profile` is the
 * caller's {@link activeUser}.
 */
import { AppError } from '@gatehouse/errors';
import type { UserCaller } from '@gatehouse/auth';
import { hashPassword, verifyPassword } from '@gatehouse/crypto';
import type { UserRecord } from '../storage/ports.ts';
import { userDeactivated } from '../events.ts';
import type { Audit, AuthnContext } from './deps.ts';
import { checkMfaPreference } from './mfa-gate.ts';
import { activeUser, PROFILE_FIELDS, type ProfileInput } from './user.ts';
import { claimLinkMail, issueLink, verifyEmailLink } from './verification.ts';
import { MAX_URL_CHARS, checkAppData, checkPasswordPolicy, normaliseEmail, normalisePhone, optText, type Opt } from './validation.ts';

const invalid = (m: string) => new AppError('invalid_argument', m);

/** behaviour.md §9 */
export const PROFILE_UPDATED = 'Profile details updated successfully.';
/** behaviour.md §3.5: appended when an update_email link was mailed */
export const EMAIL_CHANGE_SUFFIX = ' For the email change we have sent new verification email, please verify and continue';
export const ACCOUNT_DEACTIVATED = 'user account deactivated successfully';

/** An update_profile request: absent or null is "leave unchanged", an empty string clears. */
export interface ProfileUpdate extends ProfileInput {
  oldPassword?: Opt<string>;
  newPassword?: Opt<string>;
  confirmNewPassword?: Opt<string>;
  /** the MFA preference (behaviour.md §4.7) */
  isMultiFactorAuthEnabled?: Opt<boolean>;
}

export interface ProfileUpdated {
  /** {@link PROFILE_UPDATED}, with {@link EMAIL_CHANGE_SUFFIX} when a link was mailed */
  message: string;
  /** every session of the user was deleted (an email or phone change): the caller's cookies are cleared */
  signedOut: boolean;
}

/**
 * `POST /v1/update_profile`. A password change deletes every other session; an email or phone
 * change deletes every session. Uniqueness → 409 `already_exists`. With `--enable-email-verification`
 * a new address is unverified and an `update_email` link is mailed in the same transaction.
 * @throws AppError `invalid_argument` (no field, a field over its length, the password rules,
 *   an invalid email or phone, app_data); `failed_precondition` (basic auth off, the MFA preference
 *   refused, §4.7); `already_exists`; `unauthenticated` `unauthorized` (user gone or revoked)
 */
export async function updateProfile(c: AuthnContext, caller: UserCaller, u: ProfileUpdate, audit?: Audit): Promise<ProfileUpdated> {
  const o = c.options;
  const oldPassword = optText('old_password', u.oldPassword, 1024);
  const newPassword = optText('new_password', u.newPassword, 1024);
  const confirmNew = optText('confirm_new_password', u.confirmNewPassword, 1024);
  const rawEmail = optText('email', u.email, 320);
  const rawPhone = optText('phone_number', u.phoneNumber, 64);
  const fields = PROFILE_FIELDS.map(([field, key]) => [key, optText(field, u[key])] as const);
  const picture = optText('picture', u.picture, MAX_URL_CHARS);
  const mfa = u.isMultiFactorAuthEnabled ?? undefined;
  const appData = checkAppData(u.appData);
  const given = [oldPassword, newPassword, confirmNew, rawEmail, rawPhone, picture, mfa, appData, ...fields.map(([, v]) => v)];
  if (given.every((v) => v === undefined)) throw invalid('please enter at least one param to update');

  const user = await activeUser(c.users, caller.userId);
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
  if (mfa !== undefined) next.isMultiFactorAuthEnabled = checkMfaPreference(c, mfa);
  next.updatedAt = now;

  let verificationMailed = false;
  const mailsLink = o.enableEmailVerification && next.email !== user.email && next.email !== null;
  const claim = mailsLink ? await claimLinkMail(c, next.email!, 'update_email') : null;
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
    if (mfa !== undefined && audit && mfa !== user.isMultiFactorAuthEnabled) {
      tx.events.emit('audit.recorded', audit(mfa ? 'user.mfa_enabled' : 'user.mfa_disabled', {
        actor: { type: 'user', id: user.id, email: user.email }, resourceType: 'user', resourceId: user.id, details: { field: 'is_multi_factor_auth_enabled' },
      }));
    }
    if (mailsLink) {
      // a link suppressed by the 60 s limit is answered the same way (behaviour.md §10: silent)
      await issueLink(c, tx, {
        purpose: 'update_email', user: next, redirectUri: `${o.url}/app`,
        linkOf: (token, r) => verifyEmailLink(o.url, token, r),
      }, claim);
      verificationMailed = true;
    }
  });

  // sessions go before the response is sent (behaviour.md §2.2)
  if (identifierChanged) await c.sessions.deleteAllForUser(user.id);
  else if (passwordChanged) await c.sessions.deleteAllForUser(user.id, caller.sessionId);
  return { message: verificationMailed ? `${PROFILE_UPDATED}${EMAIL_CHANGE_SUFFIX}` : PROFILE_UPDATED, signedOut: identifierChanged };
}

/**
 * `POST /v1/deactivate_account`: sets revoked_timestamp, deletes every session, emits
 * `user.deactivated` (the caller's cookies are cleared). Only admin `enable_access` undoes it.
 * @throws AppError `unauthenticated` `unauthorized` (user gone or revoked)
 */
export async function deactivateAccount(c: AuthnContext, caller: UserCaller): Promise<void> {
  const user = await activeUser(c.users, caller.userId);
  const now = c.now();
  await c.users.transaction(async (tx) => {
    const current = (await tx.users.findById(user.id)) ?? user;
    const next = { ...current, revokedTimestamp: now, deactivatedAt: now, updatedAt: now };
    await tx.users.update(next);
    userDeactivated(tx.events, next);
  });
  await c.sessions.deleteAllForUser(user.id);
}
