/**
 * @module orgs/scim/patch
 * RFC 7644 §3.5.2 PatchOp bodies as identity providers send them: the operation name in any case
 * (Entra ID sends `Replace`), with or without `path`, values of any JSON type (Entra ID sends
 * booleans as the strings `"True"`/`"False"`). A body that is not a PatchOp → 400 `invalidSyntax`
 * (behaviour.md §6.4).
 */
import scimFilter from 'scim2-parse-filter';
import { badRequest } from './errors.ts';
import { PATCH_SCHEMA } from './resources.ts';

/** One operation, with `op` lower-cased and `path` as sent (null when absent). */
export interface PatchOperation {
  op: string;
  path: string | null;
  value: unknown;
}

/**
 * The operations of a PatchOp body (at most 1000).
 * @throws ScimError 400 `invalidSyntax`
 */
export function patchOperations(body: unknown): PatchOperation[] {
  const b = body as { schemas?: unknown; Operations?: unknown } | null;
  if (!b || typeof b !== 'object' || Array.isArray(b)) throw badRequest('invalidSyntax', 'the body must be a PatchOp object');
  if (!Array.isArray(b.schemas) || !b.schemas.includes(PATCH_SCHEMA)) throw badRequest('invalidSyntax', `schemas must contain "${PATCH_SCHEMA}"`);
  if (!Array.isArray(b.Operations) || b.Operations.length === 0) throw badRequest('invalidSyntax', 'Operations must be a non-empty array');
  if (b.Operations.length > 1000) throw badRequest('invalidSyntax', 'too many Operations: max 1000');
  return b.Operations.map((raw: unknown, i) => {
    const o = raw as { op?: unknown; path?: unknown; value?: unknown } | null;
    if (!o || typeof o !== 'object' || typeof o.op !== 'string') throw badRequest('invalidSyntax', `Operations[${i}].op is required`);
    if (o.path !== undefined && o.path !== null && typeof o.path !== 'string') throw badRequest('invalidSyntax', `Operations[${i}].path must be a string`);
    const op = o.op.toLowerCase();
    if ((op === 'add' || op === 'replace') && o.value === undefined) throw badRequest('invalidSyntax', `Operations[${i}].value is required for "${o.op}"`);
    return { op, path: typeof o.path === 'string' && o.path.trim() !== '' ? o.path.trim() : null, value: o.value };
  });
}

/**
 * A SCIM boolean as providers send it: `true`/`false`, or Entra ID's `"True"`/`"False"`.
 * @throws ScimError 400 `invalidValue`
 */
export function scimBoolean(v: unknown, field: string): boolean {
  if (typeof v === 'boolean') return v;
  if (typeof v === 'string' && /^(true|false)$/i.test(v.trim())) return v.trim().toLowerCase() === 'true';
  throw badRequest('invalidValue', `${field} must be a boolean`);
}

/** Strips a core-schema URN prefix from an attribute path (`urn:…:User:userName` → `userName`). */
export const stripUrn = (path: string): string => path.replace(/^urn:ietf:params:scim:schemas:core:2\.0:(User|Group):/i, '');

/** A path `attr[filter]` or `attr[filter].sub`: the attribute, its filter and sub-attribute. */
export interface ValuePath {
  attr: string;
  filter: scimFilter.Filter;
  sub: string | null;
}

/**
 * Parses a value-path (`members[value eq "x"]`, `emails[type eq "work"].value`) with the RFC 7644
 * filter grammar of `scim2-parse-filter`; null for a plain attribute path.
 * @throws ScimError 400 `invalidPath`
 */
export function valuePath(path: string): ValuePath | null {
  const p = stripUrn(path);
  const open = p.indexOf('[');
  if (open === -1) return null;
  const close = p.lastIndexOf(']');
  if (close < open) throw badRequest('invalidPath', `invalid path "${path}"`);
  const rest = p.slice(close + 1);
  if (rest !== '' && !/^\.[A-Za-z$][\w$-]*$/.test(rest)) throw badRequest('invalidPath', `invalid path "${path}"`);
  let filter: scimFilter.Filter;
  try {
    filter = scimFilter.parse(p.slice(open + 1, close));
  } catch {
    throw badRequest('invalidPath', `invalid path "${path}"`);
  }
  return { attr: p.slice(0, open), filter, sub: rest === '' ? null : rest.slice(1) };
}

/** The string compared by a value-path filter `value eq "x"` (null for any other filter). */
export function valueEq(f: scimFilter.Filter): string | null {
  if (f.op === 'eq' && 'attrPath' in f && f.attrPath.toLowerCase() === 'value' && typeof (f as scimFilter.Compare).compValue === 'string') {
    return (f as scimFilter.Compare).compValue as string;
  }
  return null;
}
