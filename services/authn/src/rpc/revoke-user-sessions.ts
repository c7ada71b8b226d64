/**
 * @module @gatehouse/authn/rpc/revoke-user-sessions
 * AuthnService.RevokeUserSessions (`POST /v1/admin/revoke_user_sessions`, GraphQL
 * `_revoke_user_sessions`; issue 35): the super-admin signs one user out everywhere without revoking
 * access, as the "Sign out" of a user in Keycloak's admin console does. Every session of the user is
 * deleted before the answer (behaviour.md §2.2), so its access and refresh tokens and its cookie fail on
 * their next use (§2.1: a token is valid only while its session exists), and the relying parties of its
 * sign-on sessions are logged out (OIDC Back-Channel Logout 1.0 §2.7). Unlike `revoke_access` the
 * account is left as it is: the user may sign in again at once.
 */
import { AppError } from '@gatehouse/errors';
import { findUserByIdOrEmail } from '../domain/admin-users.ts';
import { logoutRelyingParties } from '../domain/rp-logout.ts';
import { adminAuditOf } from './admin-audit.ts';
import type { AuthnHandler, RpcContext } from './deps.ts';

export const USER_SESSIONS_REVOKED = 'User sessions revoked';

/**
 * `_revoke_user_sessions` → `{message: "User sessions revoked", count}`, `count` the sessions ended (0
 * when the user had none, so a repeated call is harmless). Audited as `admin.sessions_revoked` on the
 * user with `{count}` (behaviour.md §5.7), best effort: the sessions are already gone when it is
 * written, so a failure to record is logged and never changes the answer.
 * @throws AppError `invalid_argument` `user ID is missing`; `not_found` `user not found`
 */
export const revokeUserSessionsRpc = (c: RpcContext): AuthnHandler<'RevokeUserSessions'> => async (req, ctx) => {
  if (!req.user_id?.trim()) throw new AppError('invalid_argument', 'user ID is missing');
  const user = await findUserByIdOrEmail(c, { id: req.user_id });
  const count = await c.sessions.deleteAllForUser(user.id);
  await logoutRelyingParties(c, { userId: user.id });
  try {
    await c.users.transaction(async (tx) => { adminAuditOf(ctx)(tx.events, 'admin.sessions_revoked', { resourceId: user.id, details: { count } }); });
  } catch (err) {
    c.logger.warn({ err, action: 'admin.sessions_revoked' }, 'audit event not recorded');
  }
  return { message: USER_SESSIONS_REVOKED, count };
};
