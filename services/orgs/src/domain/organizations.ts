/**
 * @module @gatehouse/orgs/domain/organizations
 * Organizations (behaviour.md §6.1): create, update, delete (with every org-scoped row and the
 * `organization.deleted` event, in one transaction), get, list.
 */
import { randomUUID } from 'node:crypto';
import { AppError } from '@gatehouse/errors';
import type { OrganizationRecord } from '../storage/ports.ts';
import type { OrgsDomainDeps, WithEvents } from './deps.ts';
import { getOrganization, ORGANIZATION_NOT_FOUND } from './members.ts';

export const NAME_TAKEN = 'an organization with this name already exists';

/**
 * Checks an organization name against the §6.1 slug rule: no `/ : #`, whitespace or control characters.
 * @param blankMessage the message for a blank name (`name is required` on create, `name cannot be empty` on update)
 * @returns the trimmed name
 * @throws AppError `invalid_argument` with `blankMessage`, or `organization name must be a URL-safe slug:
 *   the character "<c>" is not allowed`
 */
export function checkOrgName(name: string, blankMessage: string): string {
  const trimmed = name.trim();
  if (trimmed === '') throw new AppError('invalid_argument', blankMessage);
  for (const c of trimmed) {
    // eslint-disable-next-line no-control-regex
    if (/[/:#\s\u0000-\u001f\u007f-\u009f]/u.test(c)) {
      throw new AppError('invalid_argument', `organization name must be a URL-safe slug: the character "${c}" is not allowed`);
    }
  }
  if (trimmed.length > 255) throw new AppError('invalid_argument', 'name must be at most 255 characters');
  return trimmed;
}

/** An optional display name: empty clears it (§0.1 request nulls). */
function displayNameOf(v: string | null | undefined): string | null {
  const t = v?.trim() ?? '';
  if (t.length > 255) throw new AppError('invalid_argument', 'display_name must be at most 255 characters');
  return t === '' ? null : t;
}

/**
 * Creates an organization (behaviour.md §6.1 `create_organization`), enabled.
 * @throws AppError `invalid_argument` (name rules), `already_exists` `an organization with this name already exists`
 */
export async function createOrganization(
  deps: OrgsDomainDeps, input: { name: string; displayName?: string | null }, withEvents?: WithEvents<OrganizationRecord>,
): Promise<OrganizationRecord> {
  const now = deps.now();
  const org: OrganizationRecord = {
    id: randomUUID(), name: checkOrgName(input.name, 'name is required'), displayName: displayNameOf(input.displayName),
    enabled: true, createdAt: now, updatedAt: now,
  };
  if (await deps.store.organizations.byName(org.name)) throw new AppError('already_exists', NAME_TAKEN);
  return deps.store.transaction(async (tx) => {
    if (!(await tx.organizations.insert(org))) throw new AppError('already_exists', NAME_TAKEN);
    withEvents?.(tx, org);
    return org;
  });
}

export interface OrganizationChanges {
  name?: string | null;
  displayName?: string | null;
  enabled?: boolean | null;
}

/**
 * Updates an organization (behaviour.md §6.1 `update_organization`): only the supplied fields change.
 * @param withEvents receives the updated record and the names of the changed fields
 * @throws AppError `not_found` `organization not found`; `invalid_argument` (name rules, `name cannot be empty`);
 *   `already_exists` `an organization with this name already exists`
 */
export async function updateOrganization(
  deps: OrgsDomainDeps, id: string, changes: OrganizationChanges, withEvents?: WithEvents<{ org: OrganizationRecord; changed: string[] }>,
): Promise<OrganizationRecord> {
  const current = await getOrganization(deps, id);
  if (!current) throw new AppError('not_found', ORGANIZATION_NOT_FOUND);
  const next: OrganizationRecord = { ...current };
  if (changes.name != null) next.name = checkOrgName(changes.name, 'name cannot be empty');
  if (changes.displayName != null) next.displayName = displayNameOf(changes.displayName);
  if (changes.enabled != null) next.enabled = changes.enabled;
  const changed = (['name', 'displayName', 'enabled'] as const).filter((k) => next[k] !== current[k]);
  next.updatedAt = deps.now();
  return deps.store.transaction(async (tx) => {
    const outcome = await tx.organizations.update(next);
    if (outcome === 'missing') throw new AppError('not_found', ORGANIZATION_NOT_FOUND);
    if (outcome === 'conflict') throw new AppError('already_exists', NAME_TAKEN);
    withEvents?.(tx, { org: next, changed: changed.map((k) => (k === 'displayName' ? 'display_name' : k)) });
    return next;
  });
}

/**
 * Deletes an organization and everything scoped to it (behaviour.md §6.1 `delete_organization`) in one
 * transaction, with the `organization.deleted` event for the services that hold org data of their own.
 * @throws AppError `not_found` `organization not found`
 */
export async function deleteOrganization(deps: OrgsDomainDeps, id: string, withEvents?: WithEvents<OrganizationRecord>): Promise<OrganizationRecord> {
  const org = await getOrganization(deps, id);
  if (!org) throw new AppError('not_found', ORGANIZATION_NOT_FOUND);
  return deps.store.transaction(async (tx) => {
    if (!(await tx.organizations.delete(org.id))) throw new AppError('not_found', ORGANIZATION_NOT_FOUND);
    tx.events.emit('organization.deleted', { org_id: org.id, name: org.name, deleted_at: deps.now() });
    withEvents?.(tx, org);
    return org;
  });
}

/**
 * One organization (behaviour.md §6.1 `organization`).
 * @throws AppError `not_found` `organization not found`
 */
export async function requireOrganization(deps: Pick<OrgsDomainDeps, 'store'>, id: string): Promise<OrganizationRecord> {
  const org = await getOrganization(deps, id);
  if (!org) throw new AppError('not_found', ORGANIZATION_NOT_FOUND);
  return org;
}
