/** @module admin/rpc/admin-session — AdminService.AdminSession (GET /v1/admin/session, behaviour.md §5.1). */
import { COOKIE_ADMIN, adminCookie, parseCookies } from '@gatehouse/auth';
import { AppError } from '@gatehouse/errors';
import { ADMIN_SESSION_REFRESHED, refreshAdminSession } from '../domain/admin-session.ts';
import type { AdminHandler, AdminRpcDeps } from './deps.ts';

/**
 * The guard has accepted an admin credential. A cookie caller's session gets its idle expiry extended
 * (never past the absolute 8 h) and the cookie re-issued; a header caller has no session to extend
 * and gets the message alone (no cookie: only admin/login opens a session).
 * @throws AppError `unauthenticated` `unauthorized` when the session vanished between guard and handler
 */
export const adminSessionRpc = (d: AdminRpcDeps): AdminHandler<'AdminSession'> => async (_req, ctx) => {
  const deps = { store: d.store, adminSecret: d.adminSecret, now: d.now };
  const handle = parseCookies(ctx.headers.cookie)[COOKIE_ADMIN];
  const refreshed = await refreshAdminSession(deps, handle);
  if (refreshed) {
    ctx.setCookies.push(adminCookie(refreshed.handle, { secure: d.adminCookieSecure, maxAgeSeconds: refreshed.maxAgeSeconds }));
    return { message: ADMIN_SESSION_REFRESHED };
  }
  const caller = await d.authenticator?.requireAdmin(ctx);
  if (caller?.via !== 'header') throw new AppError('unauthenticated', 'unauthorized', { reason: 'admin_session_gone' });
  return { message: ADMIN_SESSION_REFRESHED };
};
