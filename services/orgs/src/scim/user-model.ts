/**
 * @module orgs/scim/user-model
 * The SCIM User as this server keeps it (RFC 7643 §4.1; behaviour.md §6.4 "User mapping") and the two
 * ways a client changes it: a full body (POST, PUT) and an RFC 7644 §3.5.2 PatchOp, both applied to a
 * {@link UserModel} in memory before anything is written.
 *
 * PATCH semantics: `add` / `replace` / `remove` on `userName`, `externalId`, `displayName`, `active`,
 * `name` and `name.givenName|familyName|formatted`, `emails` and `phoneNumbers` (whole, or value paths
 * such as `emails[type eq "work"].value` whose filter is evaluated by `scim2-parse-filter` over the
 * elements); the no-path form whose value object may use dotted keys (`"name.givenName"`) and
 * URN-qualified keys, as Entra ID and Okta send them; string booleans (`"False"`). A value-path filter
 * that matches nothing → 400 `noTarget` on `replace` and `remove` (an `add` creates the element with
 * the filter's `eq` values, RFC 7644 §3.5.2.1); an attribute the server does not keep → 400
 * `invalidPath`; `id`, `meta` and `groups` → 400 `mutability`.
 */
import scimFilter from 'scim2-parse-filter';
import { badRequest } from './errors.ts';
import { scimBoolean, stripUrn, type PatchOperation } from './patch.ts';
import type { ScimMultiValue, ScimUserRecord } from './storage/ports.ts';

/** The attributes a client writes (the SCIM view without ids, version and times; `userName` required). */
export type UserModel = Omit<ScimUserRecord, 'orgId' | 'userId' | 'version' | 'createdAt' | 'updatedAt' | 'userName'> & { userName: string };

const MAX_VALUES = 20;
const READ_ONLY = new Set(['id', 'meta', 'groups', 'schemas']);

const text = (v: unknown, field: string, max = 320): string | null => {
  if (v === null || v === undefined) return null;
  if (typeof v !== 'string') throw badRequest('invalidValue', `${field} must be a string`);
  if (v.length > max) throw badRequest('invalidValue', `${field} is too long`);
  return v.trim() === '' ? null : v.trim();
};

/**
 * A phone number as E.164: `+14255550100`, `+1 (425) 555-0100`, or an RFC 3966 global `tel:` URI
 * (`tel:+1-201-555-0123`, parameters such as `;ext=` dropped).
 * @throws ScimError 400 `invalidValue` for anything else (a local number has no country code)
 */
export function e164(raw: string, field = 'phoneNumbers.value'): string {
  let v = raw.trim();
  if (/^tel:/i.test(v)) v = v.slice(4).split(';')[0]!;
  const digits = v.replace(/[\s().-]/g, '');
  if (!/^\+[1-9]\d{1,14}$/.test(digits)) throw badRequest('invalidValue', `${field} must be an E.164 number or an RFC 3966 global tel: URI`);
  return digits;
}

/** One element of `emails` / `phoneNumbers` from a body. */
function element(v: unknown, attr: 'emails' | 'phoneNumbers'): ScimMultiValue {
  if (!v || typeof v !== 'object' || Array.isArray(v)) throw badRequest('invalidValue', `${attr} must hold objects with a value`);
  const o = v as Record<string, unknown>;
  const value = text(o['value'], `${attr}.value`);
  if (value === null) throw badRequest('invalidValue', `${attr}.value is required`);
  const type = text(o['type'], `${attr}.type`, 64);
  const primary = o['primary'] === undefined || o['primary'] === null ? false : scimBoolean(o['primary'], `${attr}.primary`);
  return { value: attr === 'phoneNumbers' ? e164(value) : value, type: type?.toLowerCase() ?? null, primary };
}

/** A multi-valued attribute: at most one primary (RFC 7643 §2.4), no duplicate values. */
function elements(v: unknown, attr: 'emails' | 'phoneNumbers'): ScimMultiValue[] {
  if (v === null || v === undefined) return [];
  const list = (Array.isArray(v) ? v : [v]).map((x) => element(x, attr));
  if (list.length > MAX_VALUES) throw badRequest('invalidValue', `too many ${attr}`);
  return normalise(list);
}

function normalise(list: ScimMultiValue[]): ScimMultiValue[] {
  const out: ScimMultiValue[] = [];
  for (const e of list) {
    const i = out.findIndex((x) => x.value.toLowerCase() === e.value.toLowerCase() && x.type === e.type);
    if (i === -1) out.push({ ...e });
    else out[i] = { ...e, primary: out[i]!.primary || e.primary };
  }
  // the last element marked primary wins
  const last = out.map((e) => e.primary).lastIndexOf(true);
  return out.map((e, i) => ({ ...e, primary: i === last }));
}

/** The primary (or first) value of a multi-valued attribute. */
export const primaryOf = (list: ScimMultiValue[]): string | null => (list.find((e) => e.primary) ?? list[0])?.value ?? null;

/**
 * A user from a full body (POST, PUT); attributes the server does not keep are ignored there (RFC 7644
 * §3.3). @throws ScimError 400 `invalidSyntax` / `invalidValue` (`userName is required`)
 */
export function modelOf(body: unknown): UserModel {
  if (!body || typeof body !== 'object' || Array.isArray(body)) throw badRequest('invalidSyntax', 'the body must be a JSON object');
  const b = body as Record<string, unknown>;
  const userName = text(b['userName'], 'userName');
  if (!userName) throw badRequest('invalidValue', 'userName is required');
  const name = b['name'];
  if (name !== undefined && name !== null && (typeof name !== 'object' || Array.isArray(name))) throw badRequest('invalidValue', 'name must be an object');
  const n = (name ?? {}) as Record<string, unknown>;
  return {
    userName, externalId: text(b['externalId'], 'externalId', 255),
    givenName: text(n['givenName'], 'name.givenName', 255), familyName: text(n['familyName'], 'name.familyName', 255),
    displayName: text(b['displayName'], 'displayName', 255),
    emails: elements(b['emails'], 'emails'), phoneNumbers: elements(b['phoneNumbers'], 'phoneNumbers'),
    active: b['active'] === undefined || b['active'] === null ? true : scimBoolean(b['active'], 'active'),
  };
}

/** A parsed PATCH path: attribute, optional value filter, optional sub-attribute (lower case). */
interface Target {
  attr: string;
  filter: scimFilter.Filter | null;
  sub: string | null;
  raw: string;
}

function targetOf(path: string): Target {
  const p = stripUrn(path.trim());
  const open = p.indexOf('[');
  if (open === -1) {
    const [attr, sub, more] = p.split('.');
    if (more !== undefined || !attr) throw badRequest('invalidPath', `invalid path "${path}"`);
    return { attr: attr.toLowerCase(), filter: null, sub: sub?.toLowerCase() ?? null, raw: path };
  }
  const close = p.lastIndexOf(']');
  const rest = p.slice(close + 1);
  if (close < open || (rest !== '' && !/^\.[A-Za-z$][\w$-]*$/.test(rest))) throw badRequest('invalidPath', `invalid path "${path}"`);
  let filter: scimFilter.Filter;
  try {
    filter = scimFilter.parse(p.slice(open + 1, close));
  } catch {
    throw badRequest('invalidPath', `invalid filter in path "${path}"`);
  }
  return { attr: p.slice(0, open).toLowerCase(), filter, sub: rest === '' ? null : rest.slice(1).toLowerCase(), raw: path };
}

/** The `attr eq "x"` pairs of a filter's top-level `and`s: what an `add` through a filter creates. */
function eqValues(f: scimFilter.Filter): Record<string, string | boolean> {
  if (f.op === 'and') return Object.assign({}, ...(f as scimFilter.LogExp).filters.map(eqValues)) as Record<string, string | boolean>;
  const c = f as scimFilter.Compare;
  if (c.op === 'eq' && (typeof c.compValue === 'string' || typeof c.compValue === 'boolean')) return { [c.attrPath.toLowerCase()]: c.compValue };
  return {};
}

/** The filter with every string operand lower-cased: the library compares exactly, SCIM strings do not (RFC 7643 §2.2). */
export function lowerFilter(f: scimFilter.Filter): scimFilter.Filter {
  switch (f.op) {
    case 'and': case 'or': return { ...f, filters: (f as scimFilter.LogExp).filters.map(lowerFilter) } as scimFilter.Filter;
    case 'not': return { ...f, filter: lowerFilter((f as scimFilter.NotFilter).filter) } as scimFilter.Filter;
    case '[]': return { ...f, valFilter: lowerFilter((f as scimFilter.ValuePath).valFilter) } as scimFilter.Filter;
    case 'pr': return f;
    case 'eq': case 'ne': case 'co': case 'sw': case 'ew': case 'gt': case 'ge': case 'lt': case 'le': {
      const c = f as scimFilter.Compare;
      return typeof c.compValue === 'string' ? { ...c, compValue: c.compValue.toLowerCase() } : c;
    }
  }
}

/** Whether an element matches a value filter (case-insensitive strings, RFC 7644 §3.4.2.2). */
function matcher(f: scimFilter.Filter): (e: ScimMultiValue) => boolean {
  const test = scimFilter.filter(lowerFilter(f));
  return (e) => test({ value: e.value.toLowerCase(), type: e.type ?? undefined, primary: e.primary });
}

const SUBS = new Set(['value', 'type', 'primary']);

/** Sets one sub-attribute of an element. */
function setSub(e: ScimMultiValue, sub: string, v: unknown, attr: 'emails' | 'phoneNumbers'): ScimMultiValue {
  switch (sub) {
    case 'value': {
      const value = text(v, `${attr}.value`);
      if (value === null) throw badRequest('invalidValue', `${attr}.value is required`);
      return { ...e, value: attr === 'phoneNumbers' ? e164(value) : value };
    }
    case 'type': return { ...e, type: text(v, `${attr}.type`, 64)?.toLowerCase() ?? null };
    default: return { ...e, primary: scimBoolean(v, `${attr}.primary`) };
  }
}

/** One operation on a multi-valued attribute. */
function patchMulti(list: ScimMultiValue[], op: string, t: Target, value: unknown, attr: 'emails' | 'phoneNumbers'): ScimMultiValue[] {
  if (t.sub !== null && !SUBS.has(t.sub)) throw badRequest('invalidPath', `"${t.raw}" is not an attribute this server keeps`);
  if (t.filter === null) {
    if (t.sub === null) {
      if (op === 'remove') return [];
      const given = elements(value, attr);
      return normalise(op === 'add' ? [...list, ...given] : given);
    }
    // `emails.value`: the primary (or only) element's sub-attribute
    if (op === 'remove') return t.sub === 'value' ? [] : list.map((e) => ({ ...e, ...(t.sub === 'type' ? { type: null } : { primary: false }) }));
    const i = Math.max(0, list.findIndex((e) => e.primary));
    if (list.length === 0) {
      if (op === 'remove') return list;
      if (t.sub !== 'value') throw badRequest('noTarget', `${attr} has no value for "${t.raw}"`);
      return [setSub({ value: '', type: null, primary: true }, 'value', value, attr)];
    }
    return normalise(list.map((e, j) => (j === i ? setSub(e, t.sub!, value, attr) : e)));
  }
  const hit = matcher(t.filter);
  const matched = list.some(hit);
  if (!matched) {
    if (op !== 'add') throw badRequest('noTarget', `no value of ${attr} matches "${t.raw}"`);
    // RFC 7644 §3.5.2.1: create the element the filter describes
    const eq = eqValues(t.filter);
    let e: ScimMultiValue = { value: typeof eq['value'] === 'string' ? eq['value'] : '', type: typeof eq['type'] === 'string' ? eq['type'].toLowerCase() : null, primary: eq['primary'] === true };
    if (t.sub !== null) e = setSub(e, t.sub, value, attr);
    else e = element({ ...e, ...(value && typeof value === 'object' ? value as object : {}) }, attr);
    if (e.value === '') throw badRequest('noTarget', `no value of ${attr} matches "${t.raw}"`);
    return normalise([...list, e]);
  }
  if (op === 'remove') return t.sub === null || t.sub === 'value' ? list.filter((e) => !hit(e)) : list.map((e) => (hit(e) ? setSub(e, t.sub!, t.sub === 'primary' ? false : null, attr) : e));
  if (t.sub !== null) return normalise(list.map((e) => (hit(e) ? setSub(e, t.sub!, value, attr) : e)));
  const replacement = element(value, attr);
  return normalise(list.map((e) => (hit(e) ? { ...e, ...replacement } : e)));
}

/** One operation with a path on the model (mutates `m`). */
function applyPath(m: UserModel, op: string, path: string, value: unknown): void {
  const t = targetOf(path);
  if (READ_ONLY.has(t.attr)) throw badRequest('mutability', `"${path}" is read-only`);
  if (t.attr === 'emails' || t.attr === 'phonenumbers') {
    const attr = t.attr === 'emails' ? 'emails' : 'phoneNumbers';
    m[attr] = patchMulti(m[attr], op, t, value, attr);
    return;
  }
  if (t.filter !== null) throw badRequest('invalidPath', `"${path}": a filter applies to emails and phoneNumbers only`);
  const clear = op === 'remove';
  switch (t.sub === null ? t.attr : `${t.attr}.${t.sub}`) {
    case 'username': {
      const v = clear ? null : text(value, 'userName');
      if (!v) throw badRequest('invalidValue', 'userName is required');
      m.userName = v;
      return;
    }
    case 'externalid': m.externalId = clear ? null : text(value, 'externalId', 255); return;
    case 'displayname': m.displayName = clear ? null : text(value, 'displayName', 255); return;
    case 'active':
      if (clear) throw badRequest('invalidValue', 'active cannot be removed');
      m.active = scimBoolean(value, 'active');
      return;
    case 'name.givenname': m.givenName = clear ? null : text(value, 'name.givenName', 255); return;
    case 'name.familyname': m.familyName = clear ? null : text(value, 'name.familyName', 255); return;
    case 'name.formatted': return; // derived from the given and family names: accepted, not kept apart
    case 'name': {
      if (clear) { m.givenName = null; m.familyName = null; return; }
      if (!value || typeof value !== 'object' || Array.isArray(value)) throw badRequest('invalidValue', 'name must be an object');
      for (const [k, v] of Object.entries(value as Record<string, unknown>)) applyPath(m, op, `name.${k}`, v);
      return;
    }
    default:
      throw badRequest('invalidPath', `"${path}" is not an attribute this server keeps`);
  }
}

/**
 * Applies a PatchOp's operations to a copy of `current` (module doc).
 * @throws ScimError 400 `invalidPath` / `noTarget` / `mutability` / `invalidValue`
 */
export function patchModel(current: UserModel, ops: readonly PatchOperation[]): UserModel {
  const m: UserModel = { ...current, emails: [...current.emails], phoneNumbers: [...current.phoneNumbers] };
  for (const op of ops) {
    if (op.op !== 'add' && op.op !== 'replace' && op.op !== 'remove') throw badRequest('invalidSyntax', `unknown op "${op.op}"`);
    if (op.path !== null) {
      applyPath(m, op.op, op.path, op.value);
      continue;
    }
    if (op.op === 'remove') throw badRequest('noTarget', 'remove needs a path');
    if (!op.value || typeof op.value !== 'object' || Array.isArray(op.value)) throw badRequest('invalidValue', 'an operation without path needs an object value');
    // the no-path form: each key is a path (dotted and URN-qualified keys included)
    for (const [k, v] of Object.entries(op.value as Record<string, unknown>)) {
      if (k === 'schemas') continue;
      if (/^urn:ietf:params:scim:schemas:extension:/i.test(k)) throw badRequest('invalidPath', `"${k}" is not an attribute this server keeps`);
      applyPath(m, op.op, k, v);
    }
  }
  return m;
}
