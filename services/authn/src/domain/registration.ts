/**
 * @module @gatehouse/authn/domain/registration
 * Registration without an admin (issue 34 §2): OAuth 2.0 Dynamic Client Registration (RFC 7591) at
 * `POST /oauth/register` and its management protocol (RFC 7592) at `/oauth/register/<client_id>`,
 * both behind `--enable-dynamic-client-registration` (off by default), and the redirect URI rules of
 * native apps (RFC 8252 §7). Only public clients register: no secret (`token_endpoint_auth_method`
 * `none`), PKCE S256 required (as for every public client), the code flow only, redirect URIs that are
 * https, loopback http (any port, RFC 8252 §7.3) or a private-use scheme (RFC 8252 §7.1). A client
 * registered this way is never first-party: its users see the consent page, which shows the host of
 * its redirect URI (the one fact the server verified). Registrations are limited per client address
 * and by a ceiling on the registry (`--dynamic-client-registration-max-clients`).
 */
import { randomUUID } from 'node:crypto';
import { hmacSha256Hex, randomToken, timingSafeEqualString } from '@gatehouse/crypto';
import type { ClientRecord } from '../storage/ports.ts';
import { OIDC_SCOPES, findClient } from './clients.ts';
import type { AuthnContext } from './deps.ts';

/** Registrations one client address may make per hour. */
export const REGISTRATIONS_PER_ADDRESS_PER_HOUR = 10;
const HOUR = 3600;
const MAX_REDIRECT_URIS = 10;
const MAX_URI_CHARS = 2000;
const REGISTRABLE_GRANTS = ['authorization_code', 'refresh_token'];

/** One answer of the registration endpoint: an HTTP status and its JSON body (null: no body). */
export interface RegistrationReply {
  status: number;
  body: Record<string, unknown> | null;
  /** RFC 6750 §3 challenge for a 401 */
  wwwAuthenticate?: string;
}

const error = (status: number, code: string, description: string): RegistrationReply => ({ status, body: { error: code, error_description: description } });
/** RFC 7591 §3.2.2 */
const badMetadata = (d: string): RegistrationReply => error(400, 'invalid_client_metadata', d);
const badRedirect = (d: string): RegistrationReply => error(400, 'invalid_redirect_uri', d);

/** Loopback hosts of RFC 8252 §7.3 (the IP literals, and `localhost`, which many native and CLI clients use). */
const LOOPBACK_HOSTS = new Set(['127.0.0.1', '[::1]', 'localhost']);

/** Is `uri` a loopback http redirect URI (RFC 8252 §7.3)? */
export function isLoopbackRedirect(uri: string): boolean {
  try {
    const u = new URL(uri);
    return u.protocol === 'http:' && LOOPBACK_HOSTS.has(u.hostname);
  } catch {
    return false;
  }
}

/**
 * Does the requested redirect URI match a registered one? Exactly (RFC 9700 §4.1.3), except that a
 * registered loopback http URI matches the same URI on any port (RFC 8252 §7.3: a native app binds an
 * ephemeral port at run time).
 */
export function redirectUriMatches(registered: string, requested: string): boolean {
  if (registered === requested) return true;
  if (!isLoopbackRedirect(registered) || !isLoopbackRedirect(requested)) return false;
  const a = new URL(registered);
  const b = new URL(requested);
  a.port = '';
  b.port = '';
  return a.href === b.href;
}

/**
 * The redirect URI rules of a self-registered client: https with a host; http on a loopback host
 * (RFC 8252 §7.3); or a private-use scheme in reverse-domain form (RFC 8252 §7.1, `com.example.app:/cb`).
 * No fragment (RFC 6749 §3.1.2), no user info.
 * @returns null when acceptable, else the reason
 */
export function redirectUriProblem(uri: string): string | null {
  if (uri.length > MAX_URI_CHARS) return `redirect URI longer than ${MAX_URI_CHARS} characters`;
  let u: URL;
  try {
    u = new URL(uri);
  } catch {
    return `"${uri}" is not an absolute URI`;
  }
  if (u.hash !== '' || uri.includes('#')) return `"${uri}" has a fragment`;
  if (u.username !== '' || u.password !== '') return `"${uri}" carries user information`;
  if (u.protocol === 'https:') return u.hostname === '' ? `"${uri}" has no host` : null;
  if (u.protocol === 'http:') return isLoopbackRedirect(uri) ? null : `"${uri}": http is allowed on a loopback address only (127.0.0.1, [::1], localhost)`;
  // RFC 8252 §7.1: a private-use scheme is a reverse domain name the app controls, so it holds a dot
  const scheme = u.protocol.slice(0, -1);
  if (/^[a-z][a-z0-9+-]*(\.[a-z0-9+-]+)+$/i.test(scheme)) return null;
  return `"${uri}": use https, a loopback http address, or a private-use scheme such as com.example.app:/callback`;
}

const macKey = (c: AuthnContext): string => c.options.encryptionKey || c.options.clientSecret;
const tokenMac = (c: AuthnContext, token: string): string => `hmac-sha256:${hmacSha256Hex(macKey(c), `registration:${token}`)}`;

const strings = (v: unknown): string[] | null => (Array.isArray(v) && v.every((x) => typeof x === 'string') ? v as string[] : null);

/** The client's metadata as RFC 7591 §3.2.1 returns it. */
function metadataOf(c: AuthnContext, client: ClientRecord): Record<string, unknown> {
  return {
    client_id: client.id, client_id_issued_at: client.createdAt, client_name: client.name, redirect_uris: client.redirectUris,
    grant_types: client.grantTypes, response_types: ['code'], token_endpoint_auth_method: 'none', scope: client.allowedScopes.join(' '),
    registration_client_uri: `${c.options.url}/oauth/register/${client.id}`,
    // issue 34 §4: RFC 9126 §6
    require_pushed_authorization_requests: client.requirePushedAuthorizationRequests,
    // issue 34 §6: OIDC Back-Channel Logout 1.0 §2.2, Front-Channel Logout 1.0 §2 (only when set)
    ...(client.backchannelLogoutUri ? { backchannel_logout_uri: client.backchannelLogoutUri, backchannel_logout_session_required: client.backchannelLogoutSessionRequired } : {}),
    ...(client.frontchannelLogoutUri ? { frontchannel_logout_uri: client.frontchannelLogoutUri, frontchannel_logout_session_required: client.frontchannelLogoutSessionRequired } : {}),
  };
}

/** The metadata a registration or an update asks for, checked (RFC 7591 §2), or the refusal. */
/** The logout metadata of a registration (issue 34 §6), like a redirect URI: https or loopback http. */
type LogoutChannels = Pick<ClientRecord, 'backchannelLogoutUri' | 'backchannelLogoutSessionRequired' | 'frontchannelLogoutUri' | 'frontchannelLogoutSessionRequired'>;

function parseLogoutChannels(body: Record<string, unknown>): LogoutChannels | string {
  const out: LogoutChannels = { backchannelLogoutUri: null, backchannelLogoutSessionRequired: false, frontchannelLogoutUri: null, frontchannelLogoutSessionRequired: false };
  for (const [field, key] of [['backchannel_logout_uri', 'backchannelLogoutUri'], ['frontchannel_logout_uri', 'frontchannelLogoutUri']] as const) {
    const v = body[field];
    if (v === undefined) continue;
    if (typeof v !== 'string' || redirectUriProblem(v) !== null || !/^https?:/i.test(v)) return `${field} must be an https URL or a loopback http URL without a fragment`;
    out[key] = v;
  }
  for (const [field, key] of [['backchannel_logout_session_required', 'backchannelLogoutSessionRequired'], ['frontchannel_logout_session_required', 'frontchannelLogoutSessionRequired']] as const) {
    const v = body[field];
    if (v === undefined) continue;
    if (typeof v !== 'boolean') return `${field} must be a boolean`;
    out[key] = v;
  }
  return out;
}

function parseMetadata(body: Record<string, unknown>): {
  ok: true; name: string; redirectUris: string[]; grantTypes: string[]; scopes: string[]; logout: LogoutChannels; requirePushedAuthorizationRequests: boolean;
} | { ok: false; reply: RegistrationReply } {
  const fail = (reply: RegistrationReply) => ({ ok: false as const, reply });
  const method = body.token_endpoint_auth_method;
  if (method !== undefined && method !== 'none') return fail(badMetadata('only public clients register here: token_endpoint_auth_method must be "none"'));
  const redirectUris = strings(body.redirect_uris);
  if (!redirectUris || redirectUris.length === 0) return fail(badRedirect('redirect_uris is required: a list of redirect URIs'));
  if (redirectUris.length > MAX_REDIRECT_URIS) return fail(badRedirect(`at most ${MAX_REDIRECT_URIS} redirect URIs`));
  for (const u of redirectUris) {
    const problem = redirectUriProblem(u);
    if (problem) return fail(badRedirect(problem));
  }
  const grantTypes = body.grant_types === undefined ? ['authorization_code'] : strings(body.grant_types);
  if (!grantTypes || grantTypes.length === 0 || grantTypes.some((g) => !REGISTRABLE_GRANTS.includes(g)) || !grantTypes.includes('authorization_code')) {
    return fail(badMetadata('grant_types must include authorization_code and may add refresh_token'));
  }
  const responseTypes = body.response_types === undefined ? ['code'] : strings(body.response_types);
  if (!responseTypes || responseTypes.some((t) => t !== 'code')) return fail(badMetadata('response_types may only be ["code"]'));
  if (body.client_name !== undefined && (typeof body.client_name !== 'string' || body.client_name.trim() === '' || body.client_name.length > 256)) {
    return fail(badMetadata('client_name must be a non-empty string of at most 256 characters'));
  }
  if (body.scope !== undefined && typeof body.scope !== 'string') return fail(badMetadata('scope must be a space-separated string'));
  const scopes = body.scope === undefined ? [...OIDC_SCOPES] : [...new Set((body.scope as string).split(' ').filter(Boolean))];
  const unknown = scopes.filter((s) => !(OIDC_SCOPES as readonly string[]).includes(s));
  if (unknown.length > 0 || scopes.length === 0) return fail(badMetadata(`scope must be among ${OIDC_SCOPES.join(' ')}`));
  const logout = parseLogoutChannels(body);
  if (typeof logout === 'string') return fail(badMetadata(logout));
  // RFC 9126 §6: a boolean, false when omitted
  const requirePar = body.require_pushed_authorization_requests ?? false;
  if (typeof requirePar !== 'boolean') return fail(badMetadata('require_pushed_authorization_requests must be a boolean'));
  const name = typeof body.client_name === 'string' ? body.client_name.trim() : new URL(redirectUris[0]!).host || redirectUris[0]!;
  return { ok: true, name, redirectUris: [...new Set(redirectUris)], grantTypes: [...new Set(grantTypes)], scopes, logout, requirePushedAuthorizationRequests: requirePar };
}

/**
 * `POST /oauth/register` (RFC 7591 §3.1): registers a public client.
 * @param body the JSON request body
 * @param clientIp the caller's address (the per-address limit)
 * @returns 201 with the client's metadata, its `registration_access_token` (once) and `registration_client_uri`;
 *   404 when registration is off; 400 `invalid_redirect_uri` / `invalid_client_metadata`; 429 over the
 *   per-address limit; 403 when the registry is full
 */
export async function registerClient(c: AuthnContext, body: Record<string, unknown>, clientIp: string): Promise<RegistrationReply> {
  if (!c.options.enableDynamicClientRegistration) return error(404, 'not_found', 'dynamic client registration is not enabled');
  const meta = parseMetadata(body);
  if (!meta.ok) return meta.reply;
  const now = c.now();
  if (await c.oauth.countRegisteredClients(now - HOUR, clientIp) >= REGISTRATIONS_PER_ADDRESS_PER_HOUR) {
    return error(429, 'too_many_requests', `at most ${REGISTRATIONS_PER_ADDRESS_PER_HOUR} registrations per hour from one address`);
  }
  if (await c.oauth.countRegisteredClients(null, null) >= c.options.dynamicClientRegistrationMaxClients) {
    return error(403, 'access_denied', 'the client registry is full');
  }
  const token = randomToken(32);
  const client: ClientRecord = {
    id: randomUUID(), name: meta.name, description: 'registered through /oauth/register', allowedScopes: meta.scopes, isActive: true, secretHash: null,
    redirectUris: meta.redirectUris, grantTypes: meta.grantTypes, isPublic: true, postLogoutRedirectUris: [], isFirstParty: false,
    registrationTokenHash: tokenMac(c, token), registeredIp: clientIp, createdAt: now, updatedAt: now, ...meta.logout,
    requirePushedAuthorizationRequests: meta.requirePushedAuthorizationRequests,
  };
  await c.oauth.createClient(client);
  return { status: 201, body: { ...metadataOf(c, client), registration_access_token: token } };
}

/**
 * RFC 7592 §2: read (GET), replace (PUT) or delete (DELETE) a self-registered client with its
 * registration access token (`Authorization: Bearer`). A wrong token, an unknown client and an
 * admin's client all answer 401 `invalid_token` (RFC 7592 §2: no hint which).
 * @param bearer the token from the Authorization header, or null
 * @param body the JSON body of a PUT
 * @returns 200 with the metadata (GET, PUT), 204 (DELETE), 400 as for registration (PUT), 401, 404 when off, 405
 */
export async function manageRegisteredClient(
  c: AuthnContext, method: string, clientId: string, bearer: string | null, body: Record<string, unknown>,
): Promise<RegistrationReply> {
  if (!c.options.enableDynamicClientRegistration) return error(404, 'not_found', 'dynamic client registration is not enabled');
  const client = clientId === '' ? null : await findClient(c, clientId);
  const ok = client !== null && client.registrationTokenHash !== null && bearer !== null && timingSafeEqualString(client.registrationTokenHash, tokenMac(c, bearer));
  if (!ok) return { ...error(401, 'invalid_token', 'the registration access token is invalid for this client'), wwwAuthenticate: 'Bearer error="invalid_token"' };
  if (method === 'GET') return { status: 200, body: metadataOf(c, client) };
  if (method === 'DELETE') {
    await c.oauth.deleteClient(client.id);
    await c.sessions.deleteAllForClient(client.id);
    return { status: 204, body: null };
  }
  if (method !== 'PUT') return error(405, 'invalid_request', 'use GET, PUT or DELETE');
  // RFC 7592 §2.2: the body carries client_id, and it is this client's
  if (body.client_id !== client.id) return badMetadata('client_id in the body must be this client\'s');
  const meta = parseMetadata(body);
  if (!meta.ok) return meta.reply;
  const next: ClientRecord = { ...client, name: meta.name, redirectUris: meta.redirectUris, grantTypes: meta.grantTypes, allowedScopes: meta.scopes, ...meta.logout,
    requirePushedAuthorizationRequests: meta.requirePushedAuthorizationRequests, updatedAt: c.now() };
  await c.oauth.updateClient(next);
  return { status: 200, body: metadataOf(c, next) };
}
