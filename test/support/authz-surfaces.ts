/**
 * @module test/support/authz-surfaces
 * One authz operation (spec §4 check_permissions, list_permissions, /v1/admin/fga/*) performed over
 * REST, GraphQL or native gRPC and answered in one shape, so e2e tests can compare the three surfaces
 * (behaviour.md §0.1 "Surfaces": same body as GraphQL `data.<field>`, same code and message).
 */
import { expect } from '@jest/globals';
import { createCallContext, createGrpcClient, serviceDescriptor, type ServiceClient } from '@gatehouse/rpc';
import type { AppError } from '@gatehouse/errors';
import { SURFACES, expectedStatus, normalise, type Result, type Surface, type Target } from './surfaces.ts';

/** The GraphQL root field of each authz operation (graphql.md §2). */
export type AuthzOp =
  | 'check_permissions' | 'list_permissions' | '_fga_get_model' | '_fga_write_model' | '_fga_write_tuples'
  | '_fga_delete_tuples' | '_fga_read_tuples' | '_fga_list_users' | '_fga_expand' | '_fga_reset';

/** Caller credentials: a user's bearer token, a Cookie header, and/or the admin secret header. */
export interface AuthzCreds {
  bearer?: string;
  cookie?: string;
  adminSecret?: string;
  /**
   * `X-Forwarded-For` on REST and GraphQL (the client IP, for a gateway started with
   * `--trusted-proxies`): wrong admin secrets from distinct IPs stay under the admin-secret lockout
   */
  forwardedFor?: string;
}

export interface AuthzCall {
  op: AuthzOp;
  args?: Record<string, unknown>;
  creds?: AuthzCreds;
}

interface OpInfo {
  method: 'GET' | 'POST';
  path: string;
  rpc: string;
  gql: string;
}

const TUPLES = 'tuples { user relation object condition { name context } } continuation_token';

/** REST route (spec §4), proto RPC and GraphQL operation text of every authz operation. */
export const AUTHZ_OPS: Readonly<Record<AuthzOp, OpInfo>> = {
  check_permissions: { method: 'POST', path: '/v1/check_permissions', rpc: 'CheckPermissions', gql: 'query q($params: CheckPermissionsInput!) { check_permissions(params: $params) { results { relation object allowed } } }' },
  list_permissions: { method: 'POST', path: '/v1/list_permissions', rpc: 'ListPermissions', gql: 'query q($params: ListPermissionsInput!) { list_permissions(params: $params) { objects permissions { object relation } truncated } }' },
  _fga_get_model: { method: 'GET', path: '/v1/admin/fga/model', rpc: 'GetModel', gql: 'query { _fga_get_model { id dsl } }' },
  _fga_write_model: { method: 'POST', path: '/v1/admin/fga/model', rpc: 'WriteModel', gql: 'mutation m($params: FgaWriteModelInput!) { _fga_write_model(params: $params) { id dsl } }' },
  _fga_write_tuples: { method: 'POST', path: '/v1/admin/fga/tuples', rpc: 'WriteTuples', gql: 'mutation m($params: FgaWriteTuplesInput!) { _fga_write_tuples(params: $params) { message } }' },
  _fga_delete_tuples: { method: 'POST', path: '/v1/admin/fga/tuples/delete', rpc: 'DeleteTuples', gql: 'mutation m($params: FgaWriteTuplesInput!) { _fga_delete_tuples(params: $params) { message } }' },
  _fga_read_tuples: { method: 'POST', path: '/v1/admin/fga/tuples/read', rpc: 'ReadTuples', gql: `query q($params: FgaReadTuplesInput!) { _fga_read_tuples(params: $params) { ${TUPLES} } }` },
  _fga_list_users: { method: 'POST', path: '/v1/admin/fga/list_users', rpc: 'ListUsers', gql: 'query q($params: FgaListUsersInput!) { _fga_list_users(params: $params) { users truncated } }' },
  _fga_expand: { method: 'POST', path: '/v1/admin/fga/expand', rpc: 'Expand', gql: 'query q($params: FgaExpandInput!) { _fga_expand(params: $params) { tree } }' },
  _fga_reset: { method: 'POST', path: '/v1/admin/fga/reset', rpc: 'Reset', gql: 'mutation { _fga_reset { message } }' },
};

/** Operations without a GraphQL argument (graphql.md §2 "Argument name"). */
const NO_ARG = new Set<AuthzOp>(['_fga_get_model', '_fga_reset']);

/** HTTP/gRPC-metadata headers carrying `creds`. */
export function authzHeaders(creds: AuthzCreds | undefined): Record<string, string> {
  const h: Record<string, string> = {};
  if (creds?.bearer) h.authorization = `Bearer ${creds.bearer}`;
  if (creds?.cookie) h.cookie = creds.cookie;
  if (creds?.adminSecret) h['x-service-admin-secret'] = creds.adminSecret;
  if (creds?.forwardedFor) h['x-forwarded-for'] = creds.forwardedFor;
  return h;
}

/** REST: the route of spec §4 with `Origin: <url>` (CSRF). */
export async function authzRest(t: Target, call: AuthzCall): Promise<Result> {
  const op = AUTHZ_OPS[call.op];
  const res = await fetch(`${t.url}${op.path}`, {
    method: op.method,
    headers: { 'content-type': 'application/json', origin: t.url, ...authzHeaders(call.creds) },
    ...(op.method === 'GET' ? {} : { body: JSON.stringify(call.args ?? {}) }),
  });
  const body = (await res.json()) as Record<string, any>;
  if (res.status === 200) return { ok: true, body, cookies: [], status: 200 };
  return { ok: false, code: String(body.code), message: String(body.message), cookies: [], status: res.status };
}

/** GraphQL: an upper-case `extensions.code` is returned lower-cased; anything else fails a comparison. */
export async function authzGraphql(t: Target, call: AuthzCall): Promise<Result> {
  const op = AUTHZ_OPS[call.op];
  const res = await fetch(`${t.url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin: t.url, ...authzHeaders(call.creds) },
    body: JSON.stringify({ query: op.gql, variables: NO_ARG.has(call.op) ? {} : { params: call.args ?? {} } }),
  });
  const json = (await res.json()) as { data?: Record<string, any> | null; errors?: { message: string; extensions?: { code?: string } }[] };
  const err = json.errors?.[0];
  if (err) {
    const ext = String(err.extensions?.code ?? '');
    const code = ext === ext.toUpperCase() ? ext.toLowerCase() : `non-upper-case:${ext}`;
    return { ok: false, code, message: err.message, cookies: [], status: res.status };
  }
  return { ok: true, body: json.data![call.op] as Record<string, any>, cookies: [], status: res.status };
}

const clients = new Map<string, ServiceClient>();

/** A cached gRPC client for gatehouse.authz.v1.AuthzService at `address` (gateway or one replica). */
export function authzGrpcClient(address: string): ServiceClient {
  let client = clients.get(address);
  if (!client) {
    client = createGrpcClient(serviceDescriptor('authz'), { address });
    clients.set(address, client);
  }
  return client;
}

/** Native gRPC to `address` (default: the target's public gRPC port); credentials travel as metadata. */
export async function authzGrpc(t: Target, call: AuthzCall, address = t.grpcAddress): Promise<Result> {
  const ctx = createCallContext({ headers: authzHeaders(call.creds) });
  try {
    return { ok: true, body: await authzGrpcClient(address).call(AUTHZ_OPS[call.op].rpc, call.args ?? {}, ctx), cookies: [] };
  } catch (e) {
    const err = e as AppError;
    return { ok: false, code: err.code, message: err.message, cookies: [] };
  }
}

/** Closes the cached gRPC channels (afterAll). */
export function closeAuthzClients(): void {
  for (const c of clients.values()) c.close();
  clients.clear();
}

/** Performs `call` on one surface. */
export function authzPerform(s: Surface, t: Target, call: AuthzCall): Promise<Result> {
  return s === 'rest' ? authzRest(t, call) : s === 'graphql' ? authzGraphql(t, call) : authzGrpc(t, call);
}

export type Answers = Record<Surface, Result>;

/**
 * Performs the call on REST, GraphQL and gRPC in turn (calls may have side effects, so sequentially),
 * asserts the normalised answers are equal (ids and tokens replaced by type markers), that a REST
 * error carries the status of behaviour.md §0.2 and that a GraphQL error answers HTTP 200.
 */
export async function onAll(t: Target, call: AuthzCall | ((s: Surface) => AuthzCall)): Promise<Answers> {
  const out = {} as Answers;
  for (const s of SURFACES) out[s] = await authzPerform(s, t, typeof call === 'function' ? call(s) : call);
  const rest = normalise(out.rest);
  expect({ surface: 'graphql', answer: normalise(out.graphql) }).toEqual({ surface: 'graphql', answer: rest });
  expect({ surface: 'grpc', answer: normalise(out.grpc) }).toEqual({ surface: 'grpc', answer: rest });
  if (!out.rest.ok) expect(out.rest.status).toBe(expectedStatus(out.rest.code));
  if (!out.graphql.ok) expect(out.graphql.status).toBe(200);
  return out;
}

/** Asserts every surface answered the error `code` / `message` (REST status per behaviour.md §0.2). */
export function expectAllError(a: Answers, code: string, message: string): void {
  for (const s of SURFACES) {
    const r = a[s];
    expect({ s, got: r.ok ? { ok: true, body: r.body } : { code: r.code, message: r.message } }).toEqual({ s, got: { code, message } });
  }
  expect(a.rest.status).toBe(expectedStatus(code));
}

/** The REST body of a successful answer (throws with the error otherwise). */
export function okBody(r: Result): Record<string, any> {
  if (!r.ok) throw new Error(`expected success, got ${r.code}: ${r.message}`);
  return r.body;
}

/** Signs a fresh user up over REST; returns its access token and subject `user:<id>`. */
export async function signupUser(url: string, email: string, password = 'Correct-Horse-9'): Promise<{ token: string; id: string; subject: string }> {
  const res = await fetch(`${url}/v1/signup`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin: url },
    body: JSON.stringify({ email, password, confirm_password: password }),
  });
  const body = (await res.json()) as { access_token?: string; user?: { id: string } };
  if (res.status !== 200 || !body.access_token || !body.user) throw new Error(`signup answered ${res.status}: ${JSON.stringify(body)}`);
  return { token: body.access_token, id: body.user.id, subject: `user:${body.user.id}` };
}
