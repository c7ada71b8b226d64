/** @module @gatehouse/authn/rpc/logout — AuthnService.Logout (POST /v1/logout, behaviour.md §2.2). */
import { LOGGED_OUT, logout } from '../domain/session.ts';
import { clearCookies } from './cookies.ts';
import type { AuthnHandler, RpcContext } from './deps.ts';

/** Deletes the caller's current session; clears both session cookies and `mfa`. */
export const logoutRpc = (c: RpcContext): AuthnHandler<'Logout'> => async (_req, ctx) => {
  await logout(c, await c.authenticator.requireUser(ctx));
  clearCookies(ctx, c.options);
  return { message: LOGGED_OUT };
};
