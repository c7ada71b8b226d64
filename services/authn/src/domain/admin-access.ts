/**
 * @module @gatehouse/authn/domain/admin-access
 * `revoke_access`, `enable_access` and `delete_user` (behaviour.md §5.3, §2.2). Sessions are deleted
 * synchronously, before the response. Deletion removes authn's part (the user, sessions, verification
 * requests, login lockout counters) and emits `user.deleted` with the record as it was, in the same
 * transaction: mfa, authz and orgs remove theirs from durable consumers of that event, so a service
 * that is down during the delete catches up when it starts again.
 */
import { AppError } from '@gatehouse/errors';
import { publicUser } from './user.ts';
import type { UserRecord } from '../storage/ports.ts';
import type { AuthnContext } from './deps.ts';
import { logoutRelyingParties } from './rp-logout.ts';
import { lockoutKey } from './lockout.ts';
import { findUserByIdOrEmail, USER_NOT_FOUND, type AdminAudit } from './admin-users.ts';
import { optText, type Opt } from './validation.ts';

export const USER_DELETED = 'user deleted successfully';
export const ACCESS_REVOKED = 'user access revoked successfully';
export const ACCESS_ENABLED = 'user access enabled successfully';

/** @throws AppError `invalid_argument` `user ID is missing`; `not_found` `user not found` */
async function userForAccess(c: AuthnContext, userId: Opt<string>): Promise<UserRecord> {
  const id = optText('user_id', userId, 64)?.trim();
  if (!id) throw new AppError('invalid_argument', 'user ID is missing');
  const user = await c.users.findById(id.toLowerCase());
  if (!user) throw new AppError('not_found', USER_NOT_FOUND);
  return user;
}

/**
 * `revoke_access`: sets `revoked_timestamp` and deletes every session; `user.access_revoked` and audit
 * `admin.access_revoked`. Idempotent: an already revoked user is left as is and nothing is emitted.
 */
export async function revokeAccess(c: AuthnContext, userId: Opt<string>, audit: AdminAudit): Promise<void> {
  const found = await userForAccess(c, userId);
  const now = c.now();
  await c.users.transaction(async (tx) => {
    const user = await tx.users.findById(found.id);
    if (!user || user.revokedTimestamp !== null) return;
    const next = { ...user, revokedTimestamp: now, updatedAt: now };
    await tx.users.update(next);
    tx.events.emit('user.access_revoked', { user: publicUser(next) });
    audit(tx.events, 'admin.access_revoked', { resourceId: next.id });
  });
  // repeated too: a session opened in a race with the first revoke goes as well (§2.2)
  await c.sessions.deleteAllForUser(found.id);
  // issue 34 §6: the relying parties of the user's sign-on sessions hear it (Back-Channel Logout 1.0)
  await logoutRelyingParties(c, { userId: found.id });
}

/**
 * `enable_access`: clears `revoked_timestamp` and a self-deactivation (§3.5, SCIM deprovisioning);
 * `user.access_enabled` and audit `admin.access_enabled`. Idempotent like revoke.
 */
export async function enableAccess(c: AuthnContext, userId: Opt<string>, audit: AdminAudit): Promise<void> {
  const found = await userForAccess(c, userId);
  const now = c.now();
  await c.users.transaction(async (tx) => {
    const user = await tx.users.findById(found.id);
    if (!user || (user.revokedTimestamp === null && user.deactivatedAt === null)) return;
    const next = { ...user, revokedTimestamp: null, deactivatedAt: null, updatedAt: now };
    await tx.users.update(next);
    tx.events.emit('user.access_enabled', { user: publicUser(next) });
    audit(tx.events, 'admin.access_enabled', { resourceId: next.id });
  });
}

/**
 * `delete_user` by exactly one of `email`, `id`. Audit `admin.user_deleted`.
 * @throws AppError `invalid_argument` (neither or both); `not_found` `user not found`
 */
export async function deleteUser(c: AuthnContext, req: { id?: Opt<string>; email?: Opt<string> }, audit: AdminAudit): Promise<void> {
  const found = await findUserByIdOrEmail(c, req);
  const deleted = await c.users.transaction(async (tx) => {
    const user = await tx.users.findById(found.id);
    if (!user) throw new AppError('not_found', USER_NOT_FOUND);
    // the events first: on MongoDB without transactions they are written before the deletes run, so a
    // crash in between leaves the event and the user (a retried delete_user finishes), never a
    // deletion nobody hears of (issue 32 §4); elsewhere all of it is one transaction
    tx.events.emit('user.deleted', { user: publicUser(user) });
    audit(tx.events, 'admin.user_deleted', { resourceId: user.id });
    await tx.verifications.deleteForUser(user.id, user.email ? [user.email] : []);
    await tx.identities.deleteForUser(user.id);
    await tx.users.delete(user.id);
    return user;
  });
  await c.sessions.deleteAllForUser(deleted.id);
  await logoutRelyingParties(c, { userId: deleted.id });
  if (deleted.email) await c.lockout.clear(lockoutKey('email', deleted.email));
  if (deleted.phoneNumber) await c.lockout.clear(lockoutKey('phone', deleted.phoneNumber));
}
