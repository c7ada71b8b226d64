/** @module @gatehouse/authn/rpc/logout — AuthnService.Logout (POST /v1/logout, behaviour.md §2.2). */
import { LOGGED_OUT, logout } from '../domain/session.ts';
import { clearCookies } from './cookies.ts';
import { recordUserAction } from './audit.ts';
import type { AuthnHandler, RpcContext } from './deps.ts';

/** Deletes the caller's current session; clears both session cookies and `mfa`. */
export const logoutRpc = (c: RpcContext): AuthnHandler<'Logout'> => async (_req, ctx) => {
  const caller = await c.authenticator.requireUser(ctx);
  await logout(c, caller);
  clearCookies(ctx, c.options);
  await recordUserAction(c, ctx, 'user.logout', { userId: caller.userId, resourceType: 'session', resourceId: caller.sessionId ?? caller.userId });
  return { message: LOGGED_OUT };
};
