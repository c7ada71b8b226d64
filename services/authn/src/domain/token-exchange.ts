/**
 * @module @gatehouse/authn/domain/token-exchange
 * Delegation for agents (issue 34 §3): OAuth 2.0 Token Exchange (RFC 8693) at the token endpoint. An
 * authenticated confidential client (the agent, a service account allowed the token-exchange grant)
 * presents a user's access token as `subject_token` and, optionally, its own client_credentials token
 * as `actor_token`, and receives an access token that is the user's with:
 *  - `act` naming the agent (`service_account:<client_id>`), nested when the subject token was itself
 *    delegated (RFC 8693 §4.1; a chain deeper than {@link MAX_ACT_DEPTH} is refused);
 *  - scope = subject's ∩ the agent's `allowed_scopes` ∩ requested (attenuation, never widening);
 *  - `aud` = the RFC 8707 `resource` (or RFC 8693 `audience`), else the agent;
 *  - `nonce` = the subject's session: the delegated token works only while the user's session lives,
 *    so a logout, an admin's session wipe or a revoked consent ends it (and it never outlives the subject
 *    token). A subject whose session has ended gets `invalid_grant`.
 */
import { randomUUID } from 'node:crypto';
import type { JWTPayload } from 'jose';
import { scopeClaim } from '@gatehouse/auth';
import type { AuthnContext } from './deps.ts';
import { boundJkt, type CheckedProof } from './dpop.ts';
import { liveToken } from './oauth-endpoints.ts';
import { OAuthError, invalidGrant, invalidRequest, type AuthenticatedClient } from './oauth-client-auth.ts';
import { resourceOf } from './resource.ts';
import { AT_JWT_TYP } from './tokens.ts';

/** RFC 8693 §2.1 `grant_type`. */
export const TOKEN_EXCHANGE_GRANT = 'urn:ietf:params:oauth:grant-type:token-exchange';
/** RFC 8693 §3: the only token type exchanged here, in and out. */
export const ACCESS_TOKEN_TYPE = 'urn:ietf:params:oauth:token-type:access_token';
/** Agents acting for agents: at most this many `act` levels. */
export const MAX_ACT_DEPTH = 4;

/** The RFC 8693 §2.2.1 success body. */
export interface ExchangeResponse {
  access_token: string;
  issued_token_type: typeof ACCESS_TOKEN_TYPE;
  /** RFC 9449 §5: `DPoP` when the exchange came with a proof */
  token_type: 'Bearer' | 'DPoP';
  expires_in: number;
  scope: string;
}

/** What an exchange did: the response, and whom the audit row names. */
export interface ExchangeOutcome {
  response: ExchangeResponse;
  /** the user the token acts for */
  userId: string;
  /** the subject's session the token is bound to */
  sessionId: string;
  /** the whole chain, outermost agent first */
  actors: string[];
}

const scopesOf = (claims: JWTPayload): string[] => scopeClaim(claims.scope);

/** The `act` chain's subjects, outermost first (RFC 8693 §4.1). */
export function actChain(act: unknown): string[] {
  const out: string[] = [];
  let cur = act;
  while (cur && typeof cur === 'object' && typeof (cur as { sub?: unknown }).sub === 'string') {
    out.push((cur as { sub: string }).sub);
    cur = (cur as { act?: unknown }).act;
  }
  return out;
}

/** RFC 8707 §2: the `resource` (an absolute URI without a fragment), else RFC 8693's `audience`, else null. */
function targetOf(p: Record<string, string>): string | null {
  return resourceOf(p) ?? ((p.audience ?? '') !== '' ? p.audience! : null);
}

/**
 * `grant_type=urn:ietf:params:oauth:grant-type:token-exchange` (RFC 8693 §2).
 * @throws OAuthError `invalid_client` (no client authentication), `unauthorized_client` (the grant is not
 *   the client's), `invalid_request` (missing or unsupported token types), `invalid_grant` (a subject or
 *   actor token that is not live, or not the client's, or a chain too deep), `invalid_scope` (nothing left
 *   of the requested scope), `invalid_target` (a bad `resource`)
 */
export async function tokenExchangeGrant(c: AuthnContext, auth: AuthenticatedClient, p: Record<string, string>, dpop: CheckedProof | null = null): Promise<ExchangeOutcome> {
  if (auth.method === 'none') throw new OAuthError('invalid_client', 'client authentication failed', 401);
  if (!auth.client.grantTypes.includes(TOKEN_EXCHANGE_GRANT)) throw new OAuthError('unauthorized_client', `the client may not use the ${TOKEN_EXCHANGE_GRANT} grant`);
  const subjectToken = p.subject_token ?? '';
  if (subjectToken === '') throw invalidRequest('subject_token is required');
  if ((p.subject_token_type ?? '') !== ACCESS_TOKEN_TYPE) throw invalidRequest(`subject_token_type must be ${ACCESS_TOKEN_TYPE}`);
  const requestedType = p.requested_token_type ?? '';
  if (requestedType !== '' && requestedType !== ACCESS_TOKEN_TYPE) throw invalidRequest(`requested_token_type must be ${ACCESS_TOKEN_TYPE}`);

  const subject = await liveToken(c, subjectToken);
  if (!subject || subject.user === null || subject.claims.token_type !== 'access_token') {
    throw invalidGrant('the subject token is not a live user access token (its session may have ended)');
  }
  // RFC 9449 §7.1: a DPoP-bound token is presented only with a proof by its key, here as anywhere
  const subjectJkt = boundJkt(subject.claims);
  if (subjectJkt !== null && dpop?.jkt !== subjectJkt) throw invalidGrant('the subject token is DPoP-bound: the request needs a DPoP proof by its key');
  const agent = `service_account:${auth.client.id}`;
  if ((p.actor_token ?? '') !== '') {
    if ((p.actor_token_type ?? '') !== ACCESS_TOKEN_TYPE) throw invalidRequest(`actor_token_type must be ${ACCESS_TOKEN_TYPE}`);
    const actor = await liveToken(c, p.actor_token!);
    if (!actor || actor.claims.sub !== agent || actor.claims.token_type !== 'access_token') {
      throw invalidGrant('the actor token is not a live access token of the authenticated client');
    }
    const actorJkt = boundJkt(actor.claims);
    if (actorJkt !== null && dpop?.jkt !== actorJkt) throw invalidGrant('the actor token is DPoP-bound: the request needs a DPoP proof by its key');
  }
  const previous = subject.claims.act;
  const chain = [agent, ...actChain(previous)];
  if (chain.length > MAX_ACT_DEPTH) throw invalidGrant(`the delegation chain may be at most ${MAX_ACT_DEPTH} agents deep`);

  const held = scopesOf(subject.claims).filter((s) => auth.client.allowedScopes.includes(s));
  const asked = (p.scope ?? '').split(' ').filter(Boolean);
  const scope = asked.length > 0 ? asked.filter((s) => held.includes(s)) : held;
  if (scope.length === 0) throw new OAuthError('invalid_scope', 'no requested scope is held by both the subject token and the client');

  const now = c.now();
  const subjectExp = typeof subject.claims.exp === 'number' ? subject.claims.exp : now + c.options.accessTokenExpiresIn;
  const expiresIn = Math.min(c.options.accessTokenExpiresIn, subjectExp - now);
  if (expiresIn < 1) throw invalidGrant('the subject token has expired');
  const session = subject.session;
  const act: Record<string, unknown> = { sub: agent, client_id: auth.client.id, ...(previous && typeof previous === 'object' ? { act: previous } : {}) };
  const accessToken = await c.jwt.sign({
    iss: c.options.url, aud: targetOf(p) ?? auth.client.id, sub: subject.user.id, nonce: session.id, token_type: 'access_token', scope: scope.join(' '),
    roles: Array.isArray(subject.claims.roles) ? subject.claims.roles : session.roles, allowed_roles: [...subject.user.roles],
    login_method: session.loginMethod, client_id: auth.client.id, jti: randomUUID(), act,
    // RFC 9449 §5: a proof with the exchange binds the delegated token to its key
    ...(dpop ? { cnf: { jkt: dpop.jkt } } : {}),
  }, { expiresInSeconds: expiresIn, nowSeconds: now, typ: AT_JWT_TYP });
  return {
    response: { access_token: accessToken, issued_token_type: ACCESS_TOKEN_TYPE, token_type: dpop ? 'DPoP' : 'Bearer', expires_in: expiresIn, scope: scope.join(' ') },
    userId: subject.user.id, sessionId: session.id, actors: chain,
  };
}
