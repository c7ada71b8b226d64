/**
 * @module @gatehouse/authn/domain/oauth-client-auth
 * OAuth errors (RFC 6749 §5.2) and client authentication at the token, revocation and introspection
 * endpoints: `client_secret_basic`, `client_secret_post` (RFC 6749 §2.3.1), `private_key_jwt`
 * against a trusted issuer (RFC 7523 §2.2, §3; behaviour.md §5.8), and public clients (`none`).
 */
import { createLocalJWKSet, createRemoteJWKSet, decodeJwt, jwtVerify, type JSONWebKeySet, type JWTPayload, type JWTVerifyGetKey } from 'jose';
import type { ClientRecord, TrustedIssuerRecord } from '../storage/ports.ts';
import { isDocumentClientId, resolveDocumentClient } from './client-metadata-document.ts';
import { findClient, verifyClientSecret } from './clients.ts';
import type { AuthnContext } from './deps.ts';

/** An RFC 6749 §5.2 error: `{error, error_description}` with its HTTP status. */
export class OAuthError extends Error {
  readonly error: string;
  readonly description: string;
  /** HTTP status: 400, or 401 for `invalid_client` */
  readonly status: number;
  constructor(error: string, description: string, status = 400) {
    super(description);
    this.error = error;
    this.description = description;
    this.status = status;
  }
}

export const invalidClient = (d = 'client authentication failed'): OAuthError => new OAuthError('invalid_client', d, 401);
export const invalidGrant = (d: string): OAuthError => new OAuthError('invalid_grant', d);
export const invalidRequest = (d: string): OAuthError => new OAuthError('invalid_request', d);

/** Seconds an assertion is still accepted past its `exp` (clock skew between the client and us). */
export const ASSERTION_CLOCK_TOLERANCE_SECONDS = 5;

export const JWT_BEARER_ASSERTION = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';

/** The credentials a request carried (RFC 6749 §2.3; RFC 7521 §4.2). */
export interface ClientCredentials {
  /** from `Authorization: Basic` (RFC 6749 §2.3.1: form-urlencoded id and secret) */
  basic: { id: string; secret: string } | null;
  params: Record<string, string>;
}

/** How the client authenticated: `client_secret_basic`, `client_secret_post`, `private_key_jwt`, `none`. */
export interface AuthenticatedClient {
  client: ClientRecord;
  method: 'client_secret_basic' | 'client_secret_post' | 'private_key_jwt' | 'none';
  /** private_key_jwt: the assertion's subject (per the issuer's `subject_claim`) */
  subject?: string;
}

/**
 * Parses `Authorization: Basic` (RFC 7617; RFC 6749 §2.3.1 form-urlencodes both parts).
 * @returns null when the header is absent or not Basic
 * @throws OAuthError `invalid_client` for a malformed Basic header
 */
export function parseBasic(header: string | undefined): { id: string; secret: string } | null {
  if (!header) return null;
  const [scheme, value] = header.trim().split(/\s+/);
  if (scheme?.toLowerCase() !== 'basic') return null;
  const decoded = Buffer.from(value ?? '', 'base64').toString('utf8');
  const i = decoded.indexOf(':');
  if (i < 0) throw invalidClient('malformed Basic credentials');
  try {
    return { id: decodeURIComponent(decoded.slice(0, i).replace(/\+/g, ' ')), secret: decodeURIComponent(decoded.slice(i + 1).replace(/\+/g, ' ')) };
  } catch {
    throw invalidClient('malformed Basic credentials');
  }
}

/**
 * Authenticates the client of a token-endpoint-style request. Exactly one method may be used (RFC
 * 6749 §2.3). Without credentials, a public client (or the server's own, which browsers use) is
 * identified by `client_id` alone when `allowPublic`.
 * @throws OAuthError `invalid_client` (401) for an unknown, inactive or unauthenticated client;
 *   `invalid_request` when two methods are mixed
 */
export async function authenticateClient(c: AuthnContext, cred: ClientCredentials, allowPublic: boolean): Promise<AuthenticatedClient> {
  const p = cred.params;
  const postSecret = p.client_secret ?? '';
  const assertion = p.client_assertion ?? '';
  const used = [cred.basic !== null, postSecret !== '', assertion !== ''].filter(Boolean).length;
  if (used > 1) throw invalidRequest('more than one client authentication method');
  if (assertion !== '') {
    if (p.client_assertion_type !== JWT_BEARER_ASSERTION) throw invalidClient('unsupported client_assertion_type');
    return verifyClientAssertion(c, assertion, p.client_id ?? '');
  }
  const id = cred.basic?.id ?? p.client_id ?? '';
  if (cred.basic?.id && p.client_id && p.client_id !== cred.basic.id) throw invalidRequest('client_id does not match the Authorization header');
  const client = await findClient(c, id);
  if (!client || !client.isActive) throw invalidClient();
  const secret = cred.basic?.secret ?? postSecret;
  if (secret === '') {
    if (allowPublic && (client.isPublic || client.id === c.options.clientId)) return { client, method: 'none' };
    throw invalidClient();
  }
  if (!(await verifyClientSecret(c, client, secret))) throw invalidClient();
  return { client, method: cred.basic ? 'client_secret_basic' : 'client_secret_post' };
}

// ---- private_key_jwt (RFC 7523) ----

const jwksCache = new Map<string, JWTVerifyGetKey>();
const discoveryCache = new Map<string, { jwksUri: string; at: number }>();
const DISCOVERY_TTL_MS = 300_000;

/** The JWKS of a trusted issuer: its `jwks_url`, or `jwks_uri` from its OIDC discovery document. */
async function keysOf(t: TrustedIssuerRecord): Promise<JWTVerifyGetKey> {
  let url = t.jwksUrl;
  if (t.keySourceType === 'oidc_discovery' || !url) {
    const cached = discoveryCache.get(t.issuerUrl);
    if (cached && Date.now() - cached.at < DISCOVERY_TTL_MS) url = cached.jwksUri;
    else {
      const res = await fetch(`${t.issuerUrl.replace(/\/+$/, '')}/.well-known/openid-configuration`, { signal: AbortSignal.timeout(5000), redirect: 'error' });
      if (!res.ok) throw invalidClient('the trusted issuer\'s discovery document could not be read');
      const doc = (await res.json()) as { jwks_uri?: unknown };
      if (typeof doc.jwks_uri !== 'string') throw invalidClient('the trusted issuer publishes no jwks_uri');
      url = doc.jwks_uri;
      discoveryCache.set(t.issuerUrl, { jwksUri: url, at: Date.now() });
    }
  }
  let set = jwksCache.get(url);
  if (!set) {
    set = createRemoteJWKSet(new URL(url), { timeoutDuration: 5000, cooldownDuration: 30_000, cacheMaxAge: 600_000 });
    jwksCache.set(url, set);
  }
  return set;
}

/**
 * Verifies a client assertion (RFC 7523 §3) against the trusted issuer named by its `iss`: signature
 * by the issuer's JWKS, `aud` = the issuer's `expected_aud`, `exp` present and in the future, `jti`
 * present and never seen before (kept until `exp`), the subject (`subject_claim`) listed in
 * `allowed_subjects` (empty: none allowed). The issuer's service account is the client. An `iss` that
 * names an OAuth Client ID Metadata Document (issue 34 §2) is checked against that document's `jwks`.
 * @throws OAuthError `invalid_client` for any failure
 */
export async function verifyClientAssertion(c: AuthnContext, assertion: string, clientIdParam: string): Promise<AuthenticatedClient> {
  let iss: string;
  try {
    const payload = decodeJwt(assertion);
    iss = typeof payload.iss === 'string' ? payload.iss : '';
  } catch {
    throw invalidClient('malformed client assertion');
  }
  if (isDocumentClientId(c, iss)) return verifyDocumentAssertion(c, assertion, iss, clientIdParam);
  const issuer = iss ? await c.oauth.findIssuerByUrl(iss) : null;
  if (!issuer || !issuer.isActive) throw invalidClient('the assertion issuer is not trusted');
  const payload = await verifiedAssertion(c, assertion, await keysOf(issuer), { issuer: issuer.issuerUrl, audience: issuer.expectedAud });
  const subject = payload[issuer.subjectClaim];
  const allowed = (issuer.allowedSubjects ?? '').split(',').map((s) => s.trim()).filter((s) => s !== '');
  if (typeof subject !== 'string' || !allowed.includes(subject)) throw invalidClient('the assertion subject is not allowed');
  const client = await c.oauth.findClient(issuer.serviceAccountId);
  if (!client || !client.isActive) throw invalidClient();
  if (clientIdParam !== '' && clientIdParam !== client.id) throw invalidClient('client_id does not match the assertion issuer');
  await spendAssertion(c, issuer.issuerUrl, payload);
  return { client, method: 'private_key_jwt', subject };
}

/** The assertion's claims once its signature, `iss`, `aud`, `exp` and `jti` presence check out. @throws OAuthError `invalid_client` */
async function verifiedAssertion(c: AuthnContext, assertion: string, keys: JWTVerifyGetKey, o: { issuer: string; audience: string | string[]; subject?: string }): Promise<JWTPayload> {
  try {
    return (await jwtVerify(assertion, keys, {
      ...o, requiredClaims: ['exp', 'jti'], clockTolerance: ASSERTION_CLOCK_TOLERANCE_SECONDS, currentDate: new Date(c.now() * 1000),
    })).payload;
  } catch (err) {
    if (err instanceof OAuthError) throw err;
    throw invalidClient(`client assertion rejected: ${(err as Error).message}`);
  }
}

/**
 * RFC 7523 §3 item 7: a jti is accepted once, and remembered as long as the assertion is accepted
 * (exp plus the clock tolerance), so no replay slips in between its exp and the tolerance's end.
 * @throws OAuthError `invalid_client` `client assertion replayed`
 */
async function spendAssertion(c: AuthnContext, issuer: string, payload: JWTPayload): Promise<void> {
  const acceptedUntil = Number(payload.exp) + ASSERTION_CLOCK_TOLERANCE_SECONDS;
  if (!(await c.oauth.useJti(`${issuer}|${String(payload.jti)}`, acceptedUntil, c.now()))) throw invalidClient('client assertion replayed');
}

/**
 * `private_key_jwt` of a client named by an OAuth Client ID Metadata Document (issue 34 §2): RFC 7523
 * §3 with `iss` = `sub` = the client_id URL, signed by a key of the document's `jwks`, `aud` this
 * server's issuer identifier or its token or PAR endpoint, `jti` once.
 * @throws OAuthError `invalid_client`
 */
async function verifyDocumentAssertion(c: AuthnContext, assertion: string, url: string, clientIdParam: string): Promise<AuthenticatedClient> {
  const doc = await resolveDocumentClient(c, url);
  if (!doc.ok) throw invalidClient(doc.problem);
  if (!doc.jwks) throw invalidClient('the client metadata document declares no jwks for private_key_jwt');
  if (clientIdParam !== '' && clientIdParam !== url) throw invalidClient('client_id does not match the assertion issuer');
  const u = c.options.url;
  const payload = await verifiedAssertion(c, assertion, createLocalJWKSet(doc.jwks as JSONWebKeySet), {
    issuer: url, subject: url, audience: [u, `${u}/oauth/token`, `${u}/oauth/par`],
  });
  await spendAssertion(c, url, payload);
  return { client: doc.client, method: 'private_key_jwt', subject: url };
}
