/**
 * @module @gatehouse/mfa/domain/mfa-session
 * The MFA session behind the `mfa` cookie (behaviour.md §2.3 "MFA session", §4.2): the cookie holds
 * an opaque 256-bit handle, only its SHA-256 is stored; lifetime 300 s from the last (re)arm.
 */
import { COOKIE_MFA, mfaCookie, parseCookies } from '@gatehouse/auth';
import { sha256Hex } from '@gatehouse/crypto';
import { AppError } from '@gatehouse/errors';
import type { CallContext } from '@gatehouse/rpc';
import type { MfaPurpose, MfaSessionRecord } from '../storage/ports.ts';
import type { MfaContext } from './deps.ts';
import { cookieOptions } from './options.ts';

/** MFA session lifetime from its last (re)arm, seconds (behaviour.md §2.1) */
export const MFA_SESSION_TTL_SECONDS = 300;
export const INVALID_SESSION = 'invalid session';

/** The caller's session and the handle its cookie carries. */
export interface ResolvedMfaSession {
  session: MfaSessionRecord;
  handle: string;
}

/**
 * Resolves the caller's MFA session from the `mfa` cookie.
 * @param body the request's optional `email` / `phone_number`: when given they must be the session user's
 * @param purpose the purpose the endpoint accepts; `null` accepts any
 * @throws AppError `unauthenticated` `invalid session`: no cookie, unknown or expired session, a body
 *   identifier of another user, or the wrong purpose
 */
export async function requireMfaSession(
  c: MfaContext, ctx: CallContext, body: { email?: string | null; phone_number?: string | null }, purpose: MfaPurpose | null,
): Promise<ResolvedMfaSession> {
  const handle = parseCookies(ctx.headers.cookie)[COOKIE_MFA];
  if (!handle) throw new AppError('unauthenticated', INVALID_SESSION);
  const session = await c.store.findSessionByHandleHash(sha256Hex(handle));
  if (!session || session.expiresAt <= c.now()) throw new AppError('unauthenticated', INVALID_SESSION);
  if (purpose !== null && session.purpose !== purpose) throw new AppError('unauthenticated', INVALID_SESSION);
  const email = body.email?.trim().toLowerCase();
  if (email && email !== String(session.user.email ?? '').toLowerCase()) throw new AppError('unauthenticated', INVALID_SESSION);
  const phone = body.phone_number?.trim();
  if (phone && phone !== String(session.user.phone_number ?? '')) throw new AppError('unauthenticated', INVALID_SESSION);
  return { session, handle };
}

/**
 * The `mfa` Set-Cookie for a handle (behaviour.md §2.4): Max-Age = seconds from `armedAt` until
 * `expiresAt` (epoch seconds), where `armedAt` is the clock reading the session's expiry was computed
 * from. Reading the clock again after the database write could land in the next second and send one
 * second less than the session was given.
 */
export function armCookie(c: MfaContext, handle: string, expiresAt: number, armedAt: number): string {
  return mfaCookie(handle, Math.max(0, expiresAt - armedAt), cookieOptions(c.options));
}
