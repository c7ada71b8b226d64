/**
 * @module orgs/scim/resources
 * SCIM resource representations (RFC 7643 §4.1 User, §4.2 Group, §3.1 `meta`; behaviour.md §6.4 "User
 * mapping") and the discovery documents of RFC 7644 §4 (ServiceProviderConfig, ResourceTypes,
 * Schemas, RFC 7643 §5-§7). `meta` times are RFC 3339 (behaviour.md §0.1).
 */
import type { common } from '@gatehouse/contracts';
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

/** A user's SCIM representation (behaviour.md §6.4 "User mapping"). */
export function userResource(baseUrl: string, u: common.User, link: ScimUserRecord | null): Record<string, unknown> {
  const email = u.email ?? '';
  return {
    schemas: [USER_SCHEMA],
    id: u.id,
    ...(link?.externalId ? { externalId: link.externalId } : {}),
    userName: email,
    name: { ...(u.given_name ? { givenName: u.given_name } : {}), ...(u.family_name ? { familyName: u.family_name } : {}) },
    displayName: [u.given_name, u.family_name].filter(Boolean).join(' ') || email,
    emails: email ? [{ value: email, type: 'work', primary: true }] : [],
    ...(u.phone_number ? { phoneNumbers: [{ value: u.phone_number, type: 'work' }] } : {}),
    active: u.revoked_timestamp === null || u.revoked_timestamp === undefined,
    meta: {
      resourceType: 'User',
      created: rfc3339(Number(u.created_at)),
      lastModified: rfc3339(Math.max(Number(u.updated_at), link?.updatedAt ?? 0)),
      location: `${baseUrl}/scim/v2/Users/${u.id}`,
    },
  };
}

/** A group's SCIM representation; `members` omitted when excluded (RFC 7644 §3.9 excludedAttributes). */
export function groupResource(baseUrl: string, g: ScimGroupRecord, withMembers = true): Record<string, unknown> {
  return {
    schemas: [GROUP_SCHEMA],
    id: g.id,
    ...(g.externalId ? { externalId: g.externalId } : {}),
    displayName: g.displayName,
    ...(withMembers ? { members: g.memberIds.map((id) => ({ value: id, $ref: `${baseUrl}/scim/v2/Users/${id}`, type: 'User' })) } : {}),
    meta: {
      resourceType: 'Group',
      created: rfc3339(g.createdAt),
      lastModified: rfc3339(g.updatedAt),
      location: `${baseUrl}/scim/v2/Groups/${g.id}`,
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
    etag: { supported: false },
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
      attr('name', 'complex', { subAttributes: [attr('givenName', 'string'), attr('familyName', 'string')] }),
      attr('displayName', 'string', { mutability: 'readOnly' }),
      attr('emails', 'complex', { multiValued: true, subAttributes: [attr('value', 'string'), attr('type', 'string'), attr('primary', 'boolean')] }),
      attr('phoneNumbers', 'complex', { multiValued: true, subAttributes: [attr('value', 'string'), attr('type', 'string')] }),
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
