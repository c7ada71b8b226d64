/**
 * @module @gatehouse/authn/rpc/logout — AuthnService.Logout (POST /v1/logout, behaviour.md §2.2) and
 * AuthnInternal.EndCookieSession (issue 31: the SAML IdP's Single Logout, SAML Profiles §4.4).
 */
import { LOGGED_OUT, logout } from '../domain/session.ts';
import { clearCookies } from './cookies.ts';
import { recordUserAction } from './audit.ts';
import type { AuthnHandler, AuthnInternalHandler, RpcContext } from './deps.ts';

/** `EndCookieSession`'s message when the call carried no live session cookie. */
export const NO_SESSION = 'no session';

/** Deletes the caller's current session; clears both session cookies and `mfa`. */
export const logoutRpc = (c: RpcContext): AuthnHandler<'Logout'> => async (_req, ctx) => {
  const caller = await c.authenticator.requireUser(ctx);
  await logout(c, caller);
  clearCookies(ctx, c.options);
  await recordUserAction(c, ctx, 'user.logout', { userId: caller.userId, resourceType: 'session', resourceId: caller.sessionId ?? caller.userId });
  return { message: LOGGED_OUT };
};

/**
 * The session of the session cookies on the call (forwarded from the browser by the orgs service) ends
 * as with Logout, and the cookies are cleared on the call; without a live session: `no session`.
 */
export const endCookieSessionRpc = (c: RpcContext): AuthnInternalHandler<'EndCookieSession'> => async (_req, ctx) => {
  const session = await c.authenticator.sessionFromCookies(ctx);
  if (!session) return { message: NO_SESSION };
  await logout(c, {
    kind: 'user', userId: session.userId, sessionId: session.id, roles: session.roles, scope: session.scope,
    loginMethod: session.loginMethod, via: 'cookie', session,
  });
  clearCookies(ctx, c.options);
  await recordUserAction(c, ctx, 'user.logout', { userId: session.userId, resourceType: 'session', resourceId: session.id });
  return { message: LOGGED_OUT };
};
