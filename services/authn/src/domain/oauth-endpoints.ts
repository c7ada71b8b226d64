/**
 * @module @gatehouse/authn/domain/oauth-endpoints
 * Token revocation (RFC 7009), introspection (RFC 7662), userinfo (OIDC Core §5.3) and RP-initiated
 * logout (OpenID Connect RP-Initiated Logout 1.0). A token is live while its session exists
 * (behaviour.md §2.1), so revoking a token deletes its session and everything bound to it.
 */
import { scopeClaim, type SessionRecord } from '@gatehouse/auth';
import type { JWTPayload } from '@gatehouse/crypto';
import type { UserRecord } from '../storage/ports.ts';
import { findClient } from './clients.ts';
import type { AuthnContext } from './deps.ts';
import { boundJkt } from './dpop.ts';
import type { AuthenticatedClient } from './oauth-client-auth.ts';
import { signOnSessionOf } from './issue.ts';
import { logoutRelyingParties, type FrontChannelLogout } from './rp-logout.ts';
import { isRevoked } from './user.ts';

/** A verified token of this server and its live session, or null. */
export interface LiveToken {
  claims: JWTPayload;
  session: SessionRecord;
  /** the user; null for a service-account token */
  user: UserRecord | null;
}

/** The claims of a token this server signed (signature and `iss`), `exp` checked unless `ignoreExp`; else null. */
export async function verifiedClaims(c: AuthnContext, token: string, ignoreExp = false): Promise<JWTPayload | null> {
  try {
    const claims = await c.jwt.verify(token, ignoreExp ? { nowSeconds: 0 } : { nowSeconds: c.now() });
    return claims.iss === c.options.url ? claims : null;
  } catch {
    return null;
  }
}

/**
 * An access or refresh token that is still live: signed here, unexpired, its session present, the
 * refresh token the session's current one, and its user (or client) active.
 */
export async function liveToken(c: AuthnContext, token: string): Promise<LiveToken | null> {
  const claims = await verifiedClaims(c, token);
  if (!claims || typeof claims.nonce !== 'string' || typeof claims.sub !== 'string') return null;
  if (claims.token_type !== 'access_token' && claims.token_type !== 'refresh_token') return null;
  const session = await c.sessions.get(claims.nonce);
  if (!session) return null;
  if (claims.token_type === 'refresh_token' && session.refreshTokenId !== claims.jti) return null;
  if (claims.sub.startsWith('service_account:')) {
    const client = await findClient(c, claims.sub.slice('service_account:'.length));
    return client && client.isActive && session.userId === client.id ? { claims, session, user: null } : null;
  }
  if (session.userId !== claims.sub) return null;
  const user = await c.users.findById(session.userId);
  if (!user || isRevoked(user)) return null;
  if (session.clientId) {
    const client = await findClient(c, session.clientId);
    if (!client || !client.isActive) return null;
  }
  return { claims, session, user };
}

const tokenClientOf = (c: AuthnContext, claims: JWTPayload): string =>
  typeof claims.client_id === 'string' ? claims.client_id : typeof claims.aud === 'string' ? claims.aud : c.options.clientId;

/**
 * RFC 7009 §2.1: revokes an access or refresh token by deleting its session. An unknown, invalid or
 * already revoked token, or another client's, is answered like a success (§2.2) and changes nothing.
 * @returns the revoked session (for the audit log), or null when nothing was revoked
 */
export async function revokeToken(c: AuthnContext, auth: AuthenticatedClient, token: string): Promise<SessionRecord | null> {
  const claims = await verifiedClaims(c, token);
  if (!claims || typeof claims.nonce !== 'string') return null;
  if (tokenClientOf(c, claims) !== auth.client.id) return null;
  // issue 34: a delegated token (RFC 8693 `act`) shares the user's own session; the agent may not end it
  if (claims.act !== undefined) return null;
  const session = await c.sessions.get(claims.nonce);
  if (!session) return null;
  await c.sessions.delete(session.id);
  return session;
}

/** RFC 7662 §2.2: `{active: false}` or the token's metadata. Only the token's own client learns about it. */
export async function introspect(c: AuthnContext, auth: AuthenticatedClient, token: string): Promise<Record<string, unknown>> {
  const live = await liveToken(c, token);
  if (!live) return { active: false };
  const { claims, user } = live;
  const clientId = tokenClientOf(c, claims);
  if (clientId !== auth.client.id && auth.client.id !== c.options.clientId) return { active: false };
  const scope = scopeClaim(claims.scope).join(' ');
  // RFC 9449 §6.2: a DPoP-bound token reports its key's thumbprint as `cnf.jkt` and its type as DPoP
  const jkt = boundJkt(claims);
  const tokenType = claims.token_type === 'refresh_token' ? 'refresh_token' : jkt !== null ? 'DPoP' : 'Bearer';
  return {
    active: true, scope, client_id: clientId, token_type: tokenType,
    ...(jkt !== null ? { cnf: { jkt } } : {}),
    exp: claims.exp, iat: claims.iat, sub: claims.sub, aud: claims.aud, iss: claims.iss,
    ...(user?.email ? { username: user.email } : {}), ...(claims.jti ? { jti: claims.jti } : {}),
    // RFC 8693 §4.4: the delegation chain of an exchanged token
    ...(claims.act ? { act: claims.act } : {}),
  };
}

/**
 * OIDC Core §5.3.2: the claims of the access token's user, by its scope (§5.4): `sub` always;
 * `profile`, `email`, `phone` add theirs. Service-account tokens have no user: null.
 */
export function userinfoClaims(user: UserRecord, scope: readonly string[]): Record<string, unknown> {
  const out: Record<string, unknown> = { sub: user.id };
  const put = (k: string, v: unknown): void => { if (v !== null && v !== undefined) out[k] = v; };
  if (scope.includes('profile')) {
    put('given_name', user.givenName); put('family_name', user.familyName); put('middle_name', user.middleName);
    put('nickname', user.nickname); put('preferred_username', user.email); put('gender', user.gender);
    put('birthdate', user.birthdate); put('picture', user.picture); put('updated_at', user.updatedAt);
    const name = [user.givenName, user.middleName, user.familyName].filter(Boolean).join(' ');
    if (name) out.name = name;
  }
  if (scope.includes('email') && user.email) { out.email = user.email; out.email_verified = user.emailVerifiedAt !== null; }
  if (scope.includes('phone') && user.phoneNumber) { out.phone_number = user.phoneNumber; out.phone_number_verified = user.phoneNumberVerifiedAt !== null; }
  return out;
}

/** What RP-initiated logout did and where to send the browser. */
export interface EndSessionResult {
  /** the validated `post_logout_redirect_uri` with `state`, or null (show the logged-out page) */
  location: string | null;
  /** the sessions deleted */
  ended: string[];
  /**
   * issue 34 §6: the relying parties' front-channel logout iframes (OIDC Front-Channel Logout 1.0 §4),
   * to render before the redirect; their back-channel logout tokens are already queued
   */
  frontChannel: FrontChannelLogout[];
}

/**
 * OpenID Connect RP-Initiated Logout 1.0 §2-§3: ends the browser session (from its cookies) and the
 * session named by the `id_token_hint`'s `sid`, and tells the relying parties of those sign-on
 * sessions (issue 34 §6: back-channel logout tokens queued, front-channel iframes returned). `post_logout_redirect_uri` is followed only when it is
 * registered for the client (the hint's `aud`, or `client_id`); otherwise the logged-out page is shown.
 */
export async function endSession(c: AuthnContext, p: Record<string, string>, browser: SessionRecord | null): Promise<EndSessionResult> {
  const hint = p.id_token_hint ? await verifiedClaims(c, p.id_token_hint, true) : null;
  const ended: string[] = [];
  const signOn = new Set<string>();
  const sid = hint && typeof hint.sid === 'string' ? hint.sid : null;
  for (const id of new Set([sid, browser?.id].filter((x): x is string => typeof x === 'string'))) {
    const s = await c.sessions.get(id);
    // the hint names a session of its own user only
    if (s && (id === browser?.id || s.userId === hint?.sub)) {
      await c.sessions.delete(id);
      ended.push(id);
      signOn.add(signOnSessionOf(s));
    }
  }
  // issue 34 §6: the hint's sign-on session may be gone already (another logout); its RPs hear once
  if (sid !== null && hint?.sub !== undefined && browser === null) signOn.add(sid);
  const frontChannel: FrontChannelLogout[] = [];
  for (const s of signOn) frontChannel.push(...await logoutRelyingParties(c, { sid: s }));
  const clientId = p.client_id || (hint && typeof hint.aud === 'string' ? hint.aud : '');
  const target = p.post_logout_redirect_uri ?? '';
  if (target === '' || clientId === '') return { location: null, ended, frontChannel };
  const client = await findClient(c, clientId);
  const registered = client !== null && (client.id === c.options.clientId ? c.options.redirectUris.includes(target) : client.postLogoutRedirectUris.includes(target));
  if (!registered) return { location: null, ended, frontChannel };
  const u = new URL(target);
  if (p.state) u.searchParams.set('state', p.state);
  return { location: u.toString(), ended, frontChannel };
}
