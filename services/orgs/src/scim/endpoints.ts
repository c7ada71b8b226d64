/**
 * @module orgs/scim/endpoints
 * The SCIM endpoint administration of behaviour.md §6.4: one endpoint per org, its bearer token
 * `<endpoint id>.<64 hex chars>` (256 random bits) returned once by create and rotate, and stored only
 * as HMAC-SHA-256 under the token key (`--encryption-key`). Rotation replaces the digest, so the old
 * token fails from the next request on.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { AppError } from '@gatehouse/errors';
import { macHex, matchMac, ringOf, type KeyRing } from '@gatehouse/crypto';
import type { ScimDeps } from './deps.ts';
import type { ScimEndpointRecord } from './storage/ports.ts';

export const ENDPOINT_EXISTS = 'a scim endpoint already exists for this organization';
export const ENDPOINT_NOT_FOUND = 'scim endpoint not found';
export const ENDPOINT_DELETED = 'scim endpoint deleted successfully';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
/** a digest no token has: compared when the endpoint id is unknown, so both paths do the same work */
const NO_DIGEST = '0'.repeat(64);

/** the MAC keys of tokens: a ring (issue 32: the first MACs, every key verifies) */
const ringOfTokens = (d: Pick<ScimDeps, 'tokenKey'>): KeyRing => (typeof d.tokenKey === 'string' ? ringOf(d.tokenKey) : d.tokenKey);
const digestOf = (d: Pick<ScimDeps, 'tokenKey'>, token: string): string => macHex(ringOfTokens(d), `gatehouse/scim-token/v1:${token}`);
const newToken = (endpointId: string): string => `${endpointId}.${randomBytes(32).toString('hex')}`;

/**
 * The endpoint a presented token belongs to, or null (constant work for wrong and unknown tokens). A
 * token MACed under an older key of the ring verifies and its digest is re-made under the first key
 * (issue 32), so the old key can be dropped once every endpoint has been used.
 */
export async function verifyToken(d: ScimDeps, token: string): Promise<ScimEndpointRecord | null> {
  const dot = token.indexOf('.');
  const id = dot > 0 ? token.slice(0, dot) : '';
  const endpoint = UUID.test(id) ? await d.store.endpoints.byId(id) : null;
  const data = `gatehouse/scim-token/v1:${token.slice(0, 200)}`;
  const match = matchMac(ringOfTokens(d), data, endpoint?.tokenHash ?? NO_DIGEST);
  if (match < 0 || !endpoint) return null;
  if (match > 0) {
    const remade = { ...endpoint, tokenHash: digestOf(d, token.slice(0, 200)) };
    await d.store.endpoints.update(remade);
    return remade;
  }
  return endpoint;
}

/** @throws AppError `invalid_argument` `org_id is required` */
function orgIdOf(raw: string | null | undefined): string {
  const id = (raw ?? '').trim().toLowerCase();
  if (!id) throw new AppError('invalid_argument', 'org_id is required');
  return id;
}

/** @throws AppError `not_found` `organization not found` */
async function existingOrg(d: ScimDeps, raw: string | null | undefined): Promise<string> {
  const orgId = orgIdOf(raw);
  if ((await d.orgs.status(orgId)) === 'missing') throw new AppError('not_found', 'organization not found');
  return orgId;
}

/**
 * `create_scim_endpoint` → the endpoint and its token, shown once.
 * @throws AppError `invalid_argument`; `not_found` `organization not found`; `already_exists` (one per org)
 */
export async function createEndpoint(d: ScimDeps, rawOrgId: string | null | undefined): Promise<{ endpoint: ScimEndpointRecord; token: string }> {
  const orgId = await existingOrg(d, rawOrgId);
  const now = d.now();
  const id = randomUUID();
  const token = newToken(id);
  const endpoint: ScimEndpointRecord = { id, orgId, tokenHash: digestOf(d, token), enabled: true, createdAt: now, updatedAt: now };
  if (!(await d.store.endpoints.insert(endpoint))) throw new AppError('already_exists', ENDPOINT_EXISTS);
  return { endpoint, token };
}

/** @throws AppError `not_found` `scim endpoint not found` */
export async function getEndpoint(d: ScimDeps, rawOrgId: string | null | undefined): Promise<ScimEndpointRecord> {
  const e = await d.store.endpoints.byOrg(orgIdOf(rawOrgId));
  if (!e) throw new AppError('not_found', ENDPOINT_NOT_FOUND);
  return e;
}

/** `rotate_scim_token`: a new token; the old one stops working at once. @throws AppError `not_found` */
export async function rotateToken(d: ScimDeps, rawOrgId: string | null | undefined): Promise<{ endpoint: ScimEndpointRecord; token: string }> {
  const e = await getEndpoint(d, rawOrgId);
  const token = newToken(e.id);
  const endpoint = { ...e, tokenHash: digestOf(d, token), updatedAt: d.now() };
  await d.store.endpoints.update(endpoint);
  return { endpoint, token };
}

/** `delete_scim_endpoint`. @throws AppError `not_found` `scim endpoint not found` */
export async function deleteEndpoint(d: ScimDeps, rawOrgId: string | null | undefined): Promise<void> {
  if (!(await d.store.endpoints.delete(orgIdOf(rawOrgId)))) throw new AppError('not_found', ENDPOINT_NOT_FOUND);
}

/** The wire ScimEndpoint (never the token or its digest). */
export const endpointWire = (e: ScimEndpointRecord) => ({ id: e.id, org_id: e.orgId, enabled: e.enabled, created_at: e.createdAt, updated_at: e.updatedAt });
