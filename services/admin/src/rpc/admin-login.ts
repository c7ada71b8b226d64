/** @module admin/rpc/admin-login — AdminService.AdminLogin (POST /v1/admin/login, behaviour.md §5.1). */
import { SUPER_ADMIN_ACTOR, adminCookie, auditRecord } from '@gatehouse/auth';
import { AppError } from '@gatehouse/errors';
import { ADMIN_LOGGED_IN, INVALID_ADMIN_SECRET, adminLogin } from '../domain/admin-session.ts';
import type { AdminHandler, AdminRpcDeps } from './deps.ts';

/**
 * Opens an admin session and sets the `service-admin` cookie (HttpOnly, SameSite=Strict, Secure per
 * `--admin-cookie-secure`, Max-Age 3600). Audit `admin.login_success` / `admin.login_failed`, each a
 * durable outbox row written before the answer (issue 32): a success whose row cannot be written
 * answers `unavailable` without the cookie, so no admin session goes unrecorded.
 * @throws AppError `unauthenticated` `invalid admin secret`; `resource_exhausted` while the client IP
 *   is locked (10 failures in 15 min); `invalid_argument` for a blank secret; `unavailable` when the
 *   audit row cannot be written
 */
export const adminLoginRpc = (d: AdminRpcDeps): AdminHandler<'AdminLogin'> => async (req, ctx) => {
  const issued = await adminLogin({ store: d.store, adminSecret: d.adminSecret, now: d.now }, req.admin_secret ?? '', ctx.clientIp);
  if (!issued) {
    await d.record('audit.recorded', auditRecord(ctx, 'admin.login_failed', { actor: SUPER_ADMIN_ACTOR, resourceType: 'admin_session', details: { reason: 'invalid_secret' } }))
      .catch((err: unknown) => { throw new AppError('unavailable', 'audit log unavailable', { cause: err }); });
    throw new AppError('unauthenticated', INVALID_ADMIN_SECRET, { reason: 'admin_secret_mismatch' });
  }
  try {
    await d.record('audit.recorded', auditRecord(ctx, 'admin.login_success', { actor: SUPER_ADMIN_ACTOR, resourceType: 'admin_session' }));
  } catch (err) {
    // the session is never handed out, and ends with its idle timeout
    throw new AppError('unavailable', 'audit log unavailable', { cause: err });
  }
  ctx.setCookies.push(adminCookie(issued.handle, { secure: d.adminCookieSecure, maxAgeSeconds: issued.maxAgeSeconds }));
  return { message: ADMIN_LOGGED_IN };
};
