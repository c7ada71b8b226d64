/**
 * @module @gatehouse/authn/domain/client-metadata-document
 * OAuth Client ID Metadata Documents (draft-ietf-oauth-client-id-metadata-document; issue 34 §2),
 * behind `--enable-client-id-metadata-documents`: a client that was never registered here names
 * itself by an https URL as its `client_id`, and that URL serves its metadata as JSON. The server
 * fetches it through the outbound guard of webhooks (no private, loopback or link-local address
 * unless `--allow-private-webhook-targets`; no redirect followed; the checked address pinned), with a
 * short timeout and a size cap, and keeps it for the document's `Cache-Control: max-age` within
 * bounds. Such a client is public (`none` authentication, so PKCE S256 at `/authorize`) unless its
 * document publishes a `jwks` for `private_key_jwt`; it is never first-party, and its redirect URIs
 * are the document's. Nothing of it is stored in the database.
 */
import { OutboundError, guardedGet, type OutboundGetResponse } from '@gatehouse/delivery';
import type { ClientRecord } from '../storage/ports.ts';
import { OIDC_SCOPES } from './clients.ts';
import type { AuthnContext } from './deps.ts';
import { redirectUriProblem } from './registration.ts';

/** The draft's §4 recommends a limit of 5 kilobytes for a document. */
export const MAX_DOCUMENT_BYTES = 5 * 1024;
/** One fetch waits at most this long (connection, headers and body). */
export const DOCUMENT_TIMEOUT_MS = 5000;
/** The cache keeps a document this long without `max-age` … */
export const DEFAULT_CACHE_SECONDS = 300;
/** … and at least / at most this long with one (issue 34 §2: "cached, honouring max-age within bounds"). */
export const MIN_CACHE_SECONDS = 60;
export const MAX_CACHE_SECONDS = 86_400;
/** A refused or unreachable document is not fetched again for this long, so a flood of requests naming it costs one fetch. */
export const FAILURE_CACHE_SECONDS = 10;
/** client ids are stored in columns of 255 characters (sessions, codes, consent grants). */
export const MAX_CLIENT_ID_URL_CHARS = 255;
const MAX_REDIRECT_URIS = 10;
const CACHE_ENTRIES = 1000;

/** A public JWK Set (RFC 7517 §5) as a document declares it. */
export interface DocumentKeys { keys: Record<string, unknown>[] }

/**
 * A document's client (with its `jwks` when it authenticates by `private_key_jwt`), or why there is
 * none (shown on `/authorize`'s error page).
 */
export type DocumentClient = { ok: true; client: ClientRecord; jwks?: DocumentKeys } | { ok: false; problem: string };

/** Members of a private or symmetric JWK: a document's keys must have none (they are published). */
const PRIVATE_JWK_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k'];
const MAX_KEYS = 10;

/** Is this `client_id` a URL (so, with the flag on, a metadata document's), rather than a registered id? */
export const isClientIdUrl = (id: string): boolean => /^[a-z][a-z0-9+.-]*:\/\//i.test(id);

/** Does this `client_id` name a metadata document here: `--enable-client-id-metadata-documents` and a URL? */
export const isDocumentClientId = (c: AuthnContext, id: string): boolean => c.options.enableClientIdMetadataDocuments === true && isClientIdUrl(id);

/**
 * The URL rules of the draft's §3 for a `client_id`: https, a host, a path other than `/`, no
 * `.`/`..` segments, no fragment, no user info; at most {@link MAX_CLIENT_ID_URL_CHARS} characters.
 * @returns null when acceptable, else the reason
 */
export function clientIdUrlProblem(id: string): string | null {
  if (id.length > MAX_CLIENT_ID_URL_CHARS) return `a client_id URL may have at most ${MAX_CLIENT_ID_URL_CHARS} characters`;
  let u: URL;
  try {
    u = new URL(id);
  } catch {
    return 'the client_id is not a valid URL';
  }
  if (u.protocol !== 'https:') return 'a client_id URL must use https';
  if (u.hostname === '') return 'a client_id URL must have a host';
  if (u.username !== '' || u.password !== '') return 'a client_id URL must not carry user information';
  if (u.hash !== '' || id.includes('#')) return 'a client_id URL must not have a fragment';
  const path = id.slice(id.indexOf('//') + 2).replace(/^[^/?]*/, '').replace(/\?.*$/, '');
  if (path === '' || path === '/') return 'a client_id URL must have a path';
  if (path.split('/').some((s) => s === '.' || s === '..' || /^%2e(%2e)?$/i.test(s) || /^\.%2e$|^%2e\.$/i.test(s))) {
    return 'a client_id URL must not have . or .. path segments';
  }
  return null;
}

const strings = (v: unknown): string[] | null => (Array.isArray(v) && v.every((x) => typeof x === 'string') ? v as string[] : null);

/**
 * The keys of a `private_key_jwt` document: an inline `jwks` of 1 to {@link MAX_KEYS} public keys
 * (a `jwks_uri` would be a second fetch: not served). @returns the set, or the problem
 */
function documentKeys(d: Record<string, unknown>): DocumentKeys | string {
  if (d.jwks_uri !== undefined) return 'jwks_uri is not served for metadata-document clients: publish the keys as jwks';
  const keys = (d.jwks as { keys?: unknown } | undefined)?.keys;
  if (!Array.isArray(keys) || keys.length === 0 || keys.length > MAX_KEYS) return `private_key_jwt needs jwks: {"keys": [...]} with 1 to ${MAX_KEYS} keys`;
  for (const k of keys as unknown[]) {
    if (!k || typeof k !== 'object' || Array.isArray(k) || typeof (k as { kty?: unknown }).kty !== 'string') return 'jwks must hold JWK objects';
    if (PRIVATE_JWK_MEMBERS.some((m) => m in (k as object))) return 'jwks must hold public keys only';
  }
  return { keys: keys as Record<string, unknown>[] };
}

/**
 * Checks a fetched document against its URL (draft §4.1): a JSON object whose `client_id` is exactly
 * `url`, without `client_secret`; `token_endpoint_auth_method` absent or `none` (a public client), or
 * `private_key_jwt` with an inline `jwks` of public keys (a confidential client, RFC 7523);
 * `redirect_uris` a non-empty list of https, loopback http or private-use-scheme URIs (as for RFC 7591
 * registration); `grant_types` among `authorization_code` (required) and `refresh_token`;
 * `response_types` only `code`; `scope` among the OIDC scopes (default: all of them).
 * @param now seconds, the record's `createdAt`
 * @returns the client it describes, or the first problem found
 */
export function clientFromDocument(url: string, text: string, now: number): DocumentClient {
  const no = (problem: string): DocumentClient => ({ ok: false, problem });
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    return no('the client metadata document is not JSON');
  }
  if (doc === null || typeof doc !== 'object' || Array.isArray(doc)) return no('the client metadata document is not a JSON object');
  const d = doc as Record<string, unknown>;
  if (d.client_id !== url) return no('the client metadata document\'s client_id does not equal its URL');
  if (d.client_secret !== undefined || d.client_secret_expires_at !== undefined) return no('a client metadata document must not hold a client_secret');
  const method = d.token_endpoint_auth_method ?? 'none';
  if (method !== 'none' && method !== 'private_key_jwt') {
    return no(`token_endpoint_auth_method "${String(method)}" is not served for metadata-document clients: "none" (a public client with PKCE) or "private_key_jwt" with jwks`);
  }
  const jwks = method === 'private_key_jwt' ? documentKeys(d) : undefined;
  if (typeof jwks === 'string') return no(jwks);
  const redirectUris = strings(d.redirect_uris);
  if (!redirectUris || redirectUris.length === 0) return no('the client metadata document needs redirect_uris');
  if (redirectUris.length > MAX_REDIRECT_URIS) return no(`at most ${MAX_REDIRECT_URIS} redirect_uris`);
  for (const u of redirectUris) {
    const problem = redirectUriProblem(u);
    if (problem) return no(`redirect_uris: ${problem}`);
  }
  const grantTypes = d.grant_types === undefined ? ['authorization_code'] : strings(d.grant_types);
  if (!grantTypes || !grantTypes.includes('authorization_code') || grantTypes.some((g) => g !== 'authorization_code' && g !== 'refresh_token')) {
    return no('grant_types must include authorization_code and may add refresh_token');
  }
  const responseTypes = d.response_types === undefined ? ['code'] : strings(d.response_types);
  if (!responseTypes || responseTypes.some((t) => t !== 'code')) return no('response_types may only be ["code"]');
  if (d.scope !== undefined && typeof d.scope !== 'string') return no('scope must be a space-separated string');
  const oidc: readonly string[] = OIDC_SCOPES;
  const scopes = d.scope === undefined ? [...oidc] : [...new Set((d.scope as string).split(' ').filter(Boolean))];
  if (scopes.length === 0 || scopes.some((s) => !oidc.includes(s))) return no(`scope must be among ${oidc.join(' ')}`);
  const name = d.client_name;
  if (name !== undefined && (typeof name !== 'string' || name.trim() === '' || name.length > 256)) return no('client_name must be a non-empty string of at most 256 characters');
  const requirePar = d.require_pushed_authorization_requests ?? false;
  if (typeof requirePar !== 'boolean') return no('require_pushed_authorization_requests must be a boolean');
  return {
    ok: true,
    client: {
      id: url, name: typeof name === 'string' ? name.trim() : new URL(url).host, description: 'OAuth Client ID Metadata Document',
      allowedScopes: scopes, isActive: true, secretHash: null, redirectUris: [...new Set(redirectUris)], grantTypes: [...new Set(grantTypes)],
      isPublic: jwks === undefined, postLogoutRedirectUris: [], isFirstParty: false, registrationTokenHash: null, registeredIp: null, createdAt: now, updatedAt: now,
      backchannelLogoutUri: null, backchannelLogoutSessionRequired: false, frontchannelLogoutUri: null, frontchannelLogoutSessionRequired: false,
      requirePushedAuthorizationRequests: requirePar,
    },
    ...(jwks !== undefined ? { jwks } : {}),
  };
}

/**
 * How long a fetched document is kept: its `Cache-Control: max-age` clamped to
 * [{@link MIN_CACHE_SECONDS}, {@link MAX_CACHE_SECONDS}], {@link DEFAULT_CACHE_SECONDS} without one,
 * 0 for `no-store` / `no-cache` (fetched again at the next request).
 */
export function cacheSecondsOf(cacheControl: string | undefined): number {
  const directives = (cacheControl ?? '').toLowerCase().split(',').map((s) => s.trim());
  if (directives.includes('no-store') || directives.includes('no-cache')) return 0;
  const maxAge = directives.map((s) => /^max-age\s*=\s*"?(\d+)"?$/.exec(s)).find((m) => m !== null);
  if (!maxAge) return DEFAULT_CACHE_SECONDS;
  return Math.min(MAX_CACHE_SECONDS, Math.max(MIN_CACHE_SECONDS, Number(maxAge[1])));
}

/**
 * The client a fetched answer describes (pure: the HTTP half of {@link resolveDocumentClient}):
 * status 200, a JSON content type (when one is given), at most {@link MAX_DOCUMENT_BYTES}, then
 * {@link clientFromDocument}.
 */
export function clientFromResponse(url: string, res: OutboundGetResponse, now: number): DocumentClient {
  if (res.status !== 200) return { ok: false, problem: `the client metadata document answered HTTP ${res.status}` };
  if (res.truncated) return { ok: false, problem: `the client metadata document is larger than ${MAX_DOCUMENT_BYTES} bytes` };
  const type = (res.headers['content-type'] ?? '').toLowerCase();
  if (type !== '' && !/^application\/([a-z0-9.+-]*\+)?json\s*(;|$)/.test(type)) return { ok: false, problem: 'the client metadata document is not served as application/json' };
  return clientFromDocument(url, res.body, now);
}

interface Cached { result: DocumentClient; until: number }
const caches = new WeakMap<AuthnContext['options'], Map<string, Cached>>();

function cacheOf(c: AuthnContext): Map<string, Cached> {
  let cache = caches.get(c.options);
  if (!cache) caches.set(c.options, (cache = new Map()));
  return cache;
}

/**
 * The client a `client_id` URL names (draft §4): from the cache, else fetched under the outbound guard
 * (GET, `Accept: application/json`, {@link DOCUMENT_TIMEOUT_MS}, {@link MAX_DOCUMENT_BYTES}) and kept
 * for {@link cacheSecondsOf} its `Cache-Control` (a failure for {@link FAILURE_CACHE_SECONDS}).
 * Never throws: an unusable URL, a refused address, a transport error or a bad document is a problem.
 */
export async function resolveDocumentClient(c: AuthnContext, url: string): Promise<DocumentClient> {
  const urlProblem = clientIdUrlProblem(url);
  if (urlProblem) return { ok: false, problem: urlProblem };
  const now = c.now();
  const cache = cacheOf(c);
  const hit = cache.get(url);
  if (hit && hit.until > now) return hit.result;
  let result: DocumentClient;
  let keep = FAILURE_CACHE_SECONDS;
  try {
    const res = await guardedGet({
      url, headers: { accept: 'application/json' }, allowPrivate: c.options.allowPrivateWebhookTargets === true,
      timeoutMs: DOCUMENT_TIMEOUT_MS, maxBytes: MAX_DOCUMENT_BYTES,
    });
    result = clientFromResponse(url, res, now);
    if (result.ok) keep = cacheSecondsOf(res.headers['cache-control']);
  } catch (err) {
    const ssrf = err instanceof OutboundError && err.kind === 'ssrf';
    result = { ok: false, problem: ssrf ? 'the client_id URL points to a private or internal network address' : 'the client metadata document could not be fetched' };
    if (!ssrf) c.logger.warn({ err, url }, 'client metadata document not fetched');
  }
  cache.delete(url);
  if (keep > 0) {
    if (cache.size >= CACHE_ENTRIES) cache.delete(cache.keys().next().value!);
    cache.set(url, { result, until: now + keep });
  }
  return result;
}
