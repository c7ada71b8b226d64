/**
 * @module @gatehouse/authn/rpc/user-sessions
 * The caller's own sessions (issue 33): `GET /v1/sessions`, `POST /v1/revoke_session` and
 * `POST /v1/revoke_other_sessions`. Each ended session is audited as `user.logout` (the action
 * `logout` records), with the ended session as its resource.
 */
import type { authn } from '@gatehouse/contracts';
import { listUserSessions, OTHER_SESSIONS_REVOKED, revokeOtherUserSessions, revokeUserSession, SESSION_REVOKED, type ListedSession } from '../domain/user-sessions.ts';
import { clearCookies } from './cookies.ts';
import { recordUserAction } from './audit.ts';
import type { AuthnHandler, RpcContext } from './deps.ts';

const wireSession = (l: ListedSession): authn.UserSession => ({
  id: l.session.id,
  login_method: l.session.loginMethod,
  user_agent: l.session.userAgent ?? '',
  ip_address: l.session.ipAddress ?? '',
  created_at: l.session.createdAt,
  last_used_at: l.lastUsedAt,
  expires_at: l.session.expiresAt,
  is_current: l.isCurrent,
  client_id: l.session.clientId ?? '',
});

/** `sessions` → the caller's live sessions, the current one first. @throws AppError `unauthenticated` */
export const sessionsRpc = (c: RpcContext): AuthnHandler<'Sessions'> => async (_req, ctx) => {
  const caller = await c.authenticator.requireUser(ctx);
  return { sessions: (await listUserSessions(c, caller)).map(wireSession) };
};

/**
 * `revoke_session` → `Session revoked`. Ending the caller's own session is a logout: its cookies are cleared.
 * @throws AppError `invalid_argument` `session id is required`; `not_found` `session not found`
 */
export const revokeSessionRpc = (c: RpcContext): AuthnHandler<'RevokeSession'> => async (req, ctx) => {
  const caller = await c.authenticator.requireUser(ctx);
  const ended = await revokeUserSession(c, caller, req.id);
  if (ended.id === caller.sessionId) clearCookies(ctx, c.options);
  await recordUserAction(c, ctx, 'user.logout', { userId: caller.userId, resourceType: 'session', resourceId: ended.id, details: { revoked_by: caller.sessionId } });
  return { message: SESSION_REVOKED };
};

/** `revoke_other_sessions` → `Other sessions revoked` and how many ended; the caller's session stays. */
export const revokeOtherSessionsRpc = (c: RpcContext): AuthnHandler<'RevokeOtherSessions'> => async (_req, ctx) => {
  const caller = await c.authenticator.requireUser(ctx);
  const { ended, count } = await revokeOtherUserSessions(c, caller);
  for (const s of ended) {
    await recordUserAction(c, ctx, 'user.logout', { userId: caller.userId, resourceType: 'session', resourceId: s.id, details: { revoked_by: caller.sessionId } });
  }
  return { message: OTHER_SESSIONS_REVOKED, count };
};
