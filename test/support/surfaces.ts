/**
 * @module test/support/surfaces
 * One logical authn operation performed over any of the three public surfaces (spec §1: REST, GraphQL,
 * native gRPC), answered in one shape so e2e tests can compare them (behaviour.md §0.1 "Surfaces").
 */
import * as grpcJs from '@grpc/grpc-js';
import { serviceDescriptor } from '@gatehouse/rpc';
import type { ServiceName } from '@gatehouse/contracts/service-names';
import { codeFromGrpcStatus, httpStatusOf, isErrorCode, type ErrorCode } from '@gatehouse/errors';

export type Surface = 'rest' | 'graphql' | 'grpc';
export const SURFACES: readonly Surface[] = ['rest', 'graphql', 'grpc'];

/** Operation names: the GraphQL root field (= REST path under /v1, = proto RPC in PascalCase). */
export type OpName =
  | 'signup' | 'login' | 'profile' | 'update_profile' | 'session' | 'validate_jwt_token'
  | 'validate_session' | 'logout' | 'deactivate_account' | 'revoke' | 'meta';

/** Caller credentials, sent as `Authorization: Bearer` and/or a `Cookie` header on every surface. */
export interface Credentials {
  bearer?: string;
  /** a full Cookie header value, e.g. `cookie_session=abc` */
  cookie?: string;
}

export interface Call {
  op: OpName;
  args?: Record<string, unknown>;
  creds?: Credentials;
}

/**
 * The answer of one call. Success: `body` is the REST body / GraphQL `data.<field>` / gRPC response.
 * Failure: the error code (snake_case) and message. `status` is the HTTP status (REST, GraphQL),
 * `cookies` the `Set-Cookie` values the server sent; `grpcStatus` the numeric gRPC status of a gRPC error.
 */
export type Result =
  | { ok: true; body: Record<string, any>; cookies: string[]; status?: number }
  | { ok: false; code: string; message: string; cookies: string[]; status?: number; grpcStatus?: number };

/** Where a deployment answers: `url` for REST and GraphQL, `grpcAddress` for native gRPC. */
export interface Target {
  url: string;
  grpcAddress: string;
}

const USER = 'id email email_verified given_name family_name middle_name nickname preferred_username picture signup_methods gender birthdate phone_number phone_number_verified roles created_at updated_at revoked_timestamp is_multi_factor_auth_enabled app_data';
const AUTH = `message access_token expires_in refresh_token id_token should_show_email_otp_screen should_show_mobile_otp_screen should_show_totp_screen authenticator_scanner_image authenticator_secret authenticator_recovery_codes user { ${USER} }`;
const META = 'version client_id is_google_login_enabled is_facebook_login_enabled is_github_login_enabled is_linkedin_login_enabled is_apple_login_enabled is_twitter_login_enabled is_microsoft_login_enabled is_twitch_login_enabled is_roblox_login_enabled is_email_verification_enabled is_basic_authentication_enabled is_magic_link_login_enabled is_sign_up_enabled is_strong_password_enabled is_multi_factor_auth_enabled is_mobile_basic_authentication_enabled is_phone_verification_enabled';

/** Operation texts as authorizer-js 3.0.1 sends them (graphql.md §4.2, §4.3); `vars` names the variable. */
const GQL: Record<OpName, { query: string; vars?: string }> = {
  signup: { query: `mutation signup($data: SignUpRequest!) { signup(params: $data) { ${AUTH} } }`, vars: 'data' },
  login: { query: `mutation login($data: LoginRequest!) { login(params: $data) { ${AUTH} } }`, vars: 'data' },
  profile: { query: `query { profile { ${USER} } }` },
  update_profile: { query: 'mutation updateProfile($data: UpdateProfileRequest!) { update_profile(params: $data) { message } }', vars: 'data' },
  session: { query: `query getSession($params: SessionQueryRequest) { session(params: $params) { ${AUTH} } }`, vars: 'params' },
  validate_jwt_token: { query: 'query validateJWTToken($params: ValidateJWTTokenRequest!) { validate_jwt_token(params: $params) { is_valid claims } }', vars: 'params' },
  validate_session: { query: `query validateSession($params: ValidateSessionRequest) { validate_session(params: $params) { is_valid user { ${USER} } } }`, vars: 'params' },
  logout: { query: 'mutation { logout { message } }' },
  deactivate_account: { query: 'mutation deactivateAccount { deactivate_account { message } }' },
  // not in authorizer-js 3.0.1 (it revokes over /oauth/revoke); same argument convention as the other public mutations
  revoke: { query: 'mutation revoke($data: OAuthRevokeRequest!) { revoke(params: $data) { message } }', vars: 'data' },
  meta: { query: `query { meta { ${META} } }` },
};

const GET_OPS = new Set<OpName>(['profile', 'meta']);

function credentialHeaders(creds: Credentials | undefined): Record<string, string> {
  const h: Record<string, string> = {};
  if (creds?.bearer) h.authorization = `Bearer ${creds.bearer}`;
  if (creds?.cookie) h.cookie = creds.cookie;
  return h;
}

/** POST/GET on `/v1/<op>` with `Origin: <url>` (CSRF, behaviour.md §2.5). */
export async function rest(t: Target, call: Call): Promise<Result> {
  const get = GET_OPS.has(call.op);
  const res = await fetch(`${t.url}/v1/${call.op}`, {
    method: get ? 'GET' : 'POST',
    headers: { 'content-type': 'application/json', origin: t.url, ...credentialHeaders(call.creds) },
    ...(get ? {} : { body: JSON.stringify(call.args ?? {}) }),
  });
  const cookies = res.headers.getSetCookie();
  const body = (await res.json()) as Record<string, any>;
  if (res.status === 200) return { ok: true, body, cookies, status: 200 };
  return { ok: false, code: String(body.code), message: String(body.message), cookies, status: res.status };
}

/**
 * POST /graphql with the authorizer-js operation text. An error's `extensions.code` must be upper-case
 * (graphql.md §1.2); it is returned lower-cased, or as `non-upper-case:<code>` so a comparison fails.
 */
export async function graphql(t: Target, call: Call): Promise<Result> {
  const { query, vars } = GQL[call.op];
  const variables = vars && call.args !== undefined ? { [vars]: call.args } : {};
  const res = await fetch(`${t.url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin: t.url, ...credentialHeaders(call.creds) },
    body: JSON.stringify({ query, variables }),
  });
  const cookies = res.headers.getSetCookie();
  const json = (await res.json()) as { data?: Record<string, any> | null; errors?: { message: string; extensions?: { code?: string } }[] };
  const err = json.errors?.[0];
  if (err) {
    const ext = String(err.extensions?.code ?? '');
    const code = ext === ext.toUpperCase() ? ext.toLowerCase() : `non-upper-case:${ext}`;
    return { ok: false, code, message: err.message, cookies, status: res.status };
  }
  return { ok: true, body: json.data![call.op] as Record<string, any>, cookies, status: res.status };
}

const clients = new Map<string, grpcJs.Client>();

/** `profile` → `Profile`, `validate_jwt_token` → `ValidateJwtToken` (gateway route table naming). */
export function rpcName(op: string): string {
  return op.split('_').map((p) => p[0]!.toUpperCase() + p.slice(1)).join('');
}

/** Native gRPC call to gatehouse.authn.v1.AuthnService; credentials travel as metadata. */
export function grpc(t: Target, call: Call): Promise<Result> {
  return grpcRpc(t, rpcName(call.op), call.args ?? {}, call.creds);
}

/**
 * Calls any AuthnService (or, with `service` `mfa` / `authz`, MfaService / AuthzService) RPC by its proto name (`GetJwks`, `GetOpenidConfiguration`, ...) with a
 * plain grpc-js client, as a third-party gRPC client would (no retry of its own). An error's code is read from the
 * numeric gRPC status (behaviour.md §0.2 table) and its message from the status details; cookies
 * come from the `set-cookie` trailers.
 */
export async function grpcRpc(t: Target, rpc: string, args: Record<string, unknown>, creds?: Credentials, service: ServiceName = 'authn'): Promise<Result> {
  const method = serviceDescriptor(service).methods.get(rpc);
  if (!method) throw new Error(`no ${service}.${rpc}`);
  let client = clients.get(t.grpcAddress);
  if (!client) {
    client = new grpcJs.Client(t.grpcAddress, grpcJs.credentials.createInsecure());
    clients.set(t.grpcAddress, client);
  }
  const md = new grpcJs.Metadata();
  for (const [k, v] of Object.entries(credentialHeaders(creds))) md.set(k, v);
  const request = method.encodeRequest(method.normalizeRequest(args));
  return new Promise((resolve) => {
    let outcome: { err: grpcJs.ServiceError | null; value: Buffer | undefined } | undefined;
    let trailers: grpcJs.Metadata | undefined;
    const settle = (): void => {
      if (!outcome || !trailers) return;
      const cookies = trailers.get('set-cookie').map(String);
      if (outcome.err) {
        resolve({ ok: false, code: codeFromGrpcStatus(outcome.err.code), message: outcome.err.details, cookies, grpcStatus: outcome.err.code });
      } else {
        resolve({ ok: true, body: method.decodeResponse(outcome.value!), cookies });
      }
    };
    const call = client.makeUnaryRequest(method.path, (b: Buffer) => b, (b: Buffer) => b, request, md,
      { deadline: Date.now() + 20_000 }, (err, value) => { outcome = { err, value }; settle(); });
    call.on('status', (st: grpcJs.StatusObject) => { trailers = st.metadata; settle(); });
  });
}

/** Closes the cached gRPC channels (afterAll). */
export function closeGrpcClients(): void {
  for (const c of clients.values()) c.close();
  clients.clear();
}

/** Performs `call` on one surface. */
export function perform(surface: Surface, t: Target, call: Call): Promise<Result> {
  return surface === 'rest' ? rest(t, call) : surface === 'graphql' ? graphql(t, call) : grpc(t, call);
}

/** The value of cookie `name` among `Set-Cookie` values, or undefined (an empty value counts as cleared). */
export function cookieValue(setCookies: readonly string[], name: string): string | undefined {
  for (const c of setCookies) {
    const [pair] = c.split(';');
    const i = pair!.indexOf('=');
    if (pair!.slice(0, i).trim() === name) return pair!.slice(i + 1).trim();
  }
  return undefined;
}

/** Expected HTTP status of an error code on REST (behaviour.md §0.2), or undefined for unknown codes. */
export function expectedStatus(code: string): number | undefined {
  return isErrorCode(code) ? httpStatusOf(code as ErrorCode) : undefined;
}

/** Keys whose values differ per call (tokens, ids, clocks): replaced by a type marker. */
const VOLATILE = new Set(['access_token', 'id_token', 'refresh_token', 'id', 'created_at', 'updated_at', 'expires_in',
  'iat', 'exp', 'nonce', 'sub', 'at_hash', 'auth_time', 'family_id', 'jti', 'revoked_timestamp', 'sid']);
/** Fields the authorizer-js selection sets do not ask for (graphql.md §4.3): not compared. */
const UNSELECTED = new Set(['has_skipped_mfa_setup_at', 'mfa_locked_at', 'enrolled_mfa_methods', 'should_offer_webauthn_mfa_verify',
  'should_offer_webauthn_mfa_setup', 'should_offer_email_otp_mfa_setup', 'should_offer_sms_otp_mfa_setup', 'should_offer_mfa_setup']);

function marker(v: unknown): unknown {
  if (v === null || v === undefined) return null;
  return `<${typeof v}>`;
}

function strip(v: unknown, replace: ReadonlyMap<string, string>): unknown {
  if (typeof v === 'string') return replace.get(v) ?? v;
  if (Array.isArray(v)) return v.map((x) => strip(x, replace));
  if (v && typeof v === 'object') {
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(v).sort()) {
      if (UNSELECTED.has(k)) continue;
      const val = (v as Record<string, unknown>)[k];
      out[k] = VOLATILE.has(k) ? marker(val) : strip(val, replace);
    }
    return out;
  }
  return v;
}

/**
 * The comparable part of a result: `{code, message}` for errors; for successes the body with tokens,
 * ids and timestamps replaced by type markers, and each string in `replace` (e.g. a per-surface email)
 * replaced by its placeholder.
 */
export function normalise(r: Result, replace: Record<string, string> = {}): unknown {
  if (!r.ok) return { code: r.code, message: r.message };
  return { ok: true, body: strip(r.body, new Map(Object.entries(replace))) };
}
