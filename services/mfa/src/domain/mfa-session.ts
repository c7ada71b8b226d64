/**
 * @module @gatehouse/mfa/domain/mfa-session
 * The MFA session behind the `mfa` cookie (behaviour.md §2.3 "MFA session", §4.2): the cookie holds
 * an opaque 256-bit handle, only its SHA-256 is stored; lifetime 300 s from the last (re)arm.
 */
import { sha256Hex } from '@gatehouse/crypto';
import { AppError } from '@gatehouse/errors';
import type { MfaPurpose, MfaSessionRecord } from '../storage/ports.ts';
import type { MfaContext } from './deps.ts';

/** MFA session lifetime from its last (re)arm, seconds (behaviour.md §2.1) */
export const MFA_SESSION_TTL_SECONDS = 300;
export const INVALID_SESSION = 'invalid session';
/**
 * The login method stored on a decoy session (forgot_password for an unknown phone, behaviour.md
 * §3.4): no code is ever sent for it, resends included.
 */
export const DECOY_LOGIN_METHOD = 'decoy';

/** The identifiers a request may name its user by; when given they must be the session user's. */
export interface SessionClaim {
  email?: string | null | undefined;
  phoneNumber?: string | null | undefined;
}

/**
 * Resolves the caller's MFA session from the handle its `mfa` cookie carries.
 * @param handle the cookie's value, or undefined without the cookie
 * @param purpose the purpose the endpoint accepts; `null` accepts any
 * @throws AppError `unauthenticated` `invalid session`: no handle, unknown or expired session, a
 *   claimed identifier of another user, or the wrong purpose
 */
export async function requireMfaSession(
  c: MfaContext, handle: string | undefined, claim: SessionClaim, purpose: MfaPurpose | null,
): Promise<MfaSessionRecord> {
  if (!handle) throw new AppError('unauthenticated', INVALID_SESSION);
  const session = await c.store.findSessionByHandleHash(sha256Hex(handle));
  if (!session || session.expiresAt <= c.now()) throw new AppError('unauthenticated', INVALID_SESSION);
  if (purpose !== null && session.purpose !== purpose) throw new AppError('unauthenticated', INVALID_SESSION);
  const email = claim.email?.trim().toLowerCase();
  if (email && email !== String(session.user.email ?? '').toLowerCase()) throw new AppError('unauthenticated', INVALID_SESSION);
  const phone = claim.phoneNumber?.trim();
  if (phone && phone !== String(session.user.phone_number ?? '')) throw new AppError('unauthenticated', INVALID_SESSION);
  return session;
}
