/** @module admin/rpc/admin-logout — AdminService.AdminLogout (POST /v1/admin/logout, behaviour.md §5.1). */
import { COOKIE_ADMIN, SUPER_ADMIN_ACTOR, auditRecord, clearAdminCookie, parseCookies } from '@gatehouse/auth';
import { ADMIN_LOGGED_OUT, adminLogout } from '../domain/admin-session.ts';
import type { AdminHandler, AdminRpcDeps } from './deps.ts';

/** Deletes the caller's admin session (if it used the cookie) and clears the cookie. Audit `admin.logout`. */
export const adminLogoutRpc = (d: AdminRpcDeps): AdminHandler<'AdminLogout'> => async (_req, ctx) => {
  await adminLogout({ store: d.store, adminSecret: d.adminSecret, now: d.now }, parseCookies(ctx.headers.cookie)[COOKIE_ADMIN]);
  ctx.setCookies.push(clearAdminCookie({ secure: d.adminCookieSecure }));
  d.emit('audit.recorded', auditRecord(ctx, 'admin.logout', { actor: SUPER_ADMIN_ACTOR, resourceType: 'admin_session' }));
  return { message: ADMIN_LOGGED_OUT };
};
