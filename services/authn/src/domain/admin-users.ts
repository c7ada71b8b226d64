/**
 * @module @gatehouse/authn/domain/admin-users
 * The super-admin's user operations that read or edit a user (behaviour.md §5.3): `users`, `user`,
 * `update_user` and `verification_requests`. The caller is already a super-admin (the guard).
 * Deletion, access and invites are in admin-access.ts and invite.ts.
 */
import { AppError } from '@gatehouse/errors';
import type { EventSink, Page, UserRecord, VerificationRequestRecord } from '../storage/ports.ts';
import type { AuthnContext } from './deps.ts';
import { logoutRelyingParties } from './rp-logout.ts';
import { isMfaAvailable, isMfaEnforced, isEmailServiceEnabled } from './options.ts';
import { pageWindow, type Window } from '@gatehouse/contracts/pagination';
import { PROFILE_FIELDS, type ProfileFields } from './user.ts';
import { claimLinkMail, issueLink, verifyEmailLink } from './verification.ts';
import { MAX_URL_CHARS, checkAppData, normaliseEmail, normalisePhone, optText, type Opt } from './validation.ts';

const invalid = (m: string): AppError => new AppError('invalid_argument', m);
export const USER_NOT_FOUND = 'user not found';

/**
 * Records one §5.7 admin action in the transaction's outbox (built by the rpc layer from the call,
 * so the domain never sees a transport).
 */
export type AdminAudit = (events: EventSink, action: string, o: { resourceId: string; details?: Record<string, unknown> }) => void;

/** What mfa must forget for admin `reset_mfa` (behaviour.md §4.7): its factors, codes and MFA sessions. */
export interface MfaReset {
  resetUserMfa(userId: string): Promise<void>;
}

/**
 * `users`: a page of users matching `query` (behaviour.md §5.3, §10).
 * @throws AppError `invalid_argument` (the pagination rules; a query over 256 characters)
 */
export async function listUsers(c: AuthnContext, req: { query?: Opt<string>; pagination?: Opt<{ page?: Opt<number>; limit?: Opt<number> }> }): Promise<{ page: Window; result: Page<UserRecord> }> {
  const query = optText('query', req.query)?.trim() || null;
  const page = pageWindow(req.pagination);
  return { page, result: await c.users.search(query, page) };
}

/** `verification_requests`: a page of every request (the token hash never leaves). */
export async function listVerificationRequests(c: AuthnContext, pagination: Opt<{ page?: Opt<number>; limit?: Opt<number> }>): Promise<{ page: Window; result: Page<VerificationRequestRecord> }> {
  const page = pageWindow(pagination);
  return { page, result: await c.users.listVerificationRequests(page) };
}

/**
 * `user` (and `delete_user`): exactly one of `id`, `email`.
 * @throws AppError `invalid_argument` `either id or email is required` / `provide either id or email,
 *   not both`; `not_found` `user not found`
 */
export async function findUserByIdOrEmail(c: AuthnContext, req: { id?: Opt<string>; email?: Opt<string> }): Promise<UserRecord> {
  const id = optText('id', req.id, 64)?.trim() || undefined;
  const email = optText('email', req.email, 320)?.trim() || undefined;
  if (id === undefined && email === undefined) throw invalid('either id or email is required');
  if (id !== undefined && email !== undefined) throw invalid('provide either id or email, not both');
  const user = id !== undefined ? await c.users.findById(id.toLowerCase()) : await c.users.findByEmail(email!.toLowerCase());
  if (!user) throw new AppError('not_found', USER_NOT_FOUND);
  return user;
}

/** An `update_user` request (behaviour.md §5.3): absent or null leaves a field unchanged, "" clears it. */
export interface UserUpdate extends ProfileFields {
  id: string;
  email?: Opt<string>;
  emailVerified?: Opt<boolean>;
  phoneNumber?: Opt<string>;
  phoneNumberVerified?: Opt<boolean>;
  picture?: Opt<string>;
  roles: readonly string[];
  isMultiFactorAuthEnabled?: Opt<boolean>;
  resetMfa?: Opt<boolean>;
  appData?: Opt<Record<string, unknown>>;
}

/**
 * `update_user`. An email, phone or role change deletes every session of the user before the
 * response (§2.2); an unverified new email gets an `update_email` link when SMTP is configured.
 * Audit `admin.user_updated` with the changed field names.
 * @throws AppError `invalid_argument` (`user ID is missing`, lengths, email, phone, `invalid list of
 *   roles`, app_data); `not_found` `user not found`; `already_exists` (email, phone taken);
 *   `failed_precondition` (the MFA preference rules of §4.7); `unavailable` (mfa unreachable for reset_mfa)
 */
export async function updateUser(c: AuthnContext, u: UserUpdate, audit: AdminAudit, mfa: MfaReset | undefined): Promise<UserRecord> {
  const o = c.options;
  const id = optText('id', u.id, 64)?.trim();
  if (!id) throw invalid('user ID is missing');
  const rawEmail = optText('email', u.email, 320);
  const rawPhone = optText('phone_number', u.phoneNumber, 64);
  const fields = PROFILE_FIELDS.map(([field, key]) => [key, optText(field, u[key])] as const);
  const picture = optText('picture', u.picture, MAX_URL_CHARS);
  const appData = checkAppData(u.appData);
  const roles = [...new Set(u.roles.map((r) => r.trim()).filter(Boolean))];
  if (u.roles.length > 100 || roles.some((r) => r.length > 256 || (!o.roles.includes(r) && !o.protectedRoles.includes(r)))) throw invalid('invalid list of roles');
  const email = rawEmail === undefined ? undefined : rawEmail.trim() === '' ? null : normaliseEmail(rawEmail);
  const phone = rawPhone === undefined ? undefined : rawPhone.trim() === '' ? null : normalisePhone(rawPhone);
  const mfaPref = u.isMultiFactorAuthEnabled ?? undefined;
  if (mfaPref === true && !isMfaAvailable(o)) throw new AppError('failed_precondition', 'cannot enable MFA: no MFA method is available on this server');
  if (mfaPref === false && isMfaEnforced(o)) throw new AppError('failed_precondition', 'cannot disable multi factor authentication as it is enforced by organization');

  const found = await c.users.findById(id.toLowerCase());
  if (!found) throw new AppError('not_found', USER_NOT_FOUND);
  const now = c.now();
  const changed = new Set<string>();
  let signOut = false;
  const resetMfa = u.resetMfa === true;
  if (resetMfa) {
    // mfa's factors first: a failure leaves the lock in place and the call can be repeated
    if (!mfa) throw new AppError('unavailable', 'mfa service is not configured', { reason: 'no_mfa_address' });
    await mfa.resetUserMfa(found.id);
  }
  // the update_email link is claimed before the transaction (issue 30 §2 send caps)
  const mailsLink = email != null && email !== found.email && u.emailVerified !== true && isEmailServiceEnabled(o);
  const claim = mailsLink ? await claimLinkMail(c, email, 'update_email') : null;
  const updated = await c.users.transaction(async (tx) => {
    const user = (await tx.users.findById(found.id)) ?? found;
    const next: UserRecord = { ...user, roles: [...user.roles] };
    if (email !== undefined && email !== user.email) {
      if (email === null && user.phoneNumber === null && phone == null) throw invalid('either email or phone number is required');
      if (email !== null) {
        await tx.users.lockIdentifier('email', email);
        const other = await tx.users.findByEmail(email);
        if (other && other.id !== user.id) throw new AppError('already_exists', 'user with given email already exists');
      }
      next.email = email;
      next.emailVerifiedAt = email !== null && u.emailVerified === true ? now : null;
      changed.add('email');
      signOut = true;
    } else if (u.emailVerified != null && (u.emailVerified ? user.emailVerifiedAt === null : user.emailVerifiedAt !== null) && user.email !== null) {
      next.emailVerifiedAt = u.emailVerified ? now : null;
      changed.add('email_verified');
    }
    if (phone !== undefined && phone !== user.phoneNumber) {
      if (phone === null && next.email === null) throw invalid('either email or phone number is required');
      if (phone !== null) {
        await tx.users.lockIdentifier('phone', phone);
        const other = await tx.users.findByPhone(phone);
        if (other && other.id !== user.id) throw new AppError('already_exists', 'user with given phone number already exists');
      }
      next.phoneNumber = phone;
      next.phoneNumberVerifiedAt = phone !== null && u.phoneNumberVerified === true ? now : null;
      changed.add('phone_number');
      signOut = true;
    } else if (u.phoneNumberVerified != null && user.phoneNumber !== null && (u.phoneNumberVerified ? user.phoneNumberVerifiedAt === null : user.phoneNumberVerifiedAt !== null)) {
      next.phoneNumberVerifiedAt = u.phoneNumberVerified ? now : null;
      changed.add('phone_number_verified');
    }
    if (roles.length > 0 && (roles.length !== user.roles.length || roles.some((r) => !user.roles.includes(r)))) {
      next.roles = roles;
      changed.add('roles');
      signOut = true;
    }
    for (const [key, value] of fields) {
      const v = value === undefined ? undefined : value.trim() || null;
      if (v !== undefined && v !== user[key]) { next[key] = v; changed.add(PROFILE_FIELDS.find(([, k]) => k === key)![0]); }
    }
    if (picture !== undefined && (picture.trim() || null) !== user.picture) { next.picture = picture.trim() || null; changed.add('picture'); }
    if (appData !== undefined) { next.appData = appData; changed.add('app_data'); }
    if (mfaPref !== undefined && mfaPref !== user.isMultiFactorAuthEnabled) { next.isMultiFactorAuthEnabled = mfaPref; changed.add('is_multi_factor_auth_enabled'); }
    if (resetMfa) {
      // §4.7: the only way out of a lock; the factors themselves are mfa's (below, after commit)
      next.mfaLockedAt = null;
      next.isMultiFactorAuthEnabled = null;
      next.hasSkippedMfaSetupAt = null;
      changed.add('reset_mfa');
    }
    if (changed.size === 0) return user;
    next.updatedAt = now;
    await tx.users.update(next);
    if (changed.has('email') && next.email !== null && next.emailVerifiedAt === null && isEmailServiceEnabled(o)) {
      await issueLink(c, tx, { purpose: 'update_email', user: next, redirectUri: `${o.url}/app`, linkOf: (token, r) => verifyEmailLink(o.url, token, r) }, claim);
    }
    audit(tx.events, 'admin.user_updated', { resourceId: next.id, details: { fields: [...changed].sort() } });
    return next;
  });
  // behaviour.md §2.2: sessions go before the response is sent
  if (signOut) {
    await c.sessions.deleteAllForUser(updated.id);
    // issue 34 §6: the relying parties of the user's sign-on sessions hear it (Back-Channel Logout 1.0)
    await logoutRelyingParties(c, { userId: updated.id });
  }
  return updated;
}
