/**
 * @module orgs/scim/server
 * The SCIM 2.0 server (RFC 7643, RFC 7644; behaviour.md §6.4) as one function: a request under
 * `/scim/v2` (method, path, query, raw body, Authorization) → status, JSON body, Location. The bearer
 * token alone decides the org; a missing, wrong or rotated token, or a disabled endpoint or org, is
 * 401 `authentication failed` after the same work (one HMAC and one lookup). Every failure is the SCIM
 * error body of RFC 7644 §3.12, never a bare 500 (unexpected errors are `500` `internal error`).
 */
import { AppError } from '@gatehouse/errors';
import type { CallContext } from '@gatehouse/rpc';
import type { ScimDeps } from './deps.ts';
import { authFailed, badRequest, conflict, notFound, ScimError } from './errors.ts';
import { verifyToken } from './endpoints.ts';
import { createGroup, deleteGroup, getGroup, listGroups, patchGroup, replaceGroup } from './groups.ts';
import { listResponse, resourceTypes, schemas, serviceProviderConfig } from './resources.ts';
import { createUser, deleteUser, getUser, listUsers, patchUser, replaceUser, ScimUnavailable, type ScimAnswer } from './users.ts';

/** One SCIM request as the gateway forwards it. */
export interface ScimRequest {
  method: string;
  /** below `/scim/v2`, e.g. `/Users/<id>` */
  path: string;
  /** raw query string without `?` */
  query: string;
  /** raw body (UTF-8) */
  body: string;
  /** the Authorization header */
  authorization: string | undefined;
  /** the If-Match header (RFC 7644 §3.14) */
  ifMatch?: string | undefined;
  /** the If-None-Match header (RFC 7644 §3.14): a GET of the current version answers 304 */
  ifNoneMatch?: string | undefined;
}

/** What the gateway sends back: `body` is the JSON text ('' for 204 and 304), `application/scim+json`; `etag` the version of a single resource ('' otherwise). */
export interface ScimReply {
  status: number;
  body: string;
  location: string;
  etag: string;
}

const methodNotAllowed = (): ScimError => new ScimError(405, 'method not allowed');

function parseBody(raw: string): unknown {
  if (raw.trim() === '') throw badRequest('invalidSyntax', 'a JSON body is required');
  try {
    return JSON.parse(raw) as unknown;
  } catch {
    throw badRequest('invalidSyntax', 'the body is not valid JSON');
  }
}

const SEARCH_SCHEMA = 'urn:ietf:params:scim:api:messages:2.0:SearchRequest';

/**
 * A SearchRequest body (RFC 7644 §3.4.3) as the query parameters of a list: `filter`, `startIndex`,
 * `count`, `attributes` and `excludedAttributes` (arrays). `sortBy` is refused: sorting is not supported.
 * @throws ScimError 400 `invalidSyntax` / `invalidValue`
 */
function searchQuery(body: unknown): URLSearchParams {
  const b = body as Record<string, unknown> | null;
  if (!b || typeof b !== 'object' || Array.isArray(b)) throw badRequest('invalidSyntax', 'the body must be a SearchRequest object');
  if (!Array.isArray(b['schemas']) || !b['schemas'].includes(SEARCH_SCHEMA)) throw badRequest('invalidSyntax', `schemas must contain "${SEARCH_SCHEMA}"`);
  const q = new URLSearchParams();
  if (b['filter'] !== undefined) {
    if (typeof b['filter'] !== 'string') throw badRequest('invalidValue', 'filter must be a string');
    q.set('filter', b['filter']);
  }
  for (const k of ['startIndex', 'count'] as const) {
    if (b[k] === undefined) continue;
    if (typeof b[k] !== 'number' || !Number.isInteger(b[k])) throw badRequest('invalidValue', `${k} must be an integer`);
    q.set(k, String(b[k]));
  }
  for (const k of ['attributes', 'excludedAttributes'] as const) {
    if (b[k] === undefined) continue;
    if (!Array.isArray(b[k]) || !(b[k] as unknown[]).every((a) => typeof a === 'string')) throw badRequest('invalidValue', `${k} must be an array of strings`);
    q.set(k, (b[k] as string[]).join(','));
  }
  if (b['sortBy'] !== undefined) throw badRequest('invalidValue', 'sorting is not supported');
  return q;
}

/** The org of a valid bearer token. @throws ScimError 401 */
async function orgOfToken(d: ScimDeps, authorization: string | undefined): Promise<string> {
  const m = /^bearer\s+(\S+)\s*$/i.exec(authorization ?? '');
  const endpoint = await verifyToken(d, m?.[1] ?? '');
  if (!endpoint || !endpoint.enabled || (await d.orgs.status(endpoint.orgId)) !== 'enabled') throw authFailed();
  return endpoint.orgId;
}

/** Routes one authenticated request. */
async function route(d: ScimDeps, ctx: CallContext, orgId: string, req: ScimRequest, query: URLSearchParams): Promise<ScimAnswer> {
  const parts = req.path.split('/').filter((p) => p !== '').map((p) => decodeURIComponent(p));
  const [resource, id, extra] = parts;
  const method = req.method.toUpperCase();
  if (extra !== undefined) throw notFound();
  const get = method === 'GET' || method === 'HEAD';
  switch (resource) {
    case 'ServiceProviderConfig':
      if (id !== undefined) throw notFound();
      if (!get) throw methodNotAllowed();
      return { status: 200, body: serviceProviderConfig(d.baseUrl) };
    case 'ResourceTypes':
    case 'Schemas': {
      if (!get) throw methodNotAllowed();
      const all = resource === 'Schemas' ? schemas(d.baseUrl) : resourceTypes(d.baseUrl);
      if (id === undefined) return { status: 200, body: listResponse(all, all.length, 1) };
      const one = all.find((r) => r['id'] === id);
      if (!one) throw notFound();
      return { status: 200, body: one };
    }
    case 'Users':
      if (id === undefined) {
        if (get) return listUsers(d, ctx, orgId, query);
        if (method === 'POST') return createUser(d, ctx, orgId, parseBody(req.body), query);
        throw methodNotAllowed();
      }
      // RFC 7644 §3.4.3: the search request of POST /Users/.search, as query parameters
      if (id === '.search') {
        if (method !== 'POST') throw methodNotAllowed();
        return listUsers(d, ctx, orgId, searchQuery(parseBody(req.body)));
      }
      if (get) return getUser(d, ctx, orgId, id, query, req.ifNoneMatch);
      if (method === 'PUT') return replaceUser(d, ctx, orgId, id, parseBody(req.body), req.ifMatch, query);
      if (method === 'PATCH') return patchUser(d, ctx, orgId, id, parseBody(req.body), req.ifMatch, query);
      if (method === 'DELETE') return deleteUser(d, ctx, orgId, id, req.ifMatch);
      throw methodNotAllowed();
    case 'Groups':
      if (id === '.search') {
        if (method !== 'POST') throw methodNotAllowed();
        return listGroups(d, ctx, orgId, searchQuery(parseBody(req.body)));
      }
      if (id === undefined) {
        if (get) return listGroups(d, ctx, orgId, query);
        if (method === 'POST') return createGroup(d, ctx, orgId, parseBody(req.body), query);
        throw methodNotAllowed();
      }
      if (get) return getGroup(d, ctx, orgId, id, query, req.ifNoneMatch);
      if (method === 'PUT') return replaceGroup(d, ctx, orgId, id, parseBody(req.body), req.ifMatch, query);
      if (method === 'PATCH') return patchGroup(d, ctx, orgId, id, parseBody(req.body), req.ifMatch, query);
      if (method === 'DELETE') return deleteGroup(d, ctx, orgId, id, req.ifMatch);
      throw methodNotAllowed();
    case undefined:
    default:
      throw notFound();
  }
}

/** A peer's AppError as the SCIM error of RFC 7644 §3.12. */
function fromAppError(err: AppError): ScimError {
  if (err.code === 'invalid_argument' || err.code === 'failed_precondition') return badRequest('invalidValue', err.message);
  if (err.code === 'already_exists') return conflict(err.message);
  if (err.code === 'not_found') return notFound();
  if (err.code === 'unavailable' || err.code === 'deadline_exceeded' || err.code === 'cancelled') return new ScimError(503, 'service unavailable, please retry');
  return new ScimError(500, 'internal error');
}

/**
 * Serves one SCIM request (behaviour.md §6.4).
 * @param onInternal called with an unexpected error before it is answered as 500 (logging)
 * @returns the reply; never throws
 */
export async function handleScim(d: ScimDeps, ctx: CallContext, req: ScimRequest, onInternal: (err: unknown) => void): Promise<ScimReply> {
  let answer: ScimAnswer;
  try {
    const orgId = await orgOfToken(d, req.authorization);
    let query: URLSearchParams;
    try {
      query = new URLSearchParams(req.query);
    } catch {
      throw badRequest('invalidSyntax', 'invalid query string');
    }
    answer = await route(d, ctx, orgId, req, query);
  } catch (err) {
    let e: ScimError;
    if (err instanceof ScimError) e = err;
    else if (err instanceof ScimUnavailable) e = new ScimError(503, 'service unavailable, please retry');
    else if (err instanceof URIError) e = notFound();
    else if (err instanceof AppError) e = fromAppError(err);
    else e = new ScimError(500, 'internal error');
    if (e.status === 500) onInternal(err);
    answer = { status: e.status, body: e.body() };
  }
  const head = req.method.toUpperCase() === 'HEAD';
  return {
    status: answer.status,
    body: answer.body === null || head ? '' : JSON.stringify(answer.body),
    location: answer.location ?? '',
    etag: answer.etag ?? '',
  };
}
