/**
 * @module @gatehouse/authn/domain/session
 * `session`, `logout` and `revoke` (behaviour.md §2.2, §3.5).
 */
import { AppError } from '@gatehouse/errors';
import type { UserCaller } from '@gatehouse/auth';
import type { AuthnContext } from './deps.ts';
import { openSession, signOnSessionOf, type Issued } from './issue.ts';
import { logoutRelyingParties } from './rp-logout.ts';
import { assertRelations } from './relations.ts';
import type { GrantRequest } from './roles.ts';
import { issueTokens } from './tokens.ts';
import { activeUser } from './user.ts';
import { MAX_URL_CHARS, normaliseList, optText, requiredRelations, type Opt, type RelationInput } from './validation.ts';

/** behaviour.md §9 */
export const SESSION_REFRESHED = 'Session token refreshed';
export const LOGGED_OUT = 'Logged out successfully';
export const TOKEN_REVOKED = 'Token revoked';

const unauthorized = () => new AppError('unauthenticated', 'unauthorized');

/**
 * What `session` may narrow the caller's grant to (a subset of the session's roles and scope; none:
 * the session's), and the relations the caller must hold (§7.4).
 */
export interface SessionRefresh extends GrantRequest {
  requiredRelations: readonly RelationInput[];
}

/**
 * `POST /v1/session`. Cookie caller: rotation (a new session with a fresh expiry, the same auth_time
 * login method and second-factor `amr`, roles and scope optionally narrowed; the old session is deleted; new cookies).
 * Bearer caller: new access/ID tokens for the same session, no cookies.
 * @returns the tokens, and the new session's cookie for a cookie caller
 * @throws AppError `unauthenticated` `unauthorized` (user gone or revoked, roles or scope that widen);
 *   `invalid_argument` for a field over its length or a bad relation; relations as assertRelations
 */
export async function refreshSession(c: AuthnContext, caller: UserCaller, q: SessionRefresh): Promise<Issued> {
  const rolesReq = normaliseList('roles', q.roles);
  const scopeReq = normaliseList('scope', q.scope);
  optText('state', q.state, MAX_URL_CHARS);
  const relations = requiredRelations(q.requiredRelations);
  const old = caller.session;
  const user = await activeUser(c.users, caller.userId);
  const roles = rolesReq ?? old.roles;
  const scope = scopeReq ?? old.scope;
  if (roles.some((r) => !old.roles.includes(r)) || scope.some((s) => !old.scope.includes(s))) throw unauthorized();
  if (relations.length > 0) await assertRelations(c, user.id, relations);
  if (caller.via === 'bearer') {
    const tokens = await issueTokens(c, user, { ...old, roles, scope });
    if (tokens.refreshTokenId) await c.sessions.update({ ...old, refreshTokenId: tokens.refreshTokenId });
    return { user, tokens, cookie: null };
  }
  const issued = await openSession(c, user, { loginMethod: old.loginMethod, roles, scope, authTime: old.authTime, ...(old.amr ? { amr: old.amr } : {}) });
  await c.sessions.delete(old.id);
  return issued;
}

/** `POST /v1/logout`: deletes the caller's current session only (the caller's cookies are cleared, §2.2). */
export async function logout(c: AuthnContext, caller: UserCaller): Promise<void> {
  const session = await c.sessions.get(caller.sessionId);
  await c.sessions.delete(caller.sessionId);
  // issue 34 §6: the sign-on session ends, and with it the grants of the relying parties made in it
  if (session) await logoutRelyingParties(c, { sid: signOnSessionOf(session) });
}

/**
 * `POST /v1/revoke`: deletes the session a refresh token belongs to. No credentials needed.
 * @param refreshToken the request's `refresh_token` (at most 16384 characters)
 * @throws AppError `invalid_argument` `missing refresh token` / `invalid token` / `token does not match`;
 *   `not_found` `token not found`
 */
export async function revoke(c: AuthnContext, refreshToken: Opt<string>): Promise<void> {
  const token = optText('refresh_token', refreshToken, 16384);
  if (!token) throw new AppError('invalid_argument', 'missing refresh token');
  let claims;
  try {
    claims = await c.jwt.verify(token, { nowSeconds: c.now() });
  } catch (err) {
    throw new AppError('invalid_argument', 'invalid token', { cause: err });
  }
  if (claims.iss !== c.options.url || claims.token_type !== 'refresh_token' || typeof claims.nonce !== 'string') {
    throw new AppError('invalid_argument', 'invalid token');
  }
  const session = await c.sessions.get(claims.nonce);
  if (!session || session.userId !== claims.sub) throw new AppError('not_found', 'token not found');
  if (!session.refreshTokenId || session.refreshTokenId !== claims.jti) throw new AppError('invalid_argument', 'token does not match');
  await c.sessions.delete(session.id);
}
