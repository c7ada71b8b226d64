/**
 * @module @gatehouse/authn/domain/session
 * `session`, `logout` and `revoke` (behaviour.md §2.2, §3.5).
 */
import { AppError } from '@gatehouse/errors';
import { clearMfaCookie, clearSessionCookies } from '@gatehouse/auth';
import type { CallContext } from '@gatehouse/rpc';
import { tokenAuthResponse, type AuthResponse } from './auth-response.ts';
import type { AuthnContext } from './deps.ts';
import { openSessionAndRespond } from './issue.ts';
import { cookieOptions } from './options.ts';
import { assertRelations } from './relations.ts';
import { issueTokens } from './tokens.ts';
import { isRevoked } from './user.ts';
import { MAX_URL_CHARS, asObject, optString, optStringList, optText, parseRequiredRelations } from './validation.ts';

const unauthorized = () => new AppError('unauthenticated', 'unauthorized');

/**
 * `POST /v1/session`. Cookie: rotation (new session, fresh expiry, same auth_time and login
 * method, roles and scope optionally narrowed; the old session is deleted; new cookies). Bearer:
 * new access/ID tokens for the same session, no cookies. Roles or scope that widen → 401.
 */
export async function refreshSession(c: AuthnContext, ctx: CallContext, raw: unknown): Promise<AuthResponse> {
  const req = asObject(raw);
  const rolesReq = optStringList(req, 'roles');
  const scopeReq = optStringList(req, 'scope');
  optString(req, 'state', MAX_URL_CHARS);
  const relations = parseRequiredRelations(req);
  const caller = await c.authenticator.requireUser(ctx);
  const old = caller.session;
  const user = await c.users.findById(caller.userId);
  if (!user || isRevoked(user)) throw unauthorized();
  const roles = rolesReq ?? old.roles;
  const scope = scopeReq ?? old.scope;
  if (roles.some((r) => !old.roles.includes(r)) || scope.some((s) => !old.scope.includes(s))) throw unauthorized();
  await assertRelations(c, user.id, relations);
  const message = 'Session token refreshed';
  if (caller.via === 'bearer') {
    const tokens = await issueTokens(c, user, { ...old, roles, scope });
    if (tokens.refreshTokenId) await c.sessions.update({ ...old, refreshTokenId: tokens.refreshTokenId });
    return tokenAuthResponse(message, tokens, user);
  }
  const { response } = await openSessionAndRespond(c, ctx, user, { loginMethod: old.loginMethod, roles, scope, authTime: old.authTime }, message);
  await c.sessions.delete(old.id);
  return response;
}

/** `POST /v1/logout`: deletes the caller's current session only; clears the session pair and `mfa`. */
export async function logout(c: AuthnContext, ctx: CallContext): Promise<{ message: string }> {
  const caller = await c.authenticator.requireUser(ctx);
  await c.sessions.delete(caller.sessionId);
  const co = cookieOptions(c.options);
  ctx.setCookies.push(...clearSessionCookies(co), clearMfaCookie(co));
  return { message: 'Logged out successfully' };
}

/** behaviour.md §9 */
export const TOKEN_REVOKED = 'Token revoked';

/**
 * `POST /v1/revoke`: deletes the session a refresh token belongs to. No credentials needed.
 * @param refreshToken the request's `refresh_token` (at most 16384 characters)
 * @throws AppError `invalid_argument` `missing refresh token` / `invalid token` / `token does not match`;
 *   `not_found` `token not found`
 */
export async function revoke(c: AuthnContext, refreshToken: string | null | undefined): Promise<void> {
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
