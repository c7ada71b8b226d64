/**
 * @module orgs/scim/groups
 * `/scim/v2/Groups` (RFC 7644 §3.3-§3.6; behaviour.md §6.4 "Groups"). Membership is stored as
 * authorization tuples `user:<id> member group:<org_id>/<group_id>` through authz's internal API
 * (the engine off → 501); the group row mirrors the member ids for reads. Member ids that are not
 * members of the org are skipped. Emits `group.created`, `group.updated`, `group.deleted`.
 */
import { randomUUID } from 'node:crypto';
import type { CallContext } from '@gatehouse/rpc';
import type { AuthzInternalClient, ScimDeps } from './deps.ts';
import { badRequest, conflict, notFound, ScimError } from './errors.ts';
import scimFilter from 'scim2-parse-filter';
import { compileFilter, type FilterSchema } from './filter.ts';
import { patchOperations, stripUrn, valueEq, valuePath } from './patch.ts';
import { groupResource, listResponse } from './resources.ts';
import type { ScimGroupRecord } from './storage/ports.ts';
import { lowerFilter } from './user-model.ts';
import { pageOf, type ScimAnswer } from './users.ts';

export const GROUPS_DISABLED = 'group provisioning is not enabled on this server';
const MODEL_REQUIRED = 'the authorization model must define type group with relation member: [user, group#member]';

/** The authz object of a group (behaviour.md §6.4). */
export const groupObject = (orgId: string, groupId: string): string => `group:${orgId}/${groupId}`;

/**
 * authz's client, once the engine is on and its active model defines `type group` with a `member`
 * relation that admits `user` (behaviour.md §6.4).
 * @throws ScimError 501 (no engine), 400 `invalidValue` (model)
 */
async function engineOf(d: ScimDeps, ctx: CallContext): Promise<AuthzInternalClient> {
  if (!d.authz) throw new ScimError(501, GROUPS_DISABLED);
  let dsl: string;
  try {
    dsl = (await d.authz.GetModel({}, ctx)).dsl;
  } catch (err) {
    if ((err as { code?: string }).code === 'failed_precondition') throw new ScimError(501, GROUPS_DISABLED);
    throw err;
  }
  if (!dsl.trim()) throw badRequest('invalidValue', MODEL_REQUIRED);
  let admitsUser = false;
  try {
    // the transformer (≈ 3.5 MiB of heap) loads with the first group write, not at start-up (issue 22 §3)
    const { transformer } = await import('@openfga/syntax-transformer');
    const model = transformer.transformDSLToJSONObject(dsl) as { type_definitions?: Array<{ type: string; metadata?: { relations?: Record<string, { directly_related_user_types?: Array<{ type: string; relation?: string; wildcard?: unknown }> }> } }> };
    const group = model.type_definitions?.find((t) => t.type === 'group');
    const direct = group?.metadata?.relations?.['member']?.directly_related_user_types ?? [];
    admitsUser = direct.some((r) => r.type === 'user' && !r.relation && !r.wildcard);
  } catch {
    admitsUser = false;
  }
  if (!admitsUser) throw badRequest('invalidValue', MODEL_REQUIRED);
  return d.authz;
}

/** Writes (`WriteTuples`) or deletes the member tuples of `userIds`, 100 per call (behaviour.md §7.1). */
async function syncTuples(authz: AuthzInternalClient, ctx: CallContext, object: string, add: readonly string[], remove: readonly string[]): Promise<void> {
  const batches = (ids: readonly string[]) => {
    const out: Array<Array<{ user: string; relation: string; object: string }>> = [];
    for (let i = 0; i < ids.length; i += 100) out.push(ids.slice(i, i + 100).map((id) => ({ user: `user:${id}`, relation: 'member', object })));
    return out;
  };
  for (const tuples of batches(remove)) await authz.DeleteTuples({ tuples }, ctx);
  for (const tuples of batches(add)) await authz.WriteTuples({ tuples }, ctx);
}

/** The `members[].value` of a body or patch value: user ids, de-duplicated. @throws ScimError 400 `invalidValue` */
function memberValues(v: unknown): string[] {
  if (v === undefined || v === null) return [];
  const list = Array.isArray(v) ? v : [v];
  const out: string[] = [];
  for (const m of list) {
    const value = m && typeof m === 'object' ? (m as { value?: unknown }).value : undefined;
    if (typeof value !== 'string' || value.length > 64) throw badRequest('invalidValue', 'members must be objects with a string value');
    const id = value.trim().toLowerCase();
    if (!out.includes(id)) out.push(id);
  }
  return out;
}

/** `ids` without those that are not members of the org (behaviour.md §6.4: silently skipped). */
async function orgMembersOnly(d: ScimDeps, orgId: string, ids: readonly string[]): Promise<string[]> {
  const out: string[] = [];
  for (const id of ids) if (/^[0-9a-f-]{1,64}$/.test(id) && (await d.orgs.isMember(orgId, id))) out.push(id);
  return out;
}

const groupEvent = (g: ScimGroupRecord, members = true) => ({
  group: { id: g.id, org_id: g.orgId, display_name: g.displayName, external_id: g.externalId, member_ids: members ? g.memberIds : [] },
});

const displayNameOf = (v: unknown): string => {
  if (typeof v !== 'string' || v.trim() === '') throw badRequest('invalidValue', 'displayName is required');
  if (v.length > 255) throw badRequest('invalidValue', 'displayName is too long');
  return v.trim();
};
const externalIdOf = (v: unknown): string | null => {
  if (v === undefined || v === null || v === '') return null;
  if (typeof v !== 'string' || v.length > 255) throw badRequest('invalidValue', 'externalId must be a string');
  return v;
};
const objectBody = (body: unknown): Record<string, unknown> => {
  if (!body || typeof body !== 'object' || Array.isArray(body)) throw badRequest('invalidSyntax', 'the body must be a JSON object');
  return body as Record<string, unknown>;
};
const withMembers = (query: URLSearchParams): boolean =>
  !(query.get('excludedAttributes') ?? '').split(',').some((a) => stripUrn(a.trim()).toLowerCase() === 'members');

async function groupOf(d: ScimDeps, orgId: string, id: string): Promise<ScimGroupRecord> {
  const g = /^[0-9a-f-]{1,64}$/i.test(id) ? await d.store.groups.get(orgId, id.toLowerCase()) : null;
  if (!g) throw notFound();
  return g;
}

/** `POST /Groups` (behaviour.md §6.4 "Groups"): 201; a repeated displayName or externalId → 409 `uniqueness`. */
export async function createGroup(d: ScimDeps, ctx: CallContext, orgId: string, body: unknown): Promise<ScimAnswer> {
  const b = objectBody(body);
  const authz = await engineOf(d, ctx);
  const displayName = displayNameOf(b['displayName']);
  const externalId = externalIdOf(b['externalId']);
  // RFC 7644 §3.3: a repeated externalId is a conflict, as a repeated displayName is
  if (externalId && (await d.store.groups.byExternalId(orgId, externalId))) throw conflict('externalId already exists');
  if (await d.store.groups.byDisplayName(orgId, displayName)) throw conflict('displayName already exists');
  const members = await orgMembersOnly(d, orgId, memberValues(b['members']));
  const now = d.now();
  const g: ScimGroupRecord = { id: randomUUID(), orgId, displayName, externalId, memberIds: members, createdAt: now, updatedAt: now };
  if (!(await d.store.groups.insert(g))) throw conflict('displayName already exists');
  try {
    await syncTuples(authz, ctx, groupObject(orgId, g.id), members, []);
  } catch (err) {
    await d.store.groups.delete(orgId, g.id);
    throw err;
  }
  d.emit('group.created', groupEvent(g));
  const r = groupResource(d.baseUrl, g);
  return { status: 201, body: r, location: (r['meta'] as { location: string }).location };
}

/** `GET /Groups/{id}` (`excludedAttributes=members` honoured). */
export async function getGroup(d: ScimDeps, ctx: CallContext, orgId: string, id: string, query: URLSearchParams): Promise<ScimAnswer> {
  await engineOf(d, ctx);
  return { status: 200, body: groupResource(d.baseUrl, await groupOf(d, orgId, id), withMembers(query)) };
}

/** What a filter on Groups may name, as columns of `orgs_scim_groups g` (members are not filterable in lists). */
const GROUP_FILTER: FilterSchema = {
  attrs: {
    id: { sql: 'g.id', kind: 'string', caseExact: true },
    displayname: { sql: 'g.display_key', kind: 'string', lowered: true },
    externalid: { sql: 'g.external_id', kind: 'string', caseExact: true },
    'meta.created': { sql: 'g.created_at', kind: 'instant' },
    'meta.lastmodified': { sql: 'g.updated_at', kind: 'instant' },
  },
  multi: {},
};

/** `GET /Groups` and `POST /Groups/.search`: the filter grammar of Users over the group attributes (behaviour.md §6.4). */
export async function listGroups(d: ScimDeps, ctx: CallContext, orgId: string, query: URLSearchParams): Promise<ScimAnswer> {
  await engineOf(d, ctx);
  const filterText = query.get('filter');
  const { start, count } = pageOf(query);
  const where = filterText === null || filterText.trim() === '' ? null : compileFilter(filterText, GROUP_FILTER);
  const evaluate = where && filterText ? (() => {
    const test = scimFilter.filter(lowerFilter(scimFilter.parse(filterText)));
    return (g: ScimGroupRecord) => test({ id: g.id, displayName: g.displayName.toLowerCase(), externalId: g.externalId ?? undefined });
  })() : null;
  const { total, rows } = await d.store.groups.search(orgId, where, evaluate, { offset: start - 1, limit: count });
  return { status: 200, body: listResponse(rows.map((g) => groupResource(d.baseUrl, g, withMembers(query))), total, start) };
}

/** Stores `next` (a changed copy of `g`), writes the tuple difference, emits `group.updated`. */
async function saveGroup(d: ScimDeps, ctx: CallContext, authz: AuthzInternalClient, g: ScimGroupRecord, next: ScimGroupRecord): Promise<ScimAnswer> {
  const add = next.memberIds.filter((id) => !g.memberIds.includes(id));
  const remove = g.memberIds.filter((id) => !next.memberIds.includes(id));
  const changed = add.length > 0 || remove.length > 0 || next.displayName !== g.displayName || next.externalId !== g.externalId;
  if (!changed) return { status: 200, body: groupResource(d.baseUrl, g) };
  if (next.displayName.toLowerCase() !== g.displayName.toLowerCase()) {
    const other = await d.store.groups.byDisplayName(g.orgId, next.displayName);
    if (other && other.id !== g.id) throw conflict('displayName already exists');
  }
  await syncTuples(authz, ctx, groupObject(g.orgId, g.id), add, remove);
  const saved = { ...next, updatedAt: d.now() };
  if (!(await d.store.groups.update(saved))) {
    await syncTuples(authz, ctx, groupObject(g.orgId, g.id), remove, add);
    throw conflict('displayName already exists');
  }
  d.emit('group.updated', groupEvent(saved));
  return { status: 200, body: groupResource(d.baseUrl, saved) };
}

/** `PUT /Groups/{id}`: replaces displayName, externalId and members. */
export async function replaceGroup(d: ScimDeps, ctx: CallContext, orgId: string, id: string, body: unknown): Promise<ScimAnswer> {
  const b = objectBody(body);
  const authz = await engineOf(d, ctx);
  const g = await groupOf(d, orgId, id);
  const next = {
    ...g, displayName: displayNameOf(b['displayName']), externalId: externalIdOf(b['externalId']),
    memberIds: await orgMembersOnly(d, orgId, memberValues(b['members'])),
  };
  return saveGroup(d, ctx, authz, g, next);
}

/**
 * `PATCH /Groups/{id}`: `add`/`replace`/`remove` on `members` (path filter `members[value eq "x"]`,
 * value-array form, or an unfiltered remove that clears all) and on `displayName`/`externalId`.
 */
export async function patchGroup(d: ScimDeps, ctx: CallContext, orgId: string, id: string, body: unknown): Promise<ScimAnswer> {
  const ops = patchOperations(body);
  const authz = await engineOf(d, ctx);
  const g = await groupOf(d, orgId, id);
  const next: ScimGroupRecord = { ...g, memberIds: [...g.memberIds] };
  const addMembers = async (ids: string[]) => {
    for (const m of await orgMembersOnly(d, orgId, ids)) if (!next.memberIds.includes(m)) next.memberIds.push(m);
  };
  const setAttr = (key: string, value: unknown) => {
    const k = stripUrn(key).toLowerCase();
    if (k === 'displayname') next.displayName = displayNameOf(value);
    else if (k === 'externalid') next.externalId = externalIdOf(value);
  };
  for (const op of ops) {
    if (op.op !== 'add' && op.op !== 'replace' && op.op !== 'remove') continue; // ignored (behaviour.md §6.4)
    const vp = op.path ? valuePath(op.path) : null;
    const path = op.path ? stripUrn(op.path).toLowerCase() : null;
    if (vp) {
      if (vp.attr.toLowerCase() !== 'members') continue;
      const target = valueEq(vp.filter);
      if (target === null) throw badRequest('invalidFilter', `invalid filter in path "${op.path}": only value eq "<id>" is supported`);
      if (op.op === 'remove') next.memberIds = next.memberIds.filter((m) => m !== target.toLowerCase());
      else await addMembers([target.toLowerCase()]);
    } else if (path === 'members') {
      if (op.op === 'remove') {
        const ids = op.value === undefined || op.value === null ? null : memberValues(op.value);
        next.memberIds = ids === null ? [] : next.memberIds.filter((m) => !ids.includes(m));
      } else {
        if (op.op === 'replace') next.memberIds = [];
        await addMembers(memberValues(op.value));
      }
    } else if (path !== null) {
      if (op.op !== 'remove') setAttr(path, op.value);
    } else if (op.op !== 'remove') {
      if (!op.value || typeof op.value !== 'object' || Array.isArray(op.value)) throw badRequest('invalidValue', 'a patch without path needs an object value');
      for (const [k, v] of Object.entries(op.value as Record<string, unknown>)) {
        if (k.toLowerCase() === 'members') {
          if (op.op === 'replace') next.memberIds = [];
          await addMembers(memberValues(v));
        } else {
          setAttr(k, v);
        }
      }
    }
  }
  return saveGroup(d, ctx, authz, g, next);
}

/**
 * Takes a deprovisioned user out of every group of the org (RFC 7644 §3.6: a deleted resource is not
 * returned again, as a group member either): per group the member tuple is deleted and `group.updated`
 * emitted, as a PATCH removing the member would.
 */
export async function removeFromGroups(d: ScimDeps, ctx: CallContext, orgId: string, userId: string): Promise<void> {
  for (const g of await d.store.groups.holding(orgId, userId)) {
    const next = { ...g, memberIds: g.memberIds.filter((m) => m !== userId) };
    if (d.authz) await saveGroup(d, ctx, d.authz, g, next);
    else await d.store.groups.update({ ...next, updatedAt: d.now() });
  }
}

/** `DELETE /Groups/{id}`: the group and its membership tuples → 204. */
export async function deleteGroup(d: ScimDeps, ctx: CallContext, orgId: string, id: string): Promise<ScimAnswer> {
  const authz = await engineOf(d, ctx);
  const g = await groupOf(d, orgId, id);
  await syncTuples(authz, ctx, groupObject(orgId, g.id), [], g.memberIds);
  await d.store.groups.delete(orgId, g.id);
  d.emit('group.deleted', groupEvent(g, false));
  return { status: 204, body: null };
}
