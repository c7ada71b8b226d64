/** @module admin/rpc/admin-logout — AdminService.AdminLogout (POST /v1/admin/logout, behaviour.md §5.1). */
import { COOKIE_ADMIN, SUPER_ADMIN_ACTOR, auditRecord, clearAdminCookie, parseCookies } from '@gatehouse/auth';
import { AppError } from '@gatehouse/errors';
import { ADMIN_LOGGED_OUT, adminLogout } from '../domain/admin-session.ts';
import type { AdminHandler, AdminRpcDeps } from './deps.ts';

/**
 * Deletes the caller's admin session (if it used the cookie) and clears the cookie. Audit `admin.logout`,
 * a durable outbox row written before the answer (issue 32).
 * @throws AppError `unavailable` when the audit row cannot be written (the session is gone already)
 */
export const adminLogoutRpc = (d: AdminRpcDeps): AdminHandler<'AdminLogout'> => async (_req, ctx) => {
  await adminLogout({ store: d.store, adminSecret: d.adminSecret, now: d.now }, parseCookies(ctx.headers.cookie)[COOKIE_ADMIN]);
  ctx.setCookies.push(clearAdminCookie({ secure: d.adminCookieSecure }));
  await d.record('audit.recorded', auditRecord(ctx, 'admin.logout', { actor: SUPER_ADMIN_ACTOR, resourceType: 'admin_session' }))
    .catch((err: unknown) => { throw new AppError('unavailable', 'audit log unavailable', { cause: err }); });
  return { message: ADMIN_LOGGED_OUT };
};
