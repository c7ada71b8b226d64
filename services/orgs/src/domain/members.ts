/**
 * @module @gatehouse/orgs/domain/members
 * Organization memberships (behaviour.md §6.1): the small domain API the admin RPCs and SCIM
 * provisioning both call.
 *
 * - {@link getOrganization}: an organization by id, or null.
 * - {@link addMember}: adds a user to an organization with roles (trimmed, de-duplicated; the reserved
 *   `service:org_admin` makes an org admin). 404 / 409 as §6.1 says.
 * - {@link updateMemberRoles}: replaces a member's roles, keeping the last org admin unless a super-admin asks.
 * - {@link removeMember}: removes a membership, keeping the last org admin unless a super-admin asks.
 * - {@link userMemberships}: a user's memberships with their organizations, newest first.
 * - {@link forgetUser}: drops every membership of a deleted user (`user.deleted`).
 */
import { randomUUID } from 'node:crypto';
import { AppError } from '@gatehouse/errors';
import { ORG_ADMIN_ROLE, type MemberRecord, type MembershipOf, type OrgsTransaction, type OrganizationRecord, type PageOf, type PageWindow } from '../storage/ports.ts';
import type { OrgsDomainDeps, WithEvents } from './deps.ts';

export const ORGANIZATION_NOT_FOUND = 'organization not found';
export const USER_NOT_FOUND = 'user not found';
export const ALREADY_MEMBER = 'user is already a member of this organization';
export const MEMBERSHIP_NOT_FOUND = 'membership not found';
export const LAST_ORG_ADMIN = 'cannot remove the last service:org_admin of the organization';
export const LAST_ORG_ADMIN_ROLE = 'cannot take service:org_admin from the last org admin of the organization';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Whether `s` is a UUID (ids of organizations and users); others can match no row. */
export const isUuid = (s: string): boolean => UUID.test(s);

/**
 * An organization by id.
 * @returns the record, or null when no organization has this id (also for a non-UUID id)
 */
export async function getOrganization(deps: Pick<OrgsDomainDeps, 'store'>, id: string): Promise<OrganizationRecord | null> {
  return isUuid(id) ? deps.store.organizations.get(id.toLowerCase()) : null;
}

/**
 * Roles as §6.1 stores them: each trimmed, blanks dropped, duplicates dropped (first kept).
 * @throws AppError `invalid_argument` `roles must be strings` for a non-string entry
 */
export function normaliseRoles(roles: readonly unknown[] | null | undefined): string[] {
  const out: string[] = [];
  for (const r of roles ?? []) {
    if (typeof r !== 'string') throw new AppError('invalid_argument', 'roles must be strings');
    const t = r.trim();
    if (t !== '' && !out.includes(t)) out.push(t);
  }
  return out;
}

export interface AddMemberInput {
  orgId: string;
  userId: string;
  /** free-form; normalised with {@link normaliseRoles} */
  roles?: readonly unknown[] | null;
}

/**
 * Adds a user to an organization (behaviour.md §6.1 `add_org_member`).
 * @param withEvents further events written in the same transaction (audit, SCIM)
 * @returns the new membership
 * @throws AppError `not_found` `organization not found` / `user not found`;
 *   `already_exists` `user is already a member of this organization`; `unavailable` (authn down)
 */
export async function addMember(deps: OrgsDomainDeps, input: AddMemberInput, withEvents?: WithEvents<MemberRecord>): Promise<MemberRecord> {
  const roles = normaliseRoles(input.roles);
  const org = await getOrganization(deps, input.orgId);
  if (!org) throw new AppError('not_found', ORGANIZATION_NOT_FOUND);
  const user = isUuid(input.userId) ? await deps.users.get(input.userId.toLowerCase()) : null;
  if (!user) throw new AppError('not_found', USER_NOT_FOUND);
  const now = deps.now();
  const member: MemberRecord = { id: randomUUID(), orgId: org.id, userId: user.id, roles, createdAt: now, updatedAt: now };
  return deps.store.transaction(async (tx) => {
    if (await tx.members.get(org.id, user.id)) throw new AppError('already_exists', ALREADY_MEMBER);
    if (!(await tx.organizations.get(org.id))) throw new AppError('not_found', ORGANIZATION_NOT_FOUND);
    if (!(await tx.members.insert(member))) throw new AppError('already_exists', ALREADY_MEMBER);
    withEvents?.(tx, member);
    return member;
  });
}

export interface UpdateMemberInput {
  orgId: string;
  userId: string;
  /** the new roles, replacing the old ones; normalised with {@link normaliseRoles} (may be empty) */
  roles?: readonly unknown[] | null;
  /** a super-admin may take `service:org_admin` from the last org admin; nobody else may */
  bySuperAdmin: boolean;
}

/**
 * Replaces a member's roles (the extension `update_org_member`, the admin console's in-place edit): the
 * same normalisation and org-admin rule as `add_org_member` and `remove_org_member` (behaviour.md §6.1).
 * @param withEvents further events written in the same transaction (audit)
 * @returns the updated membership
 * @throws AppError `not_found` `membership not found`; `invalid_argument` `roles must be strings`;
 *   `failed_precondition` `cannot take service:org_admin from the last org admin of the organization`
 *   (not a super-admin)
 */
export async function updateMemberRoles(deps: Pick<OrgsDomainDeps, 'store' | 'now'>, input: UpdateMemberInput, withEvents?: WithEvents<MemberRecord>): Promise<MemberRecord> {
  const roles = normaliseRoles(input.roles);
  return inMembership(deps, input, async (tx, member) => {
    const losesAdmin = member.roles.includes(ORG_ADMIN_ROLE) && !roles.includes(ORG_ADMIN_ROLE);
    if (losesAdmin && !input.bySuperAdmin && (await tx.members.countAdmins(member.orgId)) <= 1) throw new AppError('failed_precondition', LAST_ORG_ADMIN_ROLE);
    const next: MemberRecord = { ...member, roles, updatedAt: deps.now() };
    if (!(await tx.members.update(next))) throw new AppError('not_found', MEMBERSHIP_NOT_FOUND);
    withEvents?.(tx, next);
    return next;
  });
}

export interface RemoveMemberInput {
  orgId: string;
  userId: string;
  /** a super-admin may remove the last org admin; nobody else may (§6.1) */
  bySuperAdmin: boolean;
}

/**
 * Removes a membership (behaviour.md §6.1 `remove_org_member`).
 * @param withEvents further events written in the same transaction
 * @returns the removed membership
 * @throws AppError `not_found` `membership not found`; `failed_precondition` `cannot remove the last
 *   service:org_admin of the organization` (not a super-admin)
 */
export async function removeMember(deps: Pick<OrgsDomainDeps, 'store'>, input: RemoveMemberInput, withEvents?: WithEvents<MemberRecord>): Promise<MemberRecord> {
  return inMembership(deps, input, async (tx, member) => {
    if (!input.bySuperAdmin && member.roles.includes(ORG_ADMIN_ROLE) && (await tx.members.countAdmins(member.orgId)) <= 1) {
      throw new AppError('failed_precondition', LAST_ORG_ADMIN);
    }
    if (!(await tx.members.delete(member.orgId, member.userId))) throw new AppError('not_found', MEMBERSHIP_NOT_FOUND);
    withEvents?.(tx, member);
    return member;
  });
}

/**
 * Runs `fn` in one store transaction with the membership of `userId` in `orgId` read inside it, so the
 * org-admin rules of update and remove judge the row they change (behaviour.md §6.1).
 * @throws AppError `not_found` `membership not found` when either id is not a UUID or no such membership exists
 */
async function inMembership<T>(
  deps: Pick<OrgsDomainDeps, 'store'>, input: { orgId: string; userId: string },
  fn: (tx: OrgsTransaction, member: MemberRecord) => Promise<T>,
): Promise<T> {
  if (!isUuid(input.orgId) || !isUuid(input.userId)) throw new AppError('not_found', MEMBERSHIP_NOT_FOUND);
  const orgId = input.orgId.toLowerCase();
  const userId = input.userId.toLowerCase();
  return deps.store.transaction(async (tx) => {
    const member = await tx.members.get(orgId, userId);
    if (!member) throw new AppError('not_found', MEMBERSHIP_NOT_FOUND);
    return fn(tx, member);
  });
}

/**
 * A user's memberships with their organizations (behaviour.md §6.1 `user_organizations`), newest first.
 * A non-UUID user id has none.
 */
export async function userMemberships(deps: Pick<OrgsDomainDeps, 'store'>, userId: string, window: PageWindow): Promise<PageOf<MembershipOf>> {
  if (!isUuid(userId)) return { rows: [], total: 0 };
  return deps.store.members.ofUser(userId.toLowerCase(), window);
}

/**
 * Drops every membership of a deleted user (behaviour.md §5.3 delete_user, `user.deleted`).
 * Idempotent: a redelivered event deletes nothing more.
 */
export async function forgetUser(deps: Pick<OrgsDomainDeps, 'store'>, userId: string): Promise<void> {
  await deps.store.transaction((tx) => tx.members.deleteUser(userId));
}
