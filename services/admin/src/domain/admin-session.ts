/**
 * @module admin/domain/admin-session
 * The super-admin session (behaviour.md §5.1, §2.1): login by constant-time comparison with
 * `--admin-secret`, an opaque handle whose hash is stored (idle 3600 s within an absolute 8 h), logout,
 * and the refresh that extends the idle expiry but never past the absolute one. A wrong secret counts
 * one failure for the client IP; 10 in 15 minutes lock that IP (correct secrets included).
 */
import {
  ADMIN_SESSION_ABSOLUTE_SECONDS, ADMIN_SESSION_IDLE_SECONDS, newAdminHandle, verifyAdminSecret, type AdminAccessStore,
} from '@gatehouse/auth';
import { sha256Hex } from '@gatehouse/crypto';
import { AppError } from '@gatehouse/errors';

export const ADMIN_LOGGED_IN = 'admin logged in successfully';
export const ADMIN_LOGGED_OUT = 'admin logged out successfully';
export const ADMIN_SESSION_REFRESHED = 'admin session refreshed successfully';
export const INVALID_ADMIN_SECRET = 'invalid admin secret';

export interface AdminSessionDeps {
  store: AdminAccessStore;
  /** `--admin-secret` */
  adminSecret: string;
  /** Unix seconds */
  now(): number;
}

/** A session just opened or refreshed: the handle for the cookie and its Max-Age in seconds. */
export interface IssuedAdminSession {
  handle: string;
  maxAgeSeconds: number;
}

/**
 * Opens an admin session for the right secret (behaviour.md §5.1 `admin/login`).
 * @param clientIp the caller's IP (the gateway's resolution under `--trusted-proxies`), the lockout key
 * @returns the new session; `ok: false` when the secret was wrong (the failure is already counted)
 * @throws AppError `invalid_argument` `admin secret is required` for a blank secret (not counted);
 *   `resource_exhausted` `too many failed attempts, please try again later` while the IP is locked
 */
export async function adminLogin(d: AdminSessionDeps, secret: string, clientIp: string): Promise<IssuedAdminSession | null> {
  if (secret === '') throw new AppError('invalid_argument', 'admin secret is required');
  const now = d.now();
  if (!(await verifyAdminSecret(d.store.failures, clientIp, secret, d.adminSecret, now))) return null;
  const handle = newAdminHandle();
  const idle = now + ADMIN_SESSION_IDLE_SECONDS;
  await d.store.createSession({ handleHash: sha256Hex(handle), createdAt: now, idleExpiresAt: idle, absoluteExpiresAt: now + ADMIN_SESSION_ABSOLUTE_SECONDS });
  return { handle, maxAgeSeconds: ADMIN_SESSION_IDLE_SECONDS };
}

/** Deletes the session of `handle` (no-op when absent or when the caller used the header). */
export async function adminLogout(d: AdminSessionDeps, handle: string | undefined): Promise<void> {
  if (handle) await d.store.deleteSession(sha256Hex(handle));
}

/**
 * Extends the idle expiry of the session of `handle` to now + 3600 s, capped at its absolute expiry
 * (behaviour.md §5.1 `admin/session`).
 * @returns the cookie's new Max-Age, or null when the caller holds no live session (a header caller)
 */
export async function refreshAdminSession(d: AdminSessionDeps, handle: string | undefined): Promise<IssuedAdminSession | null> {
  if (!handle) return null;
  const now = d.now();
  const s = await d.store.getSession(sha256Hex(handle), now);
  if (!s) return null;
  const idle = Math.min(now + ADMIN_SESSION_IDLE_SECONDS, s.absoluteExpiresAt);
  await d.store.updateSession({ ...s, idleExpiresAt: idle }, now);
  return { handle, maxAgeSeconds: Math.max(1, idle - now) };
}
