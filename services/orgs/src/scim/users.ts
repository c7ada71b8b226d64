/**
 * @module orgs/scim/users
 * `/scim/v2/Users` (RFC 7644 §3.3-§3.6, §3.14; behaviour.md §6.4). authn owns the Gatehouse account
 * (email, names, phone, revocation, sessions); orgs owns the membership and the org's SCIM view of
 * each member ({@link ScimUserRecord}: any `userName`, unique per org, `externalId`, the emails and phone
 * numbers as sent, a version). Lists and filters run on that view in the orgs database.
 *
 * - create: a `userName` or `externalId` already held in the org, or an email held by any other
 *   account → 409 `uniqueness`; otherwise 201, the account provisioned in authn (its email is the
 *   primary email, else the `userName` when it has the shape of an address) and added to the org;
 * - `active: false` and DELETE deprovision (authn deletes every session before it answers); DELETE
 *   also removes the membership and the SCIM view: from then on every operation on the id is 404;
 * - PUT / PATCH honour `If-Match` (`meta.version`, a weak ETag) → 412 when stale.
 */
import type { common } from '@gatehouse/contracts';
import { auditRecord } from '@gatehouse/auth';
import type { CallContext } from '@gatehouse/rpc';
import scimFilter from 'scim2-parse-filter';
import type { ScimDeps } from './deps.ts';
import { badRequest, conflict, notFound, ScimError } from './errors.ts';
import { compileFilter, type FilterSchema } from './filter.ts';
import { removeFromGroups } from './groups.ts';
import { patchOperations } from './patch.ts';
import { checkIfMatch, listResponse, notModified, selectAttributes, userResource, versionTag } from './resources.ts';
import type { ScimOutboxEvent, ScimUserRecord } from './storage/ports.ts';
import { lowerFilter, modelOf, patchModel, primaryOf, type UserModel } from './user-model.ts';

/** A SCIM answer: status and JSON body (null for 204 and 304), the Location of a 201, the ETag of a single resource (RFC 7644 §3.14). */
export interface ScimAnswer {
  status: number;
  body: unknown;
  location?: string;
  etag?: string;
}

/** What a filter on Users may name, as columns of `orgs_scim_users u` and `orgs_scim_user_values v`. */
export const USER_FILTER: FilterSchema = {
  attrs: {
    id: { sql: 'u.user_id', kind: 'string', caseExact: true },
    username: { sql: 'u.user_name_key', kind: 'string', lowered: true },
    externalid: { sql: 'u.external_id', kind: 'string', caseExact: true },
    displayname: { sql: 'u.display_name', kind: 'string' },
    'name.givenname': { sql: 'u.given_name', kind: 'string' },
    'name.familyname': { sql: 'u.family_name', kind: 'string' },
    active: { sql: 'u.active', kind: 'boolean' },
    'meta.created': { sql: 'u.created_at', kind: 'instant' },
    'meta.lastmodified': { sql: 'u.updated_at', kind: 'instant' },
  },
  multi: Object.fromEntries((['emails', 'phoneNumbers'] as const).map((attr) => [attr.toLowerCase(), {
    from: 'orgs_scim_user_values v',
    join: `v.org_id = u.org_id and v.user_id = u.user_id and v.attr = '${attr}'`,
    subs: {
      value: { sql: 'v.value_key', kind: 'string', lowered: true },
      type: { sql: 'v.type', kind: 'string', lowered: true },
      primary: { sql: 'v.is_primary', kind: 'boolean' },
    },
  }])),
};

const EMAIL_SHAPE = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

/** The account email of a SCIM user: the primary email, else an address-shaped userName, else none (''). */
const accountEmail = (m: UserModel): string => primaryOf(m.emails) ?? (EMAIL_SHAPE.test(m.userName) ? m.userName : '');

function authnOf(d: ScimDeps): NonNullable<ScimDeps['authn']> {
  if (!d.authn) throw new ScimUnavailable();
  return d.authn;
}

/** authn cannot be reached from this process (no --authn-address): 503. */
export class ScimUnavailable extends Error {
  constructor() {
    super('the authn service is not reachable');
  }
}

async function findUser(d: ScimDeps, ctx: CallContext, id: string): Promise<common.User | null> {
  const { users } = await authnOf(d).FindUsers({ ids: [id] }, ctx);
  return users[0] ?? null;
}

/** The SCIM view of an account that has none yet (a member added outside SCIM). */
function projectionOf(orgId: string, u: common.User, row: ScimUserRecord | null, now: number): ScimUserRecord {
  const email = u.email ?? null;
  return {
    orgId, userId: u.id, externalId: row?.externalId ?? null, userName: email ?? u.id,
    givenName: u.given_name ?? null, familyName: u.family_name ?? null, displayName: null,
    emails: email ? [{ value: email, type: 'work', primary: true }] : [],
    phoneNumbers: u.phone_number ? [{ value: u.phone_number, type: 'work', primary: true }] : [],
    active: u.revoked_timestamp === null || u.revoked_timestamp === undefined,
    version: 1, createdAt: row?.createdAt ?? Number(u.created_at), updatedAt: now,
  };
}

/** Projects up to 1000 members of the org that have no SCIM view yet (from authn's rows). */
async function projectPending(d: ScimDeps, ctx: CallContext, orgId: string): Promise<void> {
  const ids = await d.store.users.unprojected(orgId, 1000);
  if (ids.length === 0) return;
  const { users } = await authnOf(d).FindUsers({ ids }, ctx);
  for (const u of users) {
    const row = await d.store.users.get(orgId, u.id);
    if (row && row.userName !== null) continue;
    // a userName taken meanwhile by a SCIM create: the account's id stands in
    if (!(await d.store.users.put(projectionOf(orgId, u, row, d.now())))) await d.store.users.put({ ...projectionOf(orgId, u, row, d.now()), userName: u.id });
  }
}

/** The org's member `id` with its SCIM view, or 404 (another org's ids and deleted users too). */
async function memberUser(d: ScimDeps, ctx: CallContext, orgId: string, id: string): Promise<ScimUserRecord> {
  const userId = id.toLowerCase();
  if (!/^[0-9a-f-]{1,64}$/.test(userId) || !(await d.orgs.isMember(orgId, userId))) throw notFound();
  const row = await d.store.users.get(orgId, userId);
  if (row && row.userName !== null) return row;
  const user = await findUser(d, ctx, userId);
  if (!user) throw notFound();
  const projected = projectionOf(orgId, user, row, d.now());
  if (!(await d.store.users.put(projected))) await d.store.users.put({ ...projected, userName: user.id });
  return (await d.store.users.get(orgId, userId))!;
}

/** A user's answer: the representation narrowed by `attributes` / `excludedAttributes` (RFC 7644 §3.4.2.5) and its ETag (§3.14). */
const userAnswer = (d: ScimDeps, row: ScimUserRecord, query: URLSearchParams, status = 200): ScimAnswer =>
  ({ status, body: selectAttributes(userResource(d.baseUrl, row), attributeSelection(query)), etag: versionTag(row.version) });

const modelOfRow = (r: ScimUserRecord): UserModel => ({
  userName: r.userName ?? r.userId, externalId: r.externalId, givenName: r.givenName, familyName: r.familyName, displayName: r.displayName,
  emails: r.emails, phoneNumbers: r.phoneNumbers, active: r.active,
});

const userEvent = (user: common.User, orgId: string, externalId: string | null) => ({ user, org_id: orgId, external_id: externalId });

/**
 * A §8 SCIM event, and for provisioning and deprovisioning its §5.7 audit row (`scim.user_provisioned`,
 * `scim.user_deprovisioned`; the actor is the org's SCIM client, a service account), written to orgs'
 * outbox with the SCIM row that they describe.
 */
function scimEvents(ctx: CallContext, name: 'user.provisioned' | 'user.deprovisioned' | 'user.scim_updated', user: common.User, orgId: string, externalId: string | null): ScimOutboxEvent[] {
  const events: ScimOutboxEvent[] = [{ name, data: userEvent(user, orgId, externalId) }];
  const action = name === 'user.provisioned' ? 'scim.user_provisioned' : name === 'user.deprovisioned' ? 'scim.user_deprovisioned' : null;
  if (action) {
    events.push({ name: 'audit.recorded', data: auditRecord(ctx, action, { actor: { type: 'service_account', id: null }, resourceType: 'user', resourceId: user.id, details: { org_id: orgId } }) });
  }
  return events;
}
const MODEL_KEYS = ['userName', 'externalId', 'givenName', 'familyName', 'displayName', 'emails', 'phoneNumbers', 'active'] as const;
/** Equal attribute by attribute (key order aside); `except` leaves some out. */
const sameModel = (a: UserModel, b: UserModel, except: ReadonlyArray<keyof UserModel> = []): boolean =>
  MODEL_KEYS.every((k) => except.includes(k) || JSON.stringify(a[k]) === JSON.stringify(b[k]));

/** The `attributes` / `excludedAttributes` of a query (RFC 7644 §3.4.2.5), comma-separated. */
export function attributeSelection(query: URLSearchParams): { attributes: string[]; excluded: string[] } {
  const list = (name: string) => (query.get(name) ?? '').split(',').map((a) => a.trim()).filter((a) => a !== '');
  return { attributes: list('attributes'), excluded: list('excludedAttributes') };
}

/** `POST /Users` (behaviour.md §6.4 "Create user"). */
export async function createUser(d: ScimDeps, ctx: CallContext, orgId: string, body: unknown, query: URLSearchParams): Promise<ScimAnswer> {
  const m = modelOf(body);
  if (await d.store.users.byUserName(orgId, m.userName)) throw conflict('userName already exists');
  if (m.externalId && (await d.store.users.byExternalId(orgId, m.externalId))) throw conflict('externalId already exists');
  const authn = authnOf(d);
  let out;
  try {
    out = await authn.ProvisionUser({
      email: accountEmail(m), given_name: m.givenName, family_name: m.familyName, phone_number: primaryOf(m.phoneNumbers), active: m.active,
    }, ctx);
  } catch (err) {
    if ((err as { code?: string }).code === 'already_exists') throw conflict('the phone number belongs to another user');
    throw err;
  }
  // the email belongs to an account already (in this org or elsewhere): RFC 7644 §3.3 uniqueness
  if (!out.created) throw conflict('the email belongs to another user');
  const user = out.user!;
  await d.orgs.addMember(orgId, user.id);
  const now = d.now();
  const row: ScimUserRecord = { orgId, userId: user.id, ...m, version: 1, createdAt: now, updatedAt: now };
  if (!(await d.store.users.put(row, undefined, scimEvents(ctx, 'user.provisioned', user, orgId, m.externalId)))) throw conflict('userName already exists');
  return { ...userAnswer(d, row, query, 201), location: `${d.baseUrl}/scim/v2/Users/${row.userId}` };
}

/** `GET /Users/{id}`; `If-None-Match` naming the current version → 304 without a body (RFC 7644 §3.14). */
export async function getUser(d: ScimDeps, ctx: CallContext, orgId: string, id: string, query: URLSearchParams, ifNoneMatch?: string): Promise<ScimAnswer> {
  const row = await memberUser(d, ctx, orgId, id);
  if (notModified(row.version, ifNoneMatch)) return { status: 304, body: null, etag: versionTag(row.version) };
  return userAnswer(d, row, query);
}

/**
 * A 1-based `startIndex` and a `count` of at most 1000 (RFC 7644 §3.4.2.4: below 1 means 1, a
 * negative count means 0). @throws ScimError 400 `invalidValue` when not integers
 */
export function pageOf(query: URLSearchParams): { start: number; count: number } {
  const num = (name: string, dflt: number): number => {
    const raw = query.get(name);
    if (raw === null || raw.trim() === '') return dflt;
    if (!/^-?\d{1,9}$/.test(raw.trim())) throw badRequest('invalidValue', `${name} must be an integer`);
    return Number(raw.trim());
  };
  return { start: Math.max(1, num('startIndex', 1)), count: Math.min(1000, Math.max(0, num('count', 100))) };
}

/** The in-memory form of a filter, for a database without SQL (MongoDB). */
function evaluator(text: string): (u: ScimUserRecord) => boolean {
  const test = scimFilter.filter(lowerFilter(scimFilter.parse(text)));
  return (u) => test({
    id: u.userId, userName: u.userName?.toLowerCase(), externalId: u.externalId ?? undefined, displayName: u.displayName?.toLowerCase(),
    name: { givenName: u.givenName?.toLowerCase(), familyName: u.familyName?.toLowerCase() }, active: u.active,
    emails: u.emails.map((e) => ({ ...e, value: e.value.toLowerCase() })), phoneNumbers: u.phoneNumbers.map((e) => ({ ...e, value: e.value.toLowerCase() })),
  });
}

/** `GET /Users?filter&startIndex&count&attributes&excludedAttributes` and `POST /Users/.search` (behaviour.md §6.4 "List users"). */
export async function listUsers(d: ScimDeps, ctx: CallContext, orgId: string, query: URLSearchParams): Promise<ScimAnswer> {
  const filterText = query.get('filter');
  const where = filterText === null || filterText.trim() === '' ? null : compileFilter(filterText, USER_FILTER);
  const { start, count } = pageOf(query);
  await projectPending(d, ctx, orgId);
  const { total, rows } = await d.store.users.search(orgId, where, where && filterText ? evaluator(filterText) : null, { offset: start - 1, limit: count });
  const selection = attributeSelection(query);
  return { status: 200, body: listResponse(rows.map((r) => selectAttributes(userResource(d.baseUrl, r), selection)), total, start) };
}

/**
 * Writes `next` over `row`: authn's account first (email, names, phone; then `active`), then the SCIM
 * view with the next version (only if still at `row.version`, else 412); emits the §8 events.
 */
async function writeUser(d: ScimDeps, ctx: CallContext, orgId: string, row: ScimUserRecord, next: UserModel, query: URLSearchParams): Promise<ScimAnswer> {
  const before = modelOfRow(row);
  if (sameModel(before, next)) return userAnswer(d, row, query);
  if (next.userName.toLowerCase() !== before.userName.toLowerCase()) {
    const holder = await d.store.users.byUserName(orgId, next.userName);
    if (holder && holder.userId !== row.userId) throw conflict('userName already exists');
  }
  if (next.externalId && next.externalId !== before.externalId) {
    const holder = await d.store.users.byExternalId(orgId, next.externalId);
    if (holder && holder.userId !== row.userId) throw conflict('externalId already exists');
  }
  const authn = authnOf(d);
  let user: common.User | null = null;
  const changes: { email?: string; given_name?: string; family_name?: string; phone_number?: string } = {};
  const email = accountEmail(next);
  if (email !== '' && email.toLowerCase() !== accountEmail(before).toLowerCase()) changes.email = email;
  if (next.givenName !== before.givenName) changes.given_name = next.givenName ?? '';
  if (next.familyName !== before.familyName) changes.family_name = next.familyName ?? '';
  const phone = primaryOf(next.phoneNumbers);
  if (phone !== primaryOf(before.phoneNumbers)) changes.phone_number = phone ?? '';
  if (Object.keys(changes).length > 0) {
    try {
      user = await authn.UpdateProvisionedUser({ user_id: row.userId, ...changes }, ctx);
    } catch (err) {
      if ((err as { code?: string }).code === 'already_exists') throw conflict(changes.email ? 'the email belongs to another user' : 'the phone number belongs to another user');
      throw err;
    }
  }
  let activeChanged = false;
  if (next.active !== before.active) {
    const out = await authn.SetUserActive({ user_id: row.userId, active: next.active }, ctx);
    user = out.user!;
    activeChanged = out.changed;
  }
  const written: ScimUserRecord = { ...row, ...next, version: row.version + 1, updatedAt: d.now() };
  user ??= await findUser(d, ctx, row.userId);
  const events: ScimOutboxEvent[] = [];
  if (user) {
    if (!sameModel(next, before, ['active'])) events.push(...scimEvents(ctx, 'user.scim_updated', user, orgId, next.externalId));
    if (activeChanged) events.push(...scimEvents(ctx, next.active ? 'user.scim_updated' : 'user.deprovisioned', user, orgId, next.externalId));
  }
  if (!(await d.store.users.put(written, row.version, events))) {
    const now = await d.store.users.get(orgId, row.userId);
    if (now && now.version !== row.version) throw new ScimError(412, 'the resource was changed meanwhile; read it again');
    throw conflict('userName already exists');
  }
  return userAnswer(d, written, query);
}

/** `PUT /Users/{id}`: replaces userName, name, displayName, emails, phone numbers, active and externalId. */
export async function replaceUser(d: ScimDeps, ctx: CallContext, orgId: string, id: string, body: unknown, ifMatch: string | undefined, query: URLSearchParams): Promise<ScimAnswer> {
  const row = await memberUser(d, ctx, orgId, id);
  checkIfMatch(row.version, ifMatch);
  return writeUser(d, ctx, orgId, row, modelOf(body), query);
}

/** `PATCH /Users/{id}` (RFC 7644 §3.5.2; user-model.ts). */
export async function patchUser(d: ScimDeps, ctx: CallContext, orgId: string, id: string, body: unknown, ifMatch: string | undefined, query: URLSearchParams): Promise<ScimAnswer> {
  const ops = patchOperations(body);
  const row = await memberUser(d, ctx, orgId, id);
  checkIfMatch(row.version, ifMatch);
  return writeUser(d, ctx, orgId, row, patchModel(modelOfRow(row), ops), query);
}

/**
 * `DELETE /Users/{id}` → 204: deprovisioned in authn (sessions deleted), removed from the org and from its
 * groups (member tuples deleted), and its SCIM view dropped, so every later operation on the id is 404 (RFC 7644 §3.6).
 */
export async function deleteUser(d: ScimDeps, ctx: CallContext, orgId: string, id: string, ifMatch: string | undefined): Promise<ScimAnswer> {
  const row = await memberUser(d, ctx, orgId, id);
  checkIfMatch(row.version, ifMatch);
  const out = await authnOf(d).SetUserActive({ user_id: row.userId, active: false }, ctx);
  await d.orgs.removeMember(orgId, row.userId);
  await removeFromGroups(d, ctx, orgId, row.userId);
  await d.store.users.delete(orgId, row.userId, out.changed ? scimEvents(ctx, 'user.deprovisioned', out.user!, orgId, row.externalId) : []);
  return { status: 204, body: null };
}
