/**
 * @module orgs/scim/groups
 * `/scim/v2/Groups` (RFC 7644 §3.3-§3.6; behaviour.md §6.4 "Groups"). Membership is stored as
 * authorization tuples `user:<id> member group:<org_id>/<group_id>` through authz's internal API
 * (the engine off → 501); the members are mirrored as a row each (`orgs_scim_group_members`) for reads,
 * so a PATCH that adds or removes members reads and writes only those, whatever the size of the group
 * (issue 31). Member ids that are not members of the org are skipped. Emits `group.created` (with the
 * members), `group.updated` (with the members added and removed), `group.deleted`.
 */
import { randomUUID } from 'node:crypto';
import type { CallContext } from '@gatehouse/rpc';
import type { AuthzInternalClient, ScimDeps } from './deps.ts';
import { badRequest, conflict, notFound, ScimError } from './errors.ts';
import scimFilter from 'scim2-parse-filter';
import { compileFilter, type FilterSchema } from './filter.ts';
import { patchOperations, stripUrn, valueEq, valuePath, type PatchOperation } from './patch.ts';
import { checkIfMatch, groupResource, listResponse, notModified, selectAttributes, versionTag } from './resources.ts';
import type { ScimGroupRecord } from './storage/ports.ts';
import { lowerFilter } from './user-model.ts';
import { attributeSelection, pageOf, type ScimAnswer } from './users.ts';

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

/** `ids` without those that are not members of the org (behaviour.md §6.4: silently skipped), in one query per 500 ids. */
async function orgMembersOnly(d: ScimDeps, orgId: string, ids: readonly string[]): Promise<string[]> {
  const shaped = ids.filter((id) => /^[0-9a-f-]{1,64}$/.test(id));
  if (shaped.length === 0) return [];
  const members = await d.store.users.membersAmong(orgId, shaped);
  return shaped.filter((id) => members.has(id));
}

/** A change of a group's members: ids added (in order) and removed. */
interface MemberDiff {
  add: string[];
  remove: string[];
}

/** The `group` of a `group.*` event: the members on creation, the members added and removed on update. */
const groupEvent = (g: ScimGroupRecord, members: { all?: readonly string[]; diff?: MemberDiff } = {}) => ({
  group: {
    id: g.id, org_id: g.orgId, display_name: g.displayName, external_id: g.externalId, member_ids: [...(members.all ?? [])],
    ...(members.diff ? { members_added: members.diff.add, members_removed: members.diff.remove } : {}),
  },
});

/**
 * The members of a group as a PATCH or PUT changes them: `before` is what is stored of the ids it looked
 * at (every member when the operation replaces the list), `present` what is there after the operations
 * so far (insertion order).
 */
class MemberState {
  readonly before: Set<string>;
  readonly present: Set<string>;
  constructor(before: Set<string>) {
    this.before = before;
    this.present = new Set(before);
  }
  /** The ids added (in order) and removed relative to the stored group. */
  diff(): MemberDiff {
    return { add: [...this.present].filter((id) => !this.before.has(id)), remove: [...this.before].filter((id) => !this.present.has(id)) };
  }
}

/** The ordered member ids of one group. */
const membersOf = async (d: ScimDeps, g: ScimGroupRecord): Promise<string[]> => (await d.store.groups.members(g.orgId, [g.id])).get(g.id) ?? [];

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
/**
 * Whether the answer lists `members` (RFC 7644 §3.4.2.5): with `attributes`, only when it names them (or a
 * sub-attribute); else unless `excludedAttributes` names them. Entra ID reads groups with
 * `excludedAttributes=members`, so a large group's member list is then never built.
 */
const withMembers = (sel: { attributes: string[]; excluded: string[] }): boolean => {
  const top = (a: string) => stripUrn(a).toLowerCase();
  if (sel.attributes.length > 0) return sel.attributes.some((a) => top(a) === 'members' || top(a).startsWith('members.'));
  return !sel.excluded.some((a) => top(a) === 'members');
};

/**
 * A group's answer: the representation narrowed by the query's `attributes` / `excludedAttributes`, and its
 * ETag; the member rows are read only when the answer lists them.
 */
async function groupAnswer(d: ScimDeps, g: ScimGroupRecord, query: URLSearchParams, status = 200): Promise<ScimAnswer> {
  const sel = attributeSelection(query);
  const members = withMembers(sel) ? await membersOf(d, g) : null;
  return { status, body: selectAttributes(groupResource(d.baseUrl, g, members), sel), etag: versionTag(g.version) };
}

async function groupOf(d: ScimDeps, orgId: string, id: string): Promise<ScimGroupRecord> {
  const g = /^[0-9a-f-]{1,64}$/i.test(id) ? await d.store.groups.get(orgId, id.toLowerCase()) : null;
  if (!g) throw notFound();
  return g;
}

/** `POST /Groups` (behaviour.md §6.4 "Groups"): 201; a repeated displayName or externalId → 409 `uniqueness`. */
export async function createGroup(d: ScimDeps, ctx: CallContext, orgId: string, body: unknown, query: URLSearchParams): Promise<ScimAnswer> {
  const b = objectBody(body);
  const authz = await engineOf(d, ctx);
  const displayName = displayNameOf(b['displayName']);
  const externalId = externalIdOf(b['externalId']);
  // RFC 7644 §3.3: a repeated externalId is a conflict, as a repeated displayName is
  if (externalId && (await d.store.groups.byExternalId(orgId, externalId))) throw conflict('externalId already exists');
  if (await d.store.groups.byDisplayName(orgId, displayName)) throw conflict('displayName already exists');
  const members = await orgMembersOnly(d, orgId, memberValues(b['members']));
  const now = d.now();
  const g: ScimGroupRecord = { id: randomUUID(), orgId, displayName, externalId, version: 1, createdAt: now, updatedAt: now };
  // the tuples first, then the row with its `group.created` in one transaction (issue 32 §1): a group
  // whose tuples could not be written is never stored nor announced, and a lost race takes them back
  await syncTuples(authz, ctx, groupObject(orgId, g.id), members, []);
  if (!(await d.store.groups.insert(g, members, [{ name: 'group.created', data: groupEvent(g, { all: members }) }]))) {
    await syncTuples(authz, ctx, groupObject(orgId, g.id), [], members);
    throw conflict('displayName already exists');
  }
  return { ...(await groupAnswer(d, g, query, 201)), location: `${d.baseUrl}/scim/v2/Groups/${g.id}` };
}

/**
 * `GET /Groups/{id}` with `attributes` / `excludedAttributes` (RFC 7644 §3.4.2.5; Entra ID's
 * `excludedAttributes=members`); `If-None-Match` naming the current version → 304 (RFC 7644 §3.14).
 */
export async function getGroup(d: ScimDeps, ctx: CallContext, orgId: string, id: string, query: URLSearchParams, ifNoneMatch?: string): Promise<ScimAnswer> {
  await engineOf(d, ctx);
  const g = await groupOf(d, orgId, id);
  if (notModified(g.version, ifNoneMatch)) return { status: 304, body: null, etag: versionTag(g.version) };
  return groupAnswer(d, g, query);
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
  const sel = attributeSelection(query);
  const members = withMembers(sel) ? await d.store.groups.members(orgId, rows.map((g) => g.id)) : null;
  return { status: 200, body: listResponse(rows.map((g) => selectAttributes(groupResource(d.baseUrl, g, members ? members.get(g.id) ?? [] : null), sel)), total, start) };
}

/**
 * Writes the tuple difference, then stores `next` (a changed copy of `g`) at the next version with the
 * member rows of `diff` and its `group.updated` in one transaction, only if the stored version is still
 * `g.version` (else the tuples are taken back and 412: a concurrent change, RFC 7644 §3.14).
 */
async function saveGroup(d: ScimDeps, ctx: CallContext, authz: AuthzInternalClient, g: ScimGroupRecord, next: ScimGroupRecord, diff: MemberDiff, query: URLSearchParams): Promise<ScimAnswer> {
  const { add, remove } = diff;
  const changed = add.length > 0 || remove.length > 0 || next.displayName !== g.displayName || next.externalId !== g.externalId;
  if (!changed) return groupAnswer(d, g, query);
  if (next.displayName.toLowerCase() !== g.displayName.toLowerCase()) {
    const other = await d.store.groups.byDisplayName(g.orgId, next.displayName);
    if (other && other.id !== g.id) throw conflict('displayName already exists');
  }
  await syncTuples(authz, ctx, groupObject(g.orgId, g.id), add, remove);
  const saved = { ...next, version: g.version + 1, updatedAt: d.now() };
  const outcome = await d.store.groups.update(saved, { add, remove }, [{ name: 'group.updated', data: groupEvent(saved, { diff }) }], g.version);
  if (outcome !== 'updated') {
    await syncTuples(authz, ctx, groupObject(g.orgId, g.id), remove, add);
    if (outcome === 'stale') throw new ScimError(412, 'the resource was changed meanwhile; read it again');
    throw conflict('displayName already exists');
  }
  return groupAnswer(d, saved, query);
}

/** `PUT /Groups/{id}`: replaces displayName, externalId and members; `If-Match` with another version → 412 (RFC 7644 §3.14). */
export async function replaceGroup(d: ScimDeps, ctx: CallContext, orgId: string, id: string, body: unknown, ifMatch: string | undefined, query: URLSearchParams): Promise<ScimAnswer> {
  const b = objectBody(body);
  const authz = await engineOf(d, ctx);
  const g = await groupOf(d, orgId, id);
  checkIfMatch(g.version, ifMatch);
  const next = { ...g, displayName: displayNameOf(b['displayName']), externalId: externalIdOf(b['externalId']) };
  const state = new MemberState(new Set(await membersOf(d, g)));
  state.present.clear();
  for (const m of await orgMembersOnly(d, orgId, memberValues(b['members']))) state.present.add(m);
  return saveGroup(d, ctx, authz, g, next, state.diff(), query);
}

/** Whether an operation of a PATCH sets the whole member list (replace, or an unfiltered remove of all). */
function replacesMembers(op: PatchOperation): boolean {
  const path = op.path ? stripUrn(op.path).toLowerCase() : null;
  if (path === 'members') return op.op === 'replace' || (op.op === 'remove' && (op.value === undefined || op.value === null));
  if (path === null && op.op === 'replace' && op.value && typeof op.value === 'object' && !Array.isArray(op.value)) {
    return Object.keys(op.value).some((k) => k.toLowerCase() === 'members');
  }
  return false;
}

/** The member ids a PATCH names (to add or remove), lower-cased; filters that are not `value eq` are left to the operation. */
function namedMembers(ops: readonly PatchOperation[]): string[] {
  const out = new Set<string>();
  for (const op of ops) {
    const vp = op.path ? valuePath(op.path) : null;
    if (vp) {
      const target = vp.attr.toLowerCase() === 'members' ? valueEq(vp.filter) : null;
      if (target !== null) out.add(target.toLowerCase());
    } else if (op.path && stripUrn(op.path).toLowerCase() === 'members') {
      for (const id of memberValues(op.value)) out.add(id);
    } else if (!op.path && op.value && typeof op.value === 'object' && !Array.isArray(op.value)) {
      for (const [k, v] of Object.entries(op.value as Record<string, unknown>)) if (k.toLowerCase() === 'members') for (const id of memberValues(v)) out.add(id);
    }
  }
  return [...out];
}

/**
 * `PATCH /Groups/{id}`: `add`/`replace`/`remove` on `members` (path filter `members[value eq "x"]`,
 * value-array form, or an unfiltered remove that clears all) and on `displayName`/`externalId`;
 * `If-Match` with another version → 412 (RFC 7644 §3.14). Adding or removing named members reads and
 * writes only their rows (Entra ID and Okta send those); only an operation that replaces or clears the
 * whole list reads every member.
 */
export async function patchGroup(d: ScimDeps, ctx: CallContext, orgId: string, id: string, body: unknown, ifMatch: string | undefined, query: URLSearchParams): Promise<ScimAnswer> {
  const ops = patchOperations(body);
  const authz = await engineOf(d, ctx);
  const g = await groupOf(d, orgId, id);
  checkIfMatch(g.version, ifMatch);
  const next: ScimGroupRecord = { ...g };
  const complete = ops.some(replacesMembers);
  const state = complete
    ? new MemberState(new Set(await membersOf(d, g)))
    : new MemberState(await d.store.groups.membersAmong(orgId, g.id, namedMembers(ops)));
  const present = state.present;
  const addMembers = async (ids: string[]) => {
    for (const m of await orgMembersOnly(d, orgId, ids.filter((i) => !present.has(i)))) present.add(m);
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
      if (op.op === 'remove') present.delete(target.toLowerCase());
      else await addMembers([target.toLowerCase()]);
    } else if (path === 'members') {
      if (op.op === 'remove') {
        if (op.value === undefined || op.value === null) present.clear();
        else for (const m of memberValues(op.value)) present.delete(m);
      } else {
        if (op.op === 'replace') present.clear();
        await addMembers(memberValues(op.value));
      }
    } else if (path !== null) {
      if (op.op !== 'remove') setAttr(path, op.value);
    } else if (op.op !== 'remove') {
      if (!op.value || typeof op.value !== 'object' || Array.isArray(op.value)) throw badRequest('invalidValue', 'a patch without path needs an object value');
      for (const [k, v] of Object.entries(op.value as Record<string, unknown>)) {
        if (k.toLowerCase() === 'members') {
          if (op.op === 'replace') present.clear();
          await addMembers(memberValues(v));
        } else {
          setAttr(k, v);
        }
      }
    }
  }
  return saveGroup(d, ctx, authz, g, next, state.diff(), query);
}

/**
 * Takes a deprovisioned user out of every group of the org (RFC 7644 §3.6: a deleted resource is not
 * returned again, as a group member either): per group the member tuple is deleted and `group.updated`
 * emitted, as a PATCH removing the member would.
 */
export async function removeFromGroups(d: ScimDeps, ctx: CallContext, orgId: string, userId: string): Promise<void> {
  for (let round = 0; round < 5; round++) {
    let raced = false;
    for (const g of await d.store.groups.holding(orgId, userId)) {
      const diff = { add: [], remove: [userId] };
      try {
        if (d.authz) await saveGroup(d, ctx, d.authz, g, g, diff, new URLSearchParams());
        else if ((await d.store.groups.update({ ...g, version: g.version + 1, updatedAt: d.now() }, diff, [], g.version)) === 'stale') raced = true;
      } catch (err) {
        // a concurrent change of the group: read it again and retry
        if (!(err instanceof ScimError && err.status === 412)) throw err;
        raced = true;
      }
    }
    if (!raced) return;
  }
}

/** `DELETE /Groups/{id}`: the group and its membership tuples → 204; `If-Match` with another version → 412. */
export async function deleteGroup(d: ScimDeps, ctx: CallContext, orgId: string, id: string, ifMatch?: string): Promise<ScimAnswer> {
  const authz = await engineOf(d, ctx);
  const g = await groupOf(d, orgId, id);
  checkIfMatch(g.version, ifMatch);
  await syncTuples(authz, ctx, groupObject(orgId, g.id), [], await membersOf(d, g));
  await d.store.groups.delete(orgId, g.id, [{ name: 'group.deleted', data: groupEvent(g) }]);
  return { status: 204, body: null };
}
