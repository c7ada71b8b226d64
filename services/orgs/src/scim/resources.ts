/**
 * @module orgs/scim/resources
 * SCIM resource representations (RFC 7643 §4.1 User, §4.2 Group, §3.1 `meta`; behaviour.md §6.4 "User
 * mapping") and the discovery documents of RFC 7644 §4 (ServiceProviderConfig, ResourceTypes,
 * Schemas, RFC 7643 §5-§7). `meta` times are RFC 3339 (behaviour.md §0.1).
 */
import { ScimError } from './errors.ts';
import type { ScimGroupRecord, ScimUserRecord } from './storage/ports.ts';

export const USER_SCHEMA = 'urn:ietf:params:scim:schemas:core:2.0:User';
export const GROUP_SCHEMA = 'urn:ietf:params:scim:schemas:core:2.0:Group';
export const LIST_SCHEMA = 'urn:ietf:params:scim:api:messages:2.0:ListResponse';
export const PATCH_SCHEMA = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';
const SPC_SCHEMA = 'urn:ietf:params:scim:schemas:core:2.0:ServiceProviderConfig';
const RT_SCHEMA = 'urn:ietf:params:scim:schemas:core:2.0:ResourceType';
const SCHEMA_SCHEMA = 'urn:ietf:params:scim:schemas:core:2.0:Schema';

/** The largest `count` of a list (behaviour.md §10). */
export const MAX_RESULTS = 1000;

const rfc3339 = (unixSeconds: number): string => new Date(unixSeconds * 1000).toISOString();

/** RFC 7644 §3.14: the weak entity tag of a resource version. */
export const versionTag = (version: number): string => `W/"${version}"`;

/** The entity tags of an `If-Match` / `If-None-Match` value (RFC 9110 §13.1.1, §13.1.2), `*` included. */
const tagsOf = (header: string): string[] => header.split(',').map((t) => t.trim()).filter((t) => t !== '');
/** Weak comparison (RFC 9110 §8.8.3.2): the opaque tags are equal, `W/` aside. */
const weakEqual = (a: string, b: string): boolean => a.replace(/^W\//, '') === b.replace(/^W\//, '');

/**
 * RFC 7644 §3.14 `If-Match` on PUT, PATCH and DELETE: a header that names no tag of the current version
 * (`*` names any) → 412 Precondition Failed. An absent or empty header always holds. Tags compare weakly:
 * the versions this server hands out are weak (`W/"<n>"`), and SCIM clients send them back as received.
 * @throws ScimError 412
 */
export function checkIfMatch(version: number, ifMatch: string | undefined): void {
  const tags = tagsOf(ifMatch ?? '');
  if (tags.length === 0 || tags.includes('*')) return;
  const current = versionTag(version);
  if (!tags.some((t) => weakEqual(t, current))) throw new ScimError(412, 'the resource was changed: its version does not match If-Match');
}

/**
 * RFC 7644 §3.14 `If-None-Match` on GET: true when the client's copy is current (a tag equal to the
 * version, weakly, or `*`), and the answer is 304 Not Modified without a body (RFC 9110 §13.1.2).
 */
export function notModified(version: number, ifNoneMatch: string | undefined): boolean {
  const tags = tagsOf(ifNoneMatch ?? '');
  const current = versionTag(version);
  return tags.some((t) => t === '*' || weakEqual(t, current));
}

/** A user's SCIM representation from the org's SCIM view (behaviour.md §6.4 "User mapping"). */
export function userResource(baseUrl: string, u: ScimUserRecord): Record<string, unknown> {
  const userName = u.userName ?? u.userId;
  const formatted = [u.givenName, u.familyName].filter(Boolean).join(' ');
  return {
    schemas: [USER_SCHEMA],
    id: u.userId,
    ...(u.externalId ? { externalId: u.externalId } : {}),
    userName,
    name: { ...(u.givenName ? { givenName: u.givenName } : {}), ...(u.familyName ? { familyName: u.familyName } : {}), ...(formatted ? { formatted } : {}) },
    displayName: u.displayName ?? (formatted || userName),
    emails: u.emails.map((e) => ({ value: e.value, ...(e.type ? { type: e.type } : {}), primary: e.primary })),
    ...(u.phoneNumbers.length > 0 ? { phoneNumbers: u.phoneNumbers.map((e) => ({ value: e.value, ...(e.type ? { type: e.type } : {}), primary: e.primary })) } : {}),
    active: u.active,
    meta: {
      resourceType: 'User',
      created: rfc3339(u.createdAt),
      lastModified: rfc3339(u.updatedAt),
      location: `${baseUrl}/scim/v2/Users/${u.userId}`,
      version: versionTag(u.version),
    },
  };
}

/** Attributes returned whatever `attributes` / `excludedAttributes` say (RFC 7643 §7 `returned: always`). */
const ALWAYS = new Set(['schemas', 'id', 'meta']);

/**
 * A resource narrowed by `attributes` (only those, plus `schemas`, `id`, `meta`) or stripped of
 * `excludedAttributes` (RFC 7644 §3.4.2.5, §3.9): top-level names and `parent.sub` paths, case-insensitive,
 * with or without the core schema URN.
 */
export function selectAttributes(r: Record<string, unknown>, sel: { attributes: string[]; excluded: string[] }): Record<string, unknown> {
  const norm = (a: string) => a.replace(/^urn:ietf:params:scim:schemas:core:2\.0:(User|Group):/i, '').toLowerCase();
  const keyOf = (o: Record<string, unknown>, name: string) => Object.keys(o).find((k) => k.toLowerCase() === name);
  if (sel.attributes.length > 0) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(r)) if (ALWAYS.has(k)) out[k] = v;
    for (const a of sel.attributes.map(norm)) {
      const [top, sub] = a.split('.');
      const k = keyOf(r, top!);
      if (k === undefined || ALWAYS.has(k)) continue;
      const v = r[k];
      if (sub === undefined || v === null || typeof v !== 'object') { out[k] = v; continue; }
      const pick = (o: Record<string, unknown>) => { const sk = keyOf(o, sub); return sk === undefined ? {} : { [sk]: o[sk] }; };
      if (Array.isArray(v)) {
        const prev = (out[k] as Array<Record<string, unknown>> | undefined) ?? v.map(() => ({}));
        out[k] = v.map((e, i) => ({ ...prev[i], ...pick(e as Record<string, unknown>) }));
      } else {
        out[k] = { ...(out[k] as Record<string, unknown> | undefined), ...pick(v as Record<string, unknown>) };
      }
    }
    return out;
  }
  if (sel.excluded.length === 0) return r;
  const out: Record<string, unknown> = { ...r };
  for (const a of sel.excluded.map(norm)) {
    const [top, sub] = a.split('.');
    const k = keyOf(out, top!);
    if (k === undefined || ALWAYS.has(k)) continue;
    if (sub === undefined) { delete out[k]; continue; }
    const v = out[k];
    const drop = (o: Record<string, unknown>) => Object.fromEntries(Object.entries(o).filter(([sk]) => sk.toLowerCase() !== sub));
    if (Array.isArray(v)) out[k] = v.map((e) => drop(e as Record<string, unknown>));
    else if (v && typeof v === 'object') out[k] = drop(v as Record<string, unknown>);
  }
  return out;
}

/**
 * A group's SCIM representation (RFC 7643 §4.2) with `meta.version` (RFC 7644 §3.14); `members` (user
 * ids in the order added) omitted when null (the caller's `attributes` / `excludedAttributes` leave them
 * out, RFC 7644 §3.4.2.5), so a large group's members are not even read.
 */
export function groupResource(baseUrl: string, g: ScimGroupRecord, memberIds: readonly string[] | null): Record<string, unknown> {
  return {
    schemas: [GROUP_SCHEMA],
    id: g.id,
    ...(g.externalId ? { externalId: g.externalId } : {}),
    displayName: g.displayName,
    ...(memberIds ? { members: memberIds.map((id) => ({ value: id, $ref: `${baseUrl}/scim/v2/Users/${id}`, type: 'User' })) } : {}),
    meta: {
      resourceType: 'Group',
      created: rfc3339(g.createdAt),
      lastModified: rfc3339(g.updatedAt),
      location: `${baseUrl}/scim/v2/Groups/${g.id}`,
      version: versionTag(g.version),
    },
  };
}

/** RFC 7644 §3.4.2 ListResponse over the page `resources` of `total` results starting at `startIndex`. */
export function listResponse(resources: unknown[], total: number, startIndex: number): Record<string, unknown> {
  return { schemas: [LIST_SCHEMA], totalResults: total, startIndex, itemsPerPage: resources.length, Resources: resources };
}

/** RFC 7643 §5 (behaviour.md §6.4 "ServiceProviderConfig"). */
export function serviceProviderConfig(baseUrl: string): Record<string, unknown> {
  return {
    schemas: [SPC_SCHEMA],
    documentationUri: `${baseUrl}/openapi.json`,
    patch: { supported: true },
    bulk: { supported: false, maxOperations: 0, maxPayloadSize: 0 },
    filter: { supported: true, maxResults: MAX_RESULTS },
    changePassword: { supported: false },
    sort: { supported: false },
    etag: { supported: true },
    authenticationSchemes: [{
      type: 'oauthbearertoken', name: 'OAuth Bearer Token', primary: true,
      description: 'The SCIM endpoint token of the organization, sent as Authorization: Bearer <token>',
      specUri: 'https://www.rfc-editor.org/rfc/rfc6750',
    }],
    meta: { resourceType: 'ServiceProviderConfig', location: `${baseUrl}/scim/v2/ServiceProviderConfig` },
  };
}

/** RFC 7643 §6: the User and Group resource types. */
export function resourceTypes(baseUrl: string): Array<Record<string, unknown>> {
  const rt = (name: string, endpoint: string, schema: string) => ({
    schemas: [RT_SCHEMA], id: name, name, endpoint, description: name, schema,
    meta: { resourceType: 'ResourceType', location: `${baseUrl}/scim/v2/ResourceTypes/${name}` },
  });
  return [rt('User', '/Users', USER_SCHEMA), rt('Group', '/Groups', GROUP_SCHEMA)];
}

type Attr = Record<string, unknown>;
const attr = (name: string, type: string, o: Partial<{ multiValued: boolean; required: boolean; caseExact: boolean; mutability: string; uniqueness: string; subAttributes: Attr[] }> = {}): Attr => ({
  name, type, multiValued: o.multiValued ?? false, description: name, required: o.required ?? false, caseExact: o.caseExact ?? false,
  mutability: o.mutability ?? 'readWrite', returned: 'default', uniqueness: o.uniqueness ?? 'none',
  ...(o.subAttributes ? { subAttributes: o.subAttributes } : {}),
});

/** RFC 7643 §7: the attributes this server supports of the User and Group schemas. */
export function schemas(baseUrl: string): Array<Record<string, unknown>> {
  const sch = (id: string, name: string, attributes: Attr[]) => ({
    schemas: [SCHEMA_SCHEMA], id, name, description: `${name} (the attributes Gatehouse maps)`, attributes,
    meta: { resourceType: 'Schema', location: `${baseUrl}/scim/v2/Schemas/${id}` },
  });
  return [
    sch(USER_SCHEMA, 'User', [
      attr('userName', 'string', { required: true, uniqueness: 'server' }),
      attr('name', 'complex', { subAttributes: [attr('givenName', 'string'), attr('familyName', 'string'), attr('formatted', 'string', { mutability: 'readOnly' })] }),
      attr('displayName', 'string'),
      attr('emails', 'complex', { multiValued: true, subAttributes: [attr('value', 'string'), attr('type', 'string'), attr('primary', 'boolean')] }),
      attr('phoneNumbers', 'complex', { multiValued: true, subAttributes: [attr('value', 'string'), attr('type', 'string'), attr('primary', 'boolean')] }),
      attr('active', 'boolean'),
      attr('externalId', 'string', { caseExact: true }),
    ]),
    sch(GROUP_SCHEMA, 'Group', [
      attr('displayName', 'string', { required: true, uniqueness: 'server' }),
      attr('members', 'complex', { multiValued: true, subAttributes: [attr('value', 'string', { mutability: 'immutable' }), attr('$ref', 'reference', { mutability: 'immutable' }), attr('type', 'string', { mutability: 'immutable' })] }),
      attr('externalId', 'string', { caseExact: true }),
    ]),
  ];
}
