/**
 * @module @gatehouse/authn/domain/clients
 * OAuth clients (service accounts) and trusted issuers (behaviour.md §5.8), and client
 * authentication by secret (RFC 6749 §2.3.1). authn owns them (issue 18): it issues their tokens and
 * reads them on the token endpoint's hot path, and a deactivation ends their live sessions at once.
 */
import { randomUUID } from 'node:crypto';
import { AppError } from '@gatehouse/errors';
import { isBcryptHash, keyRing, macHex, matchMac, randomToken, timingSafeEqualString, verifyBcrypt, type KeyRing } from '@gatehouse/crypto';
import type { ClientRecord, Page, TrustedIssuerRecord } from '../storage/ports.ts';
import { isDocumentClientId, resolveDocumentClient } from './client-metadata-document.ts';
import type { AuthnContext } from './deps.ts';
import { pageWindow, type Window } from '@gatehouse/contracts/pagination';
import { MAX_URL_CHARS, optText, type Opt } from './validation.ts';

const bad = (m: string): AppError => new AppError('invalid_argument', m);

export const CLIENT_DELETED = 'Service account deleted successfully';
export const ISSUER_DELETED = 'Trusted issuer deleted successfully';
export const OWN_CLIENT_IMMUTABLE = "the server's own client is configured by flags and cannot be modified";
export const GRANT_TYPES = [
  'authorization_code', 'refresh_token', 'client_credentials', 'urn:ietf:params:oauth:grant-type:token-exchange',
  // issue 34 §5: RFC 8628 §3.4, enabled per client (`/oauth/device_authorization` refuses the others)
  'urn:ietf:params:oauth:grant-type:device_code',
] as const;
/** The scopes /authorize grants (OIDC Core §5.4, §11) */
export const OIDC_SCOPES = ['openid', 'profile', 'email', 'phone', 'offline_access'] as const;
export const KEY_SOURCE_TYPES = ['oidc_discovery', 'static_jwks_url'] as const;
export const ISSUER_TYPES = ['kubernetes_sa', 'spiffe_jwt', 'oidc', 'cloud_oidc'] as const;

/**
 * The keys client secrets are MACed with: the ring of `--encryption-key` (issue 32: the first MACs,
 * every key verifies), else `--client-secret` (documented in the README).
 */
const rings = new WeakMap<AuthnContext['options'], KeyRing>();
function macKeys(c: AuthnContext): KeyRing {
  let ring = rings.get(c.options);
  if (!ring) rings.set(c.options, (ring = keyRing(c.options.encryptionKey, c.options.clientSecret)));
  return ring;
}
const HMAC_PREFIX = 'hmac-sha256:';
/** `hmac-sha256:<hex>` of a secret under the first key (behaviour.md §5.8: random secrets need no slow hash). */
export const hashClientSecret = (c: AuthnContext, secret: string): string => `${HMAC_PREFIX}${macHex(macKeys(c), secret)}`;

/** The server's own client (`--client-id`), listed and immutable (behaviour.md §5.8, §3.1). */
export function ownClient(c: AuthnContext): ClientRecord {
  return {
    id: c.options.clientId, name: c.options.organizationName, description: "this server's own client (configured by flags)",
    allowedScopes: [...OIDC_SCOPES], isActive: true, secretHash: null, redirectUris: [...c.options.redirectUris],
    grantTypes: ['authorization_code', 'refresh_token'], isPublic: false, postLogoutRedirectUris: [], isFirstParty: true,
    registrationTokenHash: null, registeredIp: null, createdAt: 0, updatedAt: 0,
    backchannelLogoutUri: null, backchannelLogoutSessionRequired: false, frontchannelLogoutUri: null, frontchannelLogoutSessionRequired: false,
    requirePushedAuthorizationRequests: false,
  };
}

const isOwn = (c: AuthnContext, id: string): boolean => id === c.options.clientId;

function requireId(id: Opt<string>): string {
  const v = optText('id', id, 64)?.trim();
  if (!v) throw bad('service account ID required');
  return v;
}

function scopesOf(list: readonly string[]): string[] {
  if (list.some((s) => s.length > 256)) throw bad('allowed_scopes entries must be at most 256 characters');
  return [...new Set(list.map((s) => s.trim()).filter((s) => s !== ''))];
}

/** Absolute URIs without a fragment (RFC 6749 §3.1.2), compared later by exact string (RFC 9700 §4.1.3). */
function urisOf(field: string, list: readonly string[]): string[] {
  const out = [...new Set(list.map((u) => u.trim()).filter((u) => u !== ''))];
  if (out.length > 50) throw bad(`${field} must have at most 50 entries`);
  for (const u of out) {
    let parsed: URL;
    try {
      parsed = new URL(u);
    } catch {
      throw bad(`${field} must hold absolute URIs, got "${u}"`);
    }
    if (u.length > MAX_URL_CHARS || parsed.hash !== '' || u.includes('#')) throw bad(`${field} must hold absolute URIs without a fragment, got "${u}"`);
    if (parsed.protocol === 'javascript:' || parsed.protocol === 'data:') throw bad(`${field} must hold absolute URIs, got "${u}"`);
  }
  return out;
}

function grantTypesOf(list: readonly string[]): string[] {
  const out = [...new Set(list.map((g) => g.trim()).filter((g) => g !== ''))];
  for (const g of out) if (!(GRANT_TYPES as readonly string[]).includes(g)) throw bad(`grant_types must be among ${GRANT_TYPES.join(', ')}, got "${g}"`);
  return out;
}

/**
 * A `backchannel_logout_uri` (OIDC Back-Channel Logout 1.0 §2.2) or `frontchannel_logout_uri`
 * (Front-Channel Logout 1.0 §2): an absolute http(s) URL without a fragment; '' clears it.
 * @returns the URL, or null for ''
 * @throws AppError `invalid_argument` `<field> must be an absolute http(s) URL without a fragment`
 */
export function logoutUriOf(field: string, value: string): string | null {
  const v = value.trim();
  if (v === '') return null;
  let u: URL | null = null;
  try { u = new URL(v); } catch { /* refused below */ }
  if (!u || (u.protocol !== 'https:' && u.protocol !== 'http:') || u.hash !== '' || v.includes('#') || v.length > MAX_URL_CHARS || u.username !== '' || u.password !== '') {
    throw bad(`${field} must be an absolute http(s) URL without a fragment`);
  }
  return v;
}

/** issue 34 §6: the logout metadata a create or update sets; absent fields: unchanged (create: none). */
export interface LogoutChannelsInput {
  backchannelLogoutUri?: Opt<string>;
  backchannelLogoutSessionRequired?: Opt<boolean>;
  frontchannelLogoutUri?: Opt<string>;
  frontchannelLogoutSessionRequired?: Opt<boolean>;
}

export interface ClientInput extends LogoutChannelsInput {
  name?: Opt<string>;
  description?: Opt<string>;
  allowedScopes: readonly string[];
  redirectUris: readonly string[];
  grantTypes: readonly string[];
  isPublic?: Opt<boolean>;
  postLogoutRedirectUris: readonly string[];
  /** issue 34: `/authorize` asks this client's users no consent */
  isFirstParty?: Opt<boolean>;
  /** issue 34 §4: RFC 9126 §6, `/authorize` takes only pushed requests from this client */
  requirePushedAuthorizationRequests?: Opt<boolean>;
}

/**
 * `create_client` (behaviour.md §5.8): a new client and its secret (32 random bytes, base64url, 43
 * characters), returned once and stored as HMAC-SHA-256. Without `grant_types`, a client with redirect
 * URIs gets `authorization_code` and `refresh_token`, one without gets `client_credentials`. A public
 * client has no secret and may not use `client_credentials`.
 * @throws AppError `invalid_argument` `name is required` / `at least one allowed scope is required` / a bad URI or grant type
 */
export async function createClient(c: AuthnContext, input: ClientInput): Promise<{ client: ClientRecord; secret: string }> {
  const name = optText('name', input.name)?.trim();
  if (!name) throw bad('name is required');
  const description = optText('description', input.description, 4096)?.trim() || null;
  const allowedScopes = scopesOf(input.allowedScopes);
  if (allowedScopes.length === 0) throw bad('at least one allowed scope is required');
  const redirectUris = urisOf('redirect_uris', input.redirectUris);
  const isPublic = input.isPublic === true;
  let grantTypes = grantTypesOf(input.grantTypes);
  if (grantTypes.length === 0) grantTypes = redirectUris.length > 0 ? ['authorization_code', 'refresh_token'] : ['client_credentials'];
  if (isPublic && grantTypes.includes('client_credentials')) throw bad('a public client cannot use client_credentials');
  const secret = isPublic ? '' : randomToken(32);
  const now = c.now();
  const client: ClientRecord = {
    id: randomUUID(), name, description, allowedScopes, isActive: true, secretHash: isPublic ? null : hashClientSecret(c, secret),
    redirectUris, grantTypes, isPublic, postLogoutRedirectUris: urisOf('post_logout_redirect_uris', input.postLogoutRedirectUris),
    isFirstParty: input.isFirstParty === true, registrationTokenHash: null, registeredIp: null, createdAt: now, updatedAt: now,
    backchannelLogoutUri: typeof input.backchannelLogoutUri === 'string' ? logoutUriOf('backchannel_logout_uri', input.backchannelLogoutUri) : null,
    backchannelLogoutSessionRequired: input.backchannelLogoutSessionRequired === true,
    frontchannelLogoutUri: typeof input.frontchannelLogoutUri === 'string' ? logoutUriOf('frontchannel_logout_uri', input.frontchannelLogoutUri) : null,
    frontchannelLogoutSessionRequired: input.frontchannelLogoutSessionRequired === true,
    requirePushedAuthorizationRequests: input.requirePushedAuthorizationRequests === true,
  };
  await c.oauth.createClient(client);
  return { client, secret };
}

/**
 * A stored client by id, or the server's own.
 * @throws AppError `invalid_argument` `service account ID required`; `not_found` `client not found`
 */
export async function getClient(c: AuthnContext, id: Opt<string>): Promise<ClientRecord> {
  const v = requireId(id);
  if (isOwn(c, v)) return ownClient(c);
  const client = await c.oauth.findClient(v);
  if (!client) throw new AppError('not_found', 'client not found');
  return client;
}

async function mutableClient(c: AuthnContext, id: Opt<string>): Promise<ClientRecord> {
  const v = requireId(id);
  if (isOwn(c, v)) throw new AppError('failed_precondition', OWN_CLIENT_IMMUTABLE);
  return getClient(c, v);
}

/**
 * `update_client`: only the supplied fields change (an empty list: unchanged; `clearPostLogoutRedirectUris`
 * removes every post-logout redirect URI, OpenID Connect RP-Initiated Logout 1.0 §2). Deactivation deletes the
 * client's service-account sessions and the user sessions issued through it, so their live tokens stop
 * validating at once (behaviour.md §2.2, §5.8).
 * @returns the record and the names of the changed fields (for the audit log)
 */
export async function updateClient(
  c: AuthnContext, id: Opt<string>, input: ClientInput & { isActive?: Opt<boolean>; clearPostLogoutRedirectUris?: Opt<boolean> },
): Promise<{ client: ClientRecord; changed: string[] }> {
  if (input.clearPostLogoutRedirectUris === true && input.postLogoutRedirectUris.length > 0) {
    throw bad('clear_post_logout_redirect_uris cannot be combined with post_logout_redirect_uris');
  }
  const old = await mutableClient(c, id);
  const next = { ...old };
  const changed: string[] = [];
  const set = <K extends keyof ClientRecord>(k: K, field: string, v: ClientRecord[K] | undefined): void => {
    if (v === undefined) return;
    next[k] = v;
    changed.push(field);
  };
  if (input.name !== undefined && input.name !== null) {
    const name = optText('name', input.name)!.trim();
    if (!name) throw bad('name is required');
    set('name', 'name', name);
  }
  if (input.description !== undefined && input.description !== null) set('description', 'description', optText('description', input.description, 4096)!.trim() || null);
  if (input.allowedScopes.length > 0) {
    const scopes = scopesOf(input.allowedScopes);
    if (scopes.length === 0) throw bad('at least one allowed scope is required');
    set('allowedScopes', 'allowed_scopes', scopes);
  }
  if (input.redirectUris.length > 0) set('redirectUris', 'redirect_uris', urisOf('redirect_uris', input.redirectUris));
  if (input.grantTypes.length > 0) set('grantTypes', 'grant_types', grantTypesOf(input.grantTypes));
  if (input.postLogoutRedirectUris.length > 0) set('postLogoutRedirectUris', 'post_logout_redirect_uris', urisOf('post_logout_redirect_uris', input.postLogoutRedirectUris));
  if (input.clearPostLogoutRedirectUris === true) set('postLogoutRedirectUris', 'post_logout_redirect_uris', []);
  if (typeof input.isActive === 'boolean') set('isActive', 'is_active', input.isActive);
  if (typeof input.isFirstParty === 'boolean') set('isFirstParty', 'is_first_party', input.isFirstParty);
  // issue 34 §6: '' clears a logout URI, absent leaves it
  if (typeof input.backchannelLogoutUri === 'string') set('backchannelLogoutUri', 'backchannel_logout_uri', logoutUriOf('backchannel_logout_uri', input.backchannelLogoutUri));
  if (typeof input.backchannelLogoutSessionRequired === 'boolean') set('backchannelLogoutSessionRequired', 'backchannel_logout_session_required', input.backchannelLogoutSessionRequired);
  if (typeof input.frontchannelLogoutUri === 'string') set('frontchannelLogoutUri', 'frontchannel_logout_uri', logoutUriOf('frontchannel_logout_uri', input.frontchannelLogoutUri));
  if (typeof input.frontchannelLogoutSessionRequired === 'boolean') set('frontchannelLogoutSessionRequired', 'frontchannel_logout_session_required', input.frontchannelLogoutSessionRequired);
  if (typeof input.requirePushedAuthorizationRequests === 'boolean') {
    set('requirePushedAuthorizationRequests', 'require_pushed_authorization_requests', input.requirePushedAuthorizationRequests);
  }
  if (next.isPublic && next.grantTypes.includes('client_credentials')) throw bad('a public client cannot use client_credentials');
  next.updatedAt = c.now();
  await c.oauth.updateClient(next);
  if (old.isActive && !next.isActive) await endClientSessions(c, next.id);
  return { client: next, changed };
}

/** `rotate_client_secret`: a new secret, returned once; the old one stops working at once. */
export async function rotateClientSecret(c: AuthnContext, id: Opt<string>): Promise<{ client: ClientRecord; secret: string }> {
  const old = await mutableClient(c, id);
  if (old.isPublic) throw new AppError('failed_precondition', 'a public client has no secret');
  const secret = randomToken(32);
  const client = { ...old, secretHash: hashClientSecret(c, secret), updatedAt: c.now() };
  await c.oauth.updateClient(client);
  return { client, secret };
}

/**
 * Ends every live session of a client (behaviour.md §2.2 "Service account deactivated → its live
 * tokens stop validating immediately", §5.8 update_client): its service-account sessions
 * (client_credentials, `userId` = the client's id) and the user sessions whose tokens were issued
 * to it (`/authorize`, refresh), so their access and refresh tokens are refused on the next request.
 */
async function endClientSessions(c: AuthnContext, clientId: string): Promise<void> {
  await c.sessions.deleteAllForUser(clientId);
  await c.sessions.deleteAllForClient(clientId);
}

/** `delete_client`: deletes the client, its trusted issuers and its live sessions (service-account and user). */
export async function deleteClient(c: AuthnContext, id: Opt<string>): Promise<ClientRecord> {
  const client = await mutableClient(c, id);
  await c.oauth.deleteClient(client.id);
  await endClientSessions(c, client.id);
  return client;
}

/** `clients`: stored clients (created_at desc, then id), then the server's own client, which counts in `total`. */
export async function listClients(c: AuthnContext, pagination: Opt<{ page?: Opt<number>; limit?: Opt<number> }>): Promise<{ page: Window; result: Page<ClientRecord> }> {
  const page = pageWindow(pagination);
  const stored = await c.oauth.listClients({ offset: page.offset, limit: page.limit });
  const rows = [...stored.rows];
  if (page.offset <= stored.total && stored.total < page.offset + page.limit) rows.push(ownClient(c));
  return { page, result: { rows, total: stored.total + 1 } };
}

/**
 * Client authentication by secret (RFC 6749 §2.3.1): true when `secret` is the client's. A legacy
 * bcrypt hash that matches is replaced by the HMAC (behaviour.md §5.8), and so is an HMAC made under
 * an older key of the `--encryption-key` ring (issue 32: re-MACed on use). The server's own client
 * authenticates with `--client-secret`.
 */
export async function verifyClientSecret(c: AuthnContext, client: ClientRecord, secret: string): Promise<boolean> {
  if (isOwn(c, client.id)) return timingSafeEqualString(secret, c.options.clientSecret);
  const stored = client.secretHash;
  if (!stored) return false;
  if (stored.startsWith(HMAC_PREFIX)) {
    const match = matchMac(macKeys(c), secret, stored, (hex) => `${HMAC_PREFIX}${hex}`);
    if (match > 0) await c.oauth.updateClient({ ...client, secretHash: hashClientSecret(c, secret), updatedAt: c.now() });
    return match >= 0;
  }
  if (isBcryptHash(stored) && (await verifyBcrypt(stored, secret))) {
    await c.oauth.updateClient({ ...client, secretHash: hashClientSecret(c, secret), updatedAt: c.now() });
    return true;
  }
  return false;
}

/**
 * A stored or own client by id for the OAuth endpoints, or the client of an OAuth Client ID Metadata
 * Document when the id is a URL and `--enable-client-id-metadata-documents` is on (issue 34 §2,
 * domain/client-metadata-document.ts: fetched and cached); null when unknown or unusable.
 */
export async function findClient(c: AuthnContext, id: string): Promise<ClientRecord | null> {
  if (id === '') return null;
  if (isOwn(c, id)) return ownClient(c);
  if (isDocumentClientId(c, id)) {
    const doc = await resolveDocumentClient(c, id);
    return doc.ok ? doc.client : null;
  }
  return c.oauth.findClient(id);
}

// ---- trusted issuers ----

export interface IssuerInput {
  serviceAccountId?: Opt<string>;
  name?: Opt<string>;
  issuerUrl?: Opt<string>;
  keySourceType?: Opt<string>;
  jwksUrl?: Opt<string>;
  expectedAud?: Opt<string>;
  subjectClaim?: Opt<string>;
  allowedSubjects?: Opt<string>;
  issuerType?: Opt<string>;
  isActive?: Opt<boolean>;
  spiffeRefreshHintSeconds?: Opt<number>;
  enableTokenReview?: Opt<boolean>;
  kubernetesApiServerUrl?: Opt<string>;
}

function required(field: string, v: Opt<string>, max = 512): string {
  const s = optText(field, v, max)?.trim();
  if (!s) throw bad(`${field} is required`);
  return s;
}

function httpUrl(field: string, v: string): string {
  let u: URL;
  try {
    u = new URL(v);
  } catch {
    throw bad(`${field} must be an http(s) URL`);
  }
  if (u.protocol !== 'https:' && u.protocol !== 'http:') throw bad(`${field} must be an http(s) URL`);
  return v;
}

function checkTokenReview(enable: boolean, url: string | null): void {
  if (!enable) return;
  if (!url) throw bad('kubernetes_api_server_url is required when enable_token_review is true');
  let u: URL | null = null;
  try {
    u = new URL(url);
  } catch {
    u = null;
  }
  if (!u || u.protocol !== 'https:') throw bad('kubernetes_api_server_url must be an https URL');
}

function hintOf(v: Opt<number>): number | null {
  if (v === null || v === undefined) return null;
  if (!Number.isSafeInteger(v) || v < 0) throw bad('spiffe_refresh_hint_seconds must be a non-negative integer');
  return v;
}

/**
 * `add_trusted_issuer` (behaviour.md §5.8).
 * @throws AppError `invalid_argument` (a required field, a bad enum or URL, the token-review rules);
 *   `not_found` `service account not found: <id>`; `already_exists` `issuer_url already registered: <url>`
 */
export async function addTrustedIssuer(c: AuthnContext, i: IssuerInput): Promise<TrustedIssuerRecord> {
  const serviceAccountId = required('service_account_id', i.serviceAccountId, 64);
  const name = required('name', i.name, 256);
  const issuerUrl = httpUrl('issuer_url', required('issuer_url', i.issuerUrl));
  const keySourceType = required('key_source_type', i.keySourceType, 32);
  const expectedAud = required('expected_aud', i.expectedAud);
  const issuerType = required('issuer_type', i.issuerType, 32);
  if (!(KEY_SOURCE_TYPES as readonly string[]).includes(keySourceType)) throw bad(`key_source_type must be one of ${KEY_SOURCE_TYPES.join(', ')}`);
  if (!(ISSUER_TYPES as readonly string[]).includes(issuerType)) throw bad(`issuer_type must be one of ${ISSUER_TYPES.join(', ')}`);
  const jwksUrl = optText('jwks_url', i.jwksUrl, MAX_URL_CHARS)?.trim() || null;
  if (jwksUrl) httpUrl('jwks_url', jwksUrl);
  if (keySourceType === 'static_jwks_url' && !jwksUrl) throw bad('jwks_url is required when key_source_type is static_jwks_url');
  const enableTokenReview = i.enableTokenReview === true;
  const kubernetesApiServerUrl = optText('kubernetes_api_server_url', i.kubernetesApiServerUrl, MAX_URL_CHARS)?.trim() || null;
  checkTokenReview(enableTokenReview, kubernetesApiServerUrl);
  if (isOwn(c, serviceAccountId) || !(await c.oauth.findClient(serviceAccountId))) throw new AppError('not_found', `service account not found: ${serviceAccountId}`);
  if (await c.oauth.findIssuerByUrl(issuerUrl)) throw new AppError('already_exists', `issuer_url already registered: ${issuerUrl}`);
  const now = c.now();
  const rec: TrustedIssuerRecord = {
    id: randomUUID(), serviceAccountId, name, issuerUrl, keySourceType, jwksUrl, expectedAud,
    subjectClaim: optText('subject_claim', i.subjectClaim, 128)?.trim() || 'sub',
    allowedSubjects: optText('allowed_subjects', i.allowedSubjects, 16384)?.trim() || null, issuerType, isActive: true,
    spiffeRefreshHintSeconds: hintOf(i.spiffeRefreshHintSeconds), enableTokenReview, kubernetesApiServerUrl, createdAt: now, updatedAt: now,
  };
  await c.oauth.createIssuer(rec);
  return rec;
}

/** A trusted issuer by id. @throws AppError `invalid_argument` `trusted issuer ID required`; `not_found` `trusted issuer not found` */
export async function getTrustedIssuer(c: AuthnContext, id: Opt<string>): Promise<TrustedIssuerRecord> {
  const v = optText('id', id, 64)?.trim();
  if (!v) throw bad('trusted issuer ID required');
  const t = await c.oauth.findIssuer(v);
  if (!t) throw new AppError('not_found', 'trusted issuer not found');
  return t;
}

/** `update_trusted_issuer`: only the supplied fields change. @returns the record and the changed field names */
export async function updateTrustedIssuer(c: AuthnContext, id: Opt<string>, i: IssuerInput): Promise<{ issuer: TrustedIssuerRecord; changed: string[] }> {
  const old = await getTrustedIssuer(c, id);
  const next = { ...old };
  const changed: string[] = [];
  if (i.name !== undefined && i.name !== null) { next.name = required('name', i.name, 256); changed.push('name'); }
  if (i.jwksUrl !== undefined && i.jwksUrl !== null) {
    const u = optText('jwks_url', i.jwksUrl, MAX_URL_CHARS)!.trim();
    next.jwksUrl = u ? httpUrl('jwks_url', u) : null;
    if (next.keySourceType === 'static_jwks_url' && !next.jwksUrl) throw bad('jwks_url is required when key_source_type is static_jwks_url');
    changed.push('jwks_url');
  }
  if (i.expectedAud !== undefined && i.expectedAud !== null) {
    const aud = optText('expected_aud', i.expectedAud, 512)!.trim();
    if (!aud) throw bad('expected_aud cannot be empty');
    next.expectedAud = aud;
    changed.push('expected_aud');
  }
  if (i.allowedSubjects !== undefined && i.allowedSubjects !== null) { next.allowedSubjects = optText('allowed_subjects', i.allowedSubjects, 16384)!.trim() || null; changed.push('allowed_subjects'); }
  if (typeof i.isActive === 'boolean') { next.isActive = i.isActive; changed.push('is_active'); }
  if (i.spiffeRefreshHintSeconds !== undefined && i.spiffeRefreshHintSeconds !== null) { next.spiffeRefreshHintSeconds = hintOf(i.spiffeRefreshHintSeconds); changed.push('spiffe_refresh_hint_seconds'); }
  if (typeof i.enableTokenReview === 'boolean') { next.enableTokenReview = i.enableTokenReview; changed.push('enable_token_review'); }
  if (i.kubernetesApiServerUrl !== undefined && i.kubernetesApiServerUrl !== null) {
    next.kubernetesApiServerUrl = optText('kubernetes_api_server_url', i.kubernetesApiServerUrl, MAX_URL_CHARS)!.trim() || null;
    changed.push('kubernetes_api_server_url');
  }
  checkTokenReview(next.enableTokenReview, next.kubernetesApiServerUrl);
  next.updatedAt = c.now();
  await c.oauth.updateIssuer(next);
  return { issuer: next, changed };
}

/** `delete_trusted_issuer`. */
export async function deleteTrustedIssuer(c: AuthnContext, id: Opt<string>): Promise<TrustedIssuerRecord> {
  const t = await getTrustedIssuer(c, id);
  await c.oauth.deleteIssuer(t.id);
  return t;
}

/** `trusted_issuers` (optional `service_account_id` filter), created_at desc then id. */
export async function listTrustedIssuers(c: AuthnContext, serviceAccountId: Opt<string>, pagination: Opt<{ page?: Opt<number>; limit?: Opt<number> }>): Promise<{ page: Window; result: Page<TrustedIssuerRecord> }> {
  const page = pageWindow(pagination);
  const sa = optText('service_account_id', serviceAccountId, 64)?.trim() || null;
  return { page, result: await c.oauth.listIssuers(sa, { offset: page.offset, limit: page.limit }) };
}
