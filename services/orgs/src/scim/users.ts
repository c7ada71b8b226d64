/**
 * @module orgs/scim/users
 * `/scim/v2/Users` (RFC 7644 §3.3-§3.6; behaviour.md §6.4): the org's members as SCIM users. authn
 * owns the user rows (AuthnInternal), orgs the membership and the org's `externalId` of each user.
 * Create is idempotent on `externalId` and `userName`; `active: false` and DELETE deprovision (authn
 * deletes every session before it answers); attribute changes emit `user.scim_updated`.
 */
import type { common } from '@gatehouse/contracts';
import type { CallContext } from '@gatehouse/rpc';
import type { ScimDeps } from './deps.ts';
import { badRequest, conflict, notFound } from './errors.ts';
import { matches, parseFilter } from './filter.ts';
import { patchOperations, scimBoolean, stripUrn, valuePath } from './patch.ts';
import { listResponse, userResource } from './resources.ts';
import type { ScimUserRecord } from './storage/ports.ts';

/** A SCIM answer: status and JSON body (null for 204), and the Location of a 201. */
export interface ScimAnswer {
  status: number;
  body: unknown;
  location?: string;
}

const USER_FILTER_ATTRS = ['username', 'emails.value', 'name.givenname', 'name.familyname', 'active', 'externalid'];

/** The mapped attributes of a User body (behaviour.md §6.4 "User mapping"); undefined = not sent. */
interface UserFields {
  userName?: string;
  givenName?: string | null;
  familyName?: string | null;
  phone?: string | null;
  active?: boolean;
  externalId?: string | null;
}

const str = (v: unknown, field: string, max = 320): string => {
  if (typeof v !== 'string') throw badRequest('invalidValue', `${field} must be a string`);
  if (v.length > max) throw badRequest('invalidValue', `${field} is too long`);
  return v;
};
const optStr = (v: unknown, field: string): string | null => (v === null ? null : str(v, field).trim() || null);

/** The primary (or first) `value` of a multi-valued attribute such as `emails`. */
function primaryValue(list: unknown, field: string): string | null | undefined {
  if (list === undefined) return undefined;
  if (list === null) return null;
  if (!Array.isArray(list)) throw badRequest('invalidValue', `${field} must be an array`);
  if (list.length === 0) return null;
  const items = list as Array<{ value?: unknown; primary?: unknown } | null>;
  const pick = items.find((e) => e && (e.primary === true || e.primary === 'True' || e.primary === 'true')) ?? items[0];
  if (!pick || typeof pick !== 'object') throw badRequest('invalidValue', `${field} must hold objects with a value`);
  return optStr(pick.value ?? null, `${field}.value`);
}

/** Phone numbers as providers write them (`+1 (425) 555-0100`): separators removed; authn validates the rest. */
const normalisePhone = (p: string | null): string | null => (p === null ? null : p.replace(/[\s().-]/g, '') || null);

/** The fields of a full User body (POST, PUT). @throws ScimError 400 `invalidSyntax` / `invalidValue` */
function fieldsOf(body: unknown): UserFields {
  if (!body || typeof body !== 'object' || Array.isArray(body)) throw badRequest('invalidSyntax', 'the body must be a JSON object');
  const b = body as Record<string, unknown>;
  const out: UserFields = {};
  const email = primaryValue(b['emails'], 'emails');
  const userName = b['userName'] === undefined || b['userName'] === null ? email : optStr(b['userName'], 'userName');
  if (userName) out.userName = userName;
  if (b['name'] !== undefined && b['name'] !== null) {
    if (typeof b['name'] !== 'object' || Array.isArray(b['name'])) throw badRequest('invalidValue', 'name must be an object');
    const n = b['name'] as Record<string, unknown>;
    out.givenName = n['givenName'] === undefined ? null : optStr(n['givenName'], 'name.givenName');
    out.familyName = n['familyName'] === undefined ? null : optStr(n['familyName'], 'name.familyName');
  }
  const phone = primaryValue(b['phoneNumbers'], 'phoneNumbers');
  if (phone !== undefined) out.phone = normalisePhone(phone);
  if (b['active'] !== undefined && b['active'] !== null) out.active = scimBoolean(b['active'], 'active');
  if (b['externalId'] !== undefined) out.externalId = optStr(b['externalId'], 'externalId');
  return out;
}

async function findUser(d: ScimDeps, ctx: CallContext, id: string): Promise<common.User | null> {
  const { users } = await authnOf(d).FindUsers({ ids: [id] }, ctx);
  return users[0] ?? null;
}

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

/** The org's member `id` as a user, or 404 (another org's ids too, behaviour.md §6.4). */
async function memberUser(d: ScimDeps, ctx: CallContext, orgId: string, id: string): Promise<{ user: common.User; link: ScimUserRecord | null }> {
  if (!/^[0-9a-f-]{1,64}$/i.test(id) || !(await d.orgs.isMember(orgId, id.toLowerCase()))) throw notFound();
  const user = await findUser(d, ctx, id.toLowerCase());
  if (!user) throw notFound();
  return { user, link: await d.store.users.get(orgId, user.id) };
}

const userEvent = (user: common.User, orgId: string, link: ScimUserRecord | null) => ({ user, org_id: orgId, external_id: link?.externalId ?? null });

/** `POST /Users` (behaviour.md §6.4 "Create user"). */
export async function createUser(d: ScimDeps, ctx: CallContext, orgId: string, body: unknown): Promise<ScimAnswer> {
  const f = fieldsOf(body);
  if (!f.userName) throw badRequest('invalidValue', 'userName is required');
  const answer = (user: common.User, link: ScimUserRecord | null, status: number): ScimAnswer => {
    const r = userResource(d.baseUrl, user, link);
    return { status, body: r, ...(status === 201 ? { location: (r['meta'] as { location: string }).location } : {}) };
  };
  if (f.externalId) {
    const known = await d.store.users.byExternalId(orgId, f.externalId);
    if (known && (await d.orgs.isMember(orgId, known.userId))) {
      const user = await findUser(d, ctx, known.userId);
      if (user) return answer(user, known, 200);
    }
  }
  const authn = authnOf(d);
  const { users: [holder] } = await authn.FindUsers({ ids: [], email: f.userName }, ctx);
  if (holder) {
    if (!(await d.orgs.isMember(orgId, holder.id))) throw conflict('userName already exists');
    return answer(holder, await d.store.users.get(orgId, holder.id), 200);
  }
  const out = await authn.ProvisionUser({
    email: f.userName, given_name: f.givenName ?? null, family_name: f.familyName ?? null, phone_number: f.phone ?? null, active: f.active ?? true,
  }, ctx);
  const user = out.user!;
  if (!out.created && !(await d.orgs.isMember(orgId, user.id))) throw conflict('userName already exists');
  await d.orgs.addMember(orgId, user.id);
  const now = d.now();
  const link: ScimUserRecord = { orgId, userId: user.id, externalId: f.externalId ?? null, createdAt: now, updatedAt: now };
  await d.store.users.put(link);
  if (out.created) d.emit('user.provisioned', userEvent(user, orgId, link));
  return answer(user, link, out.created ? 201 : 200);
}

/** `GET /Users/{id}`. */
export async function getUser(d: ScimDeps, ctx: CallContext, orgId: string, id: string): Promise<ScimAnswer> {
  const { user, link } = await memberUser(d, ctx, orgId, id);
  return { status: 200, body: userResource(d.baseUrl, user, link) };
}

/**
 * A 1-based `startIndex` and a `count` of at most {@link MAX_RESULTS} (RFC 7644 §3.4.2.4: below 1
 * means 1, a negative count means 0). @throws ScimError 400 `invalidValue` when not integers
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

/** `GET /Users?filter&startIndex&count` (behaviour.md §6.4 "List users"). */
export async function listUsers(d: ScimDeps, ctx: CallContext, orgId: string, query: URLSearchParams): Promise<ScimAnswer> {
  const filterText = query.get('filter');
  const term = filterText === null || filterText.trim() === '' ? null : parseFilter(filterText, USER_FILTER_ATTRS, ['active']);
  const { start, count } = pageOf(query);
  const ids = await d.orgs.memberIds(orgId);
  const links = new Map((await d.store.users.list(orgId)).map((l) => [l.userId, l]));
  const users: common.User[] = [];
  for (let i = 0; i < ids.length; i += 1000) users.push(...(await authnOf(d).FindUsers({ ids: ids.slice(i, i + 1000) }, ctx)).users);
  const valueOf = (u: common.User, attr: string): string | boolean | null => {
    switch (attr) {
      case 'username': case 'emails.value': return u.email ?? null;
      case 'name.givenname': return u.given_name ?? null;
      case 'name.familyname': return u.family_name ?? null;
      case 'active': return u.revoked_timestamp === null || u.revoked_timestamp === undefined;
      default: return links.get(u.id)?.externalId ?? null;
    }
  };
  const hits = term ? users.filter((u) => matches(term, valueOf(u, term.attr))) : users;
  const page = hits.slice(start - 1, start - 1 + count);
  return { status: 200, body: listResponse(page.map((u) => userResource(d.baseUrl, u, links.get(u.id) ?? null)), hits.length, start) };
}

/** Applies changed fields: authn's attributes, then `active`, then the org's externalId; emits §8 events. */
async function applyUser(d: ScimDeps, ctx: CallContext, orgId: string, current: { user: common.User; link: ScimUserRecord | null }, f: UserFields): Promise<ScimAnswer> {
  let { user } = current;
  const authn = authnOf(d);
  let attrsChanged = false;
  const changes: { email?: string; given_name?: string; family_name?: string; phone_number?: string } = {};
  if (f.userName !== undefined && f.userName.toLowerCase() !== (user.email ?? '')) changes.email = f.userName;
  if (f.givenName !== undefined && (f.givenName ?? null) !== (user.given_name ?? null)) changes.given_name = f.givenName ?? '';
  if (f.familyName !== undefined && (f.familyName ?? null) !== (user.family_name ?? null)) changes.family_name = f.familyName ?? '';
  if (f.phone !== undefined && (f.phone ?? null) !== (user.phone_number ?? null)) changes.phone_number = f.phone ?? '';
  if (Object.keys(changes).length > 0) {
    try {
      user = await authn.UpdateProvisionedUser({ user_id: user.id, ...changes }, ctx);
    } catch (err) {
      if ((err as { code?: string }).code === 'already_exists' && changes.email) throw conflict('userName already exists');
      throw err;
    }
    attrsChanged = true;
  }
  let link = current.link;
  const externalId = f.externalId === undefined ? link?.externalId ?? null : f.externalId;
  if (!link || externalId !== link.externalId) {
    const now = d.now();
    link = { orgId, userId: user.id, externalId, createdAt: link?.createdAt ?? now, updatedAt: now };
    await d.store.users.put(link);
    attrsChanged = attrsChanged || current.link?.externalId !== externalId;
  }
  if (attrsChanged) d.emit('user.scim_updated', userEvent(user, orgId, link));
  if (f.active !== undefined) {
    const out = await authn.SetUserActive({ user_id: user.id, active: f.active }, ctx);
    user = out.user!;
    if (out.changed) d.emit(f.active ? 'user.scim_updated' : 'user.deprovisioned', userEvent(user, orgId, link));
  }
  return { status: 200, body: userResource(d.baseUrl, user, link) };
}

/** `PUT /Users/{id}`: replaces userName, name, emails, phone, active and externalId (behaviour.md §6.4). */
export async function replaceUser(d: ScimDeps, ctx: CallContext, orgId: string, id: string, body: unknown): Promise<ScimAnswer> {
  const current = await memberUser(d, ctx, orgId, id);
  const f = fieldsOf(body);
  if (!f.userName) throw badRequest('invalidValue', 'userName is required');
  return applyUser(d, ctx, orgId, current, {
    userName: f.userName, givenName: f.givenName ?? null, familyName: f.familyName ?? null, phone: f.phone ?? null,
    active: f.active ?? true, externalId: f.externalId ?? null,
  });
}

/** One `add`/`replace` of a user attribute path (or a no-path object key) into `f`; others are ignored. */
function patchUserPath(f: UserFields, rawPath: string, value: unknown): void {
  const vp = valuePath(rawPath);
  if (vp) {
    // Entra ID: emails[type eq "work"].value, phoneNumbers[type eq "work"].value
    const attr = vp.attr.toLowerCase();
    if (attr === 'emails' && (vp.sub === null || vp.sub === 'value')) f.userName = vp.sub ? str(value, 'emails.value') : primaryValue(value, 'emails') ?? undefined;
    if (attr === 'phonenumbers' && (vp.sub === null || vp.sub === 'value')) f.phone = normalisePhone(vp.sub ? optStr(value, 'phoneNumbers.value') : primaryValue(value, 'phoneNumbers') ?? null);
    return;
  }
  switch (stripUrn(rawPath).toLowerCase()) {
    case 'active': f.active = scimBoolean(value, 'active'); break;
    case 'username': f.userName = str(value, 'userName'); break;
    case 'externalid': f.externalId = optStr(value, 'externalId'); break;
    case 'name.givenname': f.givenName = optStr(value, 'name.givenName'); break;
    case 'name.familyname': f.familyName = optStr(value, 'name.familyName'); break;
    case 'name': {
      if (!value || typeof value !== 'object') throw badRequest('invalidValue', 'name must be an object');
      const n = value as Record<string, unknown>;
      if (n['givenName'] !== undefined) f.givenName = optStr(n['givenName'], 'name.givenName');
      if (n['familyName'] !== undefined) f.familyName = optStr(n['familyName'], 'name.familyName');
      break;
    }
    case 'emails': { const e = primaryValue(value, 'emails'); if (e) f.userName = e; break; }
    case 'phonenumbers': f.phone = normalisePhone(primaryValue(value, 'phoneNumbers') ?? null); break;
    default: break; // unsupported paths are ignored (behaviour.md §6.4)
  }
}

/** `PATCH /Users/{id}` (behaviour.md §6.4 "Replace / patch"). */
export async function patchUser(d: ScimDeps, ctx: CallContext, orgId: string, id: string, body: unknown): Promise<ScimAnswer> {
  const ops = patchOperations(body);
  const current = await memberUser(d, ctx, orgId, id);
  const f: UserFields = {};
  for (const op of ops) {
    if (op.op !== 'add' && op.op !== 'replace') continue; // unsupported ops are ignored
    if (op.path !== null) {
      patchUserPath(f, op.path, op.value);
    } else {
      if (!op.value || typeof op.value !== 'object' || Array.isArray(op.value)) throw badRequest('invalidValue', 'a patch without path needs an object value');
      for (const [k, v] of Object.entries(op.value as Record<string, unknown>)) patchUserPath(f, k, v);
    }
  }
  return applyUser(d, ctx, orgId, current, f);
}

/** `DELETE /Users/{id}`: deprovisions (the user stays, `active: false`) → 204 (behaviour.md §6.4). */
export async function deleteUser(d: ScimDeps, ctx: CallContext, orgId: string, id: string): Promise<ScimAnswer> {
  const current = await memberUser(d, ctx, orgId, id);
  const out = await authnOf(d).SetUserActive({ user_id: current.user.id, active: false }, ctx);
  if (out.changed) d.emit('user.deprovisioned', userEvent(out.user!, orgId, current.link));
  return { status: 204, body: null };
}
