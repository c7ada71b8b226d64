/**
 * @module @gatehouse/authn/domain/oauth-token
 * The token endpoint's grants (RFC 6749 §4.1.3, §4.4, §6; RFC 7636 §4.6; behaviour.md §2.2):
 * `authorization_code` (single use, bound to client, redirect URI and PKCE verifier; a replay revokes
 * what the code issued), `refresh_token` (rotation with reuse detection: a retired token revokes its
 * family, except the immediate predecessor within 10 s, which gets `invalid_grant` only), and
 * `client_credentials` (a `service_account:<client_id>` token bound to a session of the client, so
 * deactivation ends it at once).
 */
import { createHash, randomUUID } from 'node:crypto';
import type { SessionRecord } from '@gatehouse/auth';
import { randomToken, sha256Hex, timingSafeEqualString } from '@gatehouse/crypto';
import type { ClientRecord, UserRecord } from '../storage/ports.ts';
import type { AuthnContext } from './deps.ts';
import { DEVICE_CODE_GRANT, pollDeviceCode } from './device.ts';
import { openSession, type SessionGrant } from './issue.ts';
import { boundJkt, type CheckedProof } from './dpop.ts';
import { OAuthError, invalidGrant, invalidRequest, type AuthenticatedClient } from './oauth-client-auth.ts';
import { audienceOf } from './resource.ts';
import { TOKEN_EXCHANGE_GRANT, tokenExchangeGrant, type ExchangeResponse } from './token-exchange.ts';
import { AT_JWT_TYP, issueTokens, type IssuedTokens } from './tokens.ts';
import { isRevoked } from './user.ts';

/** behaviour.md §2.2: the immediate predecessor presented again within this many seconds is a double submit. */
export const DOUBLE_SUBMIT_SECONDS = 10;

/** The RFC 6749 §5.1 success body. */
export interface TokenResponse {
  access_token: string;
  /** RFC 9449 §5: `DPoP` for a DPoP-bound access token */
  token_type: 'Bearer' | 'DPoP';
  expires_in: number;
  scope: string;
  id_token?: string;
  refresh_token?: string;
}

/** What a grant did, for the audit log (behaviour.md §5.7 `token.*`). */
export interface GrantOutcome {
  response: TokenResponse | ExchangeResponse;
  action: 'token.issued' | 'token.refreshed' | 'token.client_credentials' | 'token.exchanged';
  /** the user, or null for a service account */
  userId: string | null;
  sessionId: string;
  /** token exchange (issue 34): the agents of the `act` chain, outermost first; the audit row's actor is the first */
  actors?: string[];
}

/** The grant stored with an authorization code (what the browser session had, and the request's nonce). */
export interface CodeGrant extends SessionGrant {
  nonce: string | null;
  /** RFC 9449 §10: the request's `dpop_jkt`; the code is redeemed only with a proof by that key */
  dpopJkt?: string;
  /** RFC 8707 §2.1: the request's `resource`; the code's access token is for it */
  resource?: string[];
}

const unauthorizedClient = (d: string): OAuthError => new OAuthError('unauthorized_client', d);

function respond(tokens: IssuedTokens, scope: string[], dpop: CheckedProof | null): TokenResponse {
  return {
    access_token: tokens.accessToken, token_type: dpop ? 'DPoP' : 'Bearer', expires_in: tokens.expiresIn, scope: scope.join(' '),
    ...(scope.includes('openid') ? { id_token: tokens.idToken } : {}),
    ...(tokens.refreshToken ? { refresh_token: tokens.refreshToken } : {}),
  };
}

function requireGrantType(client: ClientRecord, grant: string): void {
  if (!client.grantTypes.includes(grant)) throw unauthorizedClient(`the client may not use the ${grant} grant`);
}

/** RFC 7636 §4.6: BASE64URL(SHA256(verifier)) equals the challenge; the verifier has 43-128 unreserved characters. */
export function pkceMatches(verifier: string, challenge: string): boolean {
  if (!/^[A-Za-z0-9\-._~]{43,128}$/.test(verifier)) return false;
  return timingSafeEqualString(createHash('sha256').update(verifier).digest('base64url'), challenge);
}

async function liveUser(c: AuthnContext, userId: string): Promise<UserRecord> {
  const user = await c.users.findById(userId);
  if (!user || isRevoked(user)) throw invalidGrant('the user is no longer active');
  return user;
}

/**
 * `grant_type=authorization_code` (RFC 6749 §4.1.3). A second redemption is refused and deletes the
 * session the first one opened (RFC 6749 §4.1.2, RFC 9700 §4.2.4).
 * @throws OAuthError `invalid_grant`, `invalid_request`, `unauthorized_client`
 */
export async function authorizationCodeGrant(c: AuthnContext, auth: AuthenticatedClient, p: Record<string, string>, dpop: CheckedProof | null = null): Promise<GrantOutcome> {
  requireGrantType(auth.client, 'authorization_code');
  const code = p.code ?? '';
  if (code === '') throw invalidRequest('code is required');
  const hash = sha256Hex(code);
  const rec = await c.oauth.findCode(hash);
  if (!rec) throw invalidGrant('invalid authorization code');
  const now = c.now();
  if (!(await c.oauth.consumeCode(hash, now))) {
    const again = await c.oauth.findCode(hash);
    if (again?.issuedSessionId) await c.sessions.delete(again.issuedSessionId);
    throw invalidGrant('authorization code already used');
  }
  if (rec.expiresAt <= now) throw invalidGrant('authorization code expired');
  if (rec.clientId !== auth.client.id) throw invalidGrant('authorization code was issued to another client');
  if ((p.redirect_uri ?? '') !== rec.redirectUri) throw invalidGrant('redirect_uri does not match the authorization request');
  const verifier = p.code_verifier ?? '';
  if (rec.codeChallenge !== null) {
    if (verifier === '' || !pkceMatches(verifier, rec.codeChallenge)) throw invalidGrant('PKCE verification failed');
  } else if (verifier !== '') {
    throw invalidGrant('code_verifier given but the authorization request had no code_challenge');
  }
  const grant = JSON.parse(rec.grant) as CodeGrant;
  if (grant.dpopJkt !== undefined && dpop?.jkt !== grant.dpopJkt) throw invalidGrant('the authorization code is bound to another DPoP key (dpop_jkt)');
  const audience = audienceOf(p, grant.resource ?? []);
  const user = await liveUser(c, rec.userId);
  // RFC 9449 §5: a proof binds the access token, and a public client's refresh token, to its key
  const issued = await openSession(c, user, { ...grant, clientId: auth.client.id }, {
    nonce: grant.nonce, jwtAccessToken: true, audience, dpopJkt: dpop?.jkt ?? null, refreshJkt: auth.method === 'none' ? dpop?.jkt ?? null : null,
  });
  const sessionId = issued.sessionId!;
  await c.oauth.setCodeSession(hash, sessionId);
  return { response: respond(issued.tokens, grant.scope, dpop), action: 'token.issued', userId: user.id, sessionId };
}

/**
 * `grant_type=refresh_token` (RFC 6749 §6, behaviour.md §2.2): rotation with reuse detection. The
 * family is the session the refresh token is bound to (`family_id`). `scope` may narrow the grant.
 * @throws OAuthError `invalid_grant` (invalid, expired, retired, another client's), `invalid_scope`
 */
export async function refreshTokenGrant(c: AuthnContext, auth: AuthenticatedClient, p: Record<string, string>, dpop: CheckedProof | null = null): Promise<GrantOutcome> {
  requireGrantType(auth.client, 'refresh_token');
  const token = p.refresh_token ?? '';
  if (token === '') throw invalidRequest('refresh_token is required');
  let claims;
  try {
    claims = await c.jwt.verify(token, { nowSeconds: c.now() });
  } catch {
    throw invalidGrant('invalid refresh token');
  }
  if (claims.iss !== c.options.url || claims.token_type !== 'refresh_token' || typeof claims.nonce !== 'string' || typeof claims.jti !== 'string') {
    throw invalidGrant('invalid refresh token');
  }
  if ((claims.client_id ?? c.options.clientId) !== auth.client.id) throw invalidGrant('refresh token was issued to another client');
  // RFC 9449 §5: a DPoP-bound refresh token is redeemed only with a proof by the same key (nothing rotates otherwise)
  const bound = boundJkt(claims);
  if (bound !== null && dpop?.jkt !== bound) throw invalidGrant(dpop ? 'the refresh token is bound to another DPoP key' : 'the refresh token is DPoP-bound: a DPoP proof is required');
  // RFC 8707 §2.2: the refreshed access token is for the grant's resources, or the one asked among them
  const granted = Array.isArray(claims.resource) ? claims.resource.filter((r): r is string => typeof r === 'string') : [];
  const audience = audienceOf(p, granted);
  const session = await c.sessions.get(claims.nonce);
  if (!session || session.userId !== claims.sub) throw invalidGrant('refresh token revoked');
  const now = c.now();
  if (session.refreshTokenId !== claims.jti) {
    if (session.previousRefreshTokenId === claims.jti && session.refreshRotatedAt != null && now - session.refreshRotatedAt <= DOUBLE_SUBMIT_SECONDS) {
      throw invalidGrant('refresh token already rotated');
    }
    // a retired token came back: the family (its session and every token bound to it) is revoked
    await c.sessions.delete(session.id);
    throw invalidGrant('refresh token reuse detected; the token family is revoked');
  }
  const user = await liveUser(c, session.userId);
  let scope = session.scope;
  if (p.scope) {
    const asked = p.scope.split(' ').filter((s) => s !== '');
    if (asked.some((s) => !session.scope.includes(s))) throw new OAuthError('invalid_scope', 'scope exceeds the original grant');
    scope = asked;
  }
  const refreshJkt = bound ?? (auth.method === 'none' ? dpop?.jkt ?? null : null);
  // the refresh token keeps every resource of the grant, whichever one this access token is for; the
  // refreshed ID token carries no nonce (OIDC Core §12.2: it SHOULD NOT, even when the first one did)
  const tokens = await issueTokens(c, user, { ...session, scope }, { nonce: null, jwtAccessToken: true, dpopJkt: dpop?.jkt ?? null, refreshJkt, audience, refreshResource: granted });
  const next: SessionRecord = { ...session, refreshTokenId: tokens.refreshTokenId, previousRefreshTokenId: claims.jti, refreshRotatedAt: now };
  await c.sessions.update(next);
  return { response: respond(tokens, scope, dpop), action: 'token.refreshed', userId: user.id, sessionId: session.id };
}

/**
 * `grant_type=client_credentials` (RFC 6749 §4.4): a confidential client (secret or private_key_jwt)
 * gets an access token with `sub` `service_account:<client_id>`, bound to a session of the client
 * that lives as long as the token. `scope` must be within the client's `allowed_scopes` (default: all).
 * @throws OAuthError `unauthorized_client`, `invalid_scope`
 */
export async function clientCredentialsGrant(c: AuthnContext, auth: AuthenticatedClient, p: Record<string, string>, dpop: CheckedProof | null = null): Promise<GrantOutcome> {
  if (auth.method === 'none') throw new OAuthError('invalid_client', 'client authentication failed', 401);
  requireGrantType(auth.client, 'client_credentials');
  const asked = (p.scope ?? '').split(' ').filter((s) => s !== '');
  if (asked.some((s) => !auth.client.allowedScopes.includes(s))) throw new OAuthError('invalid_scope', 'scope exceeds the client\'s allowed_scopes');
  const scope = asked.length > 0 ? asked : [...auth.client.allowedScopes];
  const now = c.now();
  const o = c.options;
  const session: SessionRecord = {
    id: randomUUID(), userId: auth.client.id, handleHash: sha256Hex(randomToken(32)), loginMethod: 'client_credentials', roles: [], scope,
    authTime: now, expiresAt: now + o.accessTokenExpiresIn, refreshTokenId: null, createdAt: now, clientId: auth.client.id,
  };
  await c.sessions.create(session);
  const sub = `service_account:${auth.client.id}`;
  const accessToken = await c.jwt.sign({
    iss: o.url, aud: auth.client.id, sub, nonce: session.id, token_type: 'access_token', scope: scope.join(' '), roles: [], allowed_roles: [],
    login_method: 'client_credentials', client_id: auth.client.id, jti: randomUUID(),
    ...(dpop ? { cnf: { jkt: dpop.jkt } } : {}),
  }, { expiresInSeconds: o.accessTokenExpiresIn, nowSeconds: now, typ: AT_JWT_TYP });
  return {
    response: { access_token: accessToken, token_type: dpop ? 'DPoP' : 'Bearer', expires_in: Math.max(1, o.accessTokenExpiresIn), scope: scope.join(' ') },
    action: 'token.client_credentials', userId: null, sessionId: session.id,
  };
}

/**
 * `grant_type=urn:ietf:params:oauth:grant-type:device_code` (RFC 8628 §3.4–3.5; issue 34 §5): a poll
 * ({@link pollDeviceCode}); once the user approved, the tokens of the grant their sign-in had, issued
 * to the client in a session of its own, exactly once; with a DPoP proof (RFC 9449 §5) they are bound to its key.
 * @throws OAuthError `authorization_pending`, `slow_down`, `access_denied`, `expired_token`,
 *   `invalid_grant` (also when the approving user is no longer active), `unauthorized_client`, `invalid_request`
 */
export async function deviceCodeGrant(c: AuthnContext, auth: AuthenticatedClient, p: Record<string, string>, dpop: CheckedProof | null = null): Promise<GrantOutcome> {
  const { record, grant } = await pollDeviceCode(c, auth, p);
  const user = await liveUser(c, record.userId ?? '');
  const issued = await openSession(c, user, { ...grant, clientId: auth.client.id }, {
    jwtAccessToken: true, dpopJkt: dpop?.jkt ?? null, refreshJkt: auth.method === 'none' ? dpop?.jkt ?? null : null,
  });
  return { response: respond(issued.tokens, grant.scope, dpop), action: 'token.issued', userId: user.id, sessionId: issued.sessionId! };
}

/**
 * Dispatches on `grant_type`. `dpop`: the request's checked DPoP proof (RFC 9449 §5), binding the
 * tokens every grant issues; a DPoP-bound refresh, subject or actor token needs a proof by its key.
 * @throws OAuthError `unsupported_grant_type`, `invalid_request`, the grants' errors
 */
export async function tokenGrant(c: AuthnContext, auth: AuthenticatedClient, p: Record<string, string>, dpop: CheckedProof | null = null): Promise<GrantOutcome> {
  switch (p.grant_type ?? '') {
    case 'authorization_code':
      return authorizationCodeGrant(c, auth, p, dpop);
    case 'refresh_token':
      return refreshTokenGrant(c, auth, p, dpop);
    case 'client_credentials':
      return clientCredentialsGrant(c, auth, p, dpop);
    case DEVICE_CODE_GRANT:
      return deviceCodeGrant(c, auth, p, dpop);
    case TOKEN_EXCHANGE_GRANT: {
      const out = await tokenExchangeGrant(c, auth, p, dpop);
      return { response: out.response, action: 'token.exchanged', userId: out.userId, sessionId: out.sessionId, actors: out.actors };
    }
    case '':
      throw invalidRequest('grant_type is required');
    default:
      throw new OAuthError('unsupported_grant_type', `unsupported grant_type ${p.grant_type}`);
  }
}
