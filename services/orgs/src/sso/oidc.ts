/**
 * @module orgs/sso/oidc
 * Gatehouse as an OpenID Connect relying party of an organization's IdP (behaviour.md §6.3; OpenID
 * Connect Core 1.0 §3.1 authorization code flow, RFC 7636 PKCE), on panva's `openid-client` v6:
 * discovery of the https issuer (cached 10 min per connection version), an authorization request with
 * `state`, `nonce` and an S256 PKCE challenge kept in a pending login (10 min, single use), and the
 * callback's code exchange, where openid-client validates the state, the ID token (signature against
 * the IdP's JWKS, `iss`, `aud`, `exp`, `nonce`) before the claims are used; when the ID token carries no
 * email, the UserInfo response (its `sub` checked against the ID token's) completes the claims.
 */
import { randomBytes } from 'node:crypto';
import * as client from 'openid-client';
import { AppError } from '@gatehouse/errors';
import type { OrganizationRecord } from '../storage/ports.ts';
import { effectiveOidc, openSecret } from './connections.ts';
import type { SsoDeps } from './deps.ts';
import { emailVerifiedFor, type FederatedIdentity } from './identity.ts';
import { PENDING_TTL_S, SsoRejected, type LoginParams } from './login.ts';
import type { OidcConnectionRecord } from './storage/ports.ts';

const DISCOVERY_TTL_MS = 600_000;
const configs = new Map<string, { until: number; config: Promise<client.Configuration> }>();

export { SsoRejected };

/**
 * The IdP's configuration through discovery (OpenID Connect Discovery 1.0), client authentication
 * `client_secret_basic` with the decrypted secret.
 * @throws AppError `unavailable` `the identity provider could not be reached` when discovery fails
 */
async function configOf(d: SsoDeps, c: OidcConnectionRecord): Promise<client.Configuration> {
  const key = `${c.id}:${c.updatedAt}`;
  const hit = configs.get(key);
  if (hit && hit.until > Date.now()) return hit.config;
  const config = client.discovery(new URL(c.issuerUrl), c.clientId, undefined, client.ClientSecretBasic(openSecret(d, c)), {
    timeout: 10, ...(d.idpFetch ? { [client.customFetch]: d.idpFetch as client.CustomFetch } : {}),
  });
  configs.set(key, { until: Date.now() + DISCOVERY_TTL_MS, config });
  try {
    return await config;
  } catch (err) {
    configs.delete(key);
    throw new AppError('unavailable', 'the identity provider could not be reached', { cause: err });
  }
}

/** The authorization request to the org's IdP; stores the pending login under its `state`. */
export async function oidcLoginUrl(d: SsoDeps, org: OrganizationRecord, c: OidcConnectionRecord, params: LoginParams): Promise<string> {
  const config = await configOf(d, c);
  const eff = effectiveOidc(d, c, org.name);
  const verifier = client.randomPKCECodeVerifier();
  const nonce = client.randomNonce();
  const state = randomBytes(24).toString('base64url');
  await d.store.pending.put({ id: state, orgId: org.id, kind: 'oidc', data: JSON.stringify({ verifier, nonce, params }), expiresAt: d.now() + PENDING_TTL_S });
  return client.buildAuthorizationUrl(config, {
    redirect_uri: eff.redirectUri, scope: eff.scopes, state, nonce, code_challenge: await client.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256',
  }).toString();
}

/**
 * The callback: takes the pending login named by `state`, exchanges the code and validates the ID token.
 * @param query the callback's query parameters
 * @throws SsoRejected for an IdP error, an unknown/expired/used state, or a token or ID token refused
 */
export async function oidcCallback(
  d: SsoDeps, org: OrganizationRecord, c: OidcConnectionRecord, query: Record<string, string>,
): Promise<{ identity: FederatedIdentity; params: LoginParams }> {
  const state = query['state'] ?? '';
  const pending = state !== '' && state.length <= 64 ? await d.store.pending.take(state, d.now()) : null;
  if (!pending || pending.orgId !== org.id || pending.kind !== 'oidc') throw new SsoRejected('unknown or expired login');
  const { verifier, nonce, params } = JSON.parse(pending.data) as { verifier: string; nonce: string; params: LoginParams };
  if (query['error']) throw new SsoRejected(`the identity provider answered ${query['error'].slice(0, 64)}`);
  const config = await configOf(d, c);
  const url = new URL(effectiveOidc(d, c, org.name).redirectUri);
  for (const [k, v] of Object.entries(query)) url.searchParams.set(k, v);
  let claims: Record<string, unknown> & { iss: string; sub: string };
  try {
    const tokens = await client.authorizationCodeGrant(config, url, { pkceCodeVerifier: verifier, expectedState: state, expectedNonce: nonce, idTokenExpected: true });
    const idToken = tokens.claims();
    if (!idToken) throw new SsoRejected('no ID token');
    claims = { ...idToken };
    // Core §5.4: with the code flow, the scope's claims may be served by the UserInfo endpoint only
    if (claims['email'] === undefined && config.serverMetadata().userinfo_endpoint) {
      const info = await client.fetchUserInfo(config, tokens.access_token, idToken.sub);
      claims = { ...info, ...idToken };
    }
  } catch (err) {
    if (err instanceof SsoRejected) throw err;
    throw new SsoRejected('the code exchange or ID token was refused');
  }
  const str = (v: unknown): string | null => (typeof v === 'string' && v.trim() !== '' ? v.trim() : null);
  const email = str(claims['email'])?.toLowerCase() ?? null;
  return {
    identity: {
      issuer: claims.iss, subject: claims.sub, email, emailVerified: await emailVerifiedFor(d, org.id, email, claims['email_verified'] === true),
      givenName: str(claims['given_name']), familyName: str(claims['family_name']),
    },
    params,
  };
}
