/**
 * @module @gatehouse/authn/domain/scim-users
 * The user side of SCIM provisioning (behaviour.md §6.4), asked for by the orgs service through
 * AuthnInternal: authn owns the user rows, orgs owns the org, its members and the SCIM mapping.
 * Provisioned users have signup method `scim`, a verified email and no password. Deactivation sets
 * `revoked_timestamp` and deletes every session **before** answering (behaviour.md §2.2), so a token
 * of the user is refused on its next call.
 */
import { AppError } from '@gatehouse/errors';
import type { BusEvents } from '@gatehouse/contracts';
import type { UserRecord } from '../storage/ports.ts';
import type { AuthnContext } from './deps.ts';
import { blankUser, getUserById, isRevoked, publicUser } from './user.ts';
import { normaliseEmail, normalisePhone, optText, type Opt } from './validation.ts';

/** The signup method of a SCIM-created user (behaviour.md §6.4). */
export const SCIM_SIGNUP_METHOD = 'scim';

/** What a SCIM client supplies for a user (behaviour.md §6.4 "User mapping"). */
export interface ProvisionInput {
  /** '' for none */
  email: string;
  givenName?: Opt<string>;
  familyName?: Opt<string>;
  phoneNumber?: Opt<string>;
  /** false: revoked from the start */
  active: boolean;
}

const blankToNull = (field: string, v: Opt<string>): string | null | undefined => {
  const t = optText(field, v);
  if (t === undefined) return undefined;
  return t.trim() === '' ? null : t.trim();
};

/**
 * Creates a provisioned user (`user.created` with signup method `scim`, in the same transaction), or
 * returns the user already holding the email unchanged.
 * @throws AppError `invalid_argument` `invalid email address` / `invalid phone number`;
 *   `already_exists` `user with given phone number already exists`
 */
export async function provisionUser(c: AuthnContext, input: ProvisionInput): Promise<{ user: UserRecord; created: boolean }> {
  // '' : a SCIM user without an email (its userName is not an address and no emails were given)
  const email = input.email.trim() === '' ? null : normaliseEmail(input.email);
  const phone = input.phoneNumber ? normalisePhone(input.phoneNumber) : null;
  const now = c.now();
  return c.users.transaction(async (tx) => {
    if (email !== null) {
      await tx.users.lockIdentifier('email', email);
      const existing = await tx.users.findByEmail(email);
      if (existing) return { user: existing, created: false };
    }
    if (phone) {
      await tx.users.lockIdentifier('phone', phone);
      if (await tx.users.findByPhone(phone)) throw new AppError('already_exists', 'user with given phone number already exists');
    }
    const user: UserRecord = {
      ...blankUser(now),
      email, emailVerifiedAt: email === null ? null : now, signupMethods: SCIM_SIGNUP_METHOD,
      givenName: blankToNull('given_name', input.givenName) ?? null,
      familyName: blankToNull('family_name', input.familyName) ?? null,
      phoneNumber: phone, roles: [...c.options.defaultRoles],
      revokedTimestamp: input.active ? null : now,
    };
    await tx.users.create(user);
    const created: BusEvents['user.created'] = { user: publicUser(user), signup_method: SCIM_SIGNUP_METHOD };
    tx.events.emit('user.created', created);
    return { user, created: true };
  });
}

/** The changes of a SCIM replace or patch; absent fields stay, an empty string clears a name or phone. */
export interface ProvisionedUpdate {
  email?: Opt<string>;
  givenName?: Opt<string>;
  familyName?: Opt<string>;
  phoneNumber?: Opt<string>;
}

/**
 * Applies a SCIM attribute change. An email or phone change deletes every session of the user before
 * returning (behaviour.md §2.2).
 * @throws AppError `not_found` `user not found`; `invalid_argument`; `already_exists`
 *   `user with given email already exists` / `user with given phone number already exists`
 */
export async function updateProvisionedUser(c: AuthnContext, userId: string, u: ProvisionedUpdate): Promise<UserRecord> {
  await getUserById(c.users, userId);
  const email = u.email ? normaliseEmail(u.email) : undefined;
  const phoneRaw = blankToNull('phone_number', u.phoneNumber);
  const phone = phoneRaw ? normalisePhone(phoneRaw) : phoneRaw;
  const givenName = blankToNull('given_name', u.givenName);
  const familyName = blankToNull('family_name', u.familyName);
  const now = c.now();
  const { next, signOut } = await c.users.transaction(async (tx) => {
    const user = await tx.users.findById(userId);
    if (!user) throw new AppError('not_found', 'user not found');
    const next: UserRecord = { ...user };
    if (email !== undefined && email !== user.email) {
      await tx.users.lockIdentifier('email', email);
      const other = await tx.users.findByEmail(email);
      if (other && other.id !== user.id) throw new AppError('already_exists', 'user with given email already exists');
      next.email = email;
      next.emailVerifiedAt = now;
    }
    if (phone !== undefined && phone !== user.phoneNumber) {
      if (phone) {
        await tx.users.lockIdentifier('phone', phone);
        const other = await tx.users.findByPhone(phone);
        if (other && other.id !== user.id) throw new AppError('already_exists', 'user with given phone number already exists');
      }
      next.phoneNumber = phone;
      next.phoneNumberVerifiedAt = null;
    }
    if (givenName !== undefined) next.givenName = givenName;
    if (familyName !== undefined) next.familyName = familyName;
    const signOut = next.email !== user.email || next.phoneNumber !== user.phoneNumber;
    const changed = signOut || next.givenName !== user.givenName || next.familyName !== user.familyName;
    if (!changed) return { next: user, signOut: false };
    next.updatedAt = now;
    await tx.users.update(next);
    return { next, signOut };
  });
  if (signOut) await c.sessions.deleteAllForUser(next.id);
  return next;
}

/**
 * SCIM `active` (behaviour.md §6.4 "Deprovision"): false sets `revoked_timestamp` and deletes every
 * session before returning (repeated even when already revoked, so a session opened in a race goes
 * too); true clears `revoked_timestamp` and a self-deactivation.
 * @returns the user after the change and whether its state changed
 * @throws AppError `not_found` `user not found`
 */
export async function setUserActive(c: AuthnContext, userId: string, active: boolean): Promise<{ user: UserRecord; changed: boolean }> {
  await getUserById(c.users, userId);
  const now = c.now();
  const out = await c.users.transaction(async (tx) => {
    const user = await tx.users.findById(userId);
    if (!user) throw new AppError('not_found', 'user not found');
    if (active === !isRevoked(user)) return { user, changed: false };
    const next: UserRecord = active
      ? { ...user, revokedTimestamp: null, deactivatedAt: null, updatedAt: now }
      : { ...user, revokedTimestamp: now, updatedAt: now };
    await tx.users.update(next);
    return { user: next, changed: true };
  });
  if (!active) await c.sessions.deleteAllForUser(userId);
  return out;
}

/**
 * Users by id (unknown ids skipped, at most 1000) or by one email.
 * @throws AppError `invalid_argument` `too many ids: max 1000`
 */
export async function findUsers(c: AuthnContext, ids: readonly string[], email: Opt<string>): Promise<UserRecord[]> {
  if (ids.length > 1000) throw new AppError('invalid_argument', 'too many ids: max 1000');
  const out: UserRecord[] = [];
  for (const id of ids) {
    const u = id ? await c.users.findById(id.toLowerCase()) : null;
    if (u) out.push(u);
  }
  if (email) {
    let normal: string | null = null;
    try { normal = normaliseEmail(email); } catch { normal = null; }
    const u = normal ? await c.users.findByEmail(normal) : null;
    if (u && !out.some((x) => x.id === u.id)) out.push(u);
  }
  return out;
}
