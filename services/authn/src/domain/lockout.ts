/**
 * @module @gatehouse/authn/domain/lockout
 * Password-login lockout: 5 failures per normalised identifier in a sliding 15 min
 * (behaviour.md §3.3 step 3, §10). Unknown identifiers lock the same way.
 */
import { AppError } from '@gatehouse/errors';
import { sha256Hex } from '@gatehouse/crypto';
import type { LoginLockout } from '../storage/storage.ts';

export const LOCKOUT_MAX_FAILURES = 5;
export const LOCKOUT_WINDOW_SECONDS = 15 * 60;

/** Storage key: a hash, so the table holds no identifiers of people who never signed up. */
export const lockoutKey = (kind: 'email' | 'phone', identifier: string): string => sha256Hex(`login:${kind}:${identifier}`);

/**
 * @throws AppError `resource_exhausted` `too many failed attempts, please try again later` with a
 *   `Retry-After` header (seconds until the window admits another attempt)
 */
export async function assertNotLocked(lockout: LoginLockout, key: string, now: number): Promise<void> {
  const recent = await lockout.failuresSince(key, now - LOCKOUT_WINDOW_SECONDS + 1);
  if (recent.length < LOCKOUT_MAX_FAILURES) return;
  const unlockAt = recent[recent.length - LOCKOUT_MAX_FAILURES]! + LOCKOUT_WINDOW_SECONDS;
  throw new AppError('resource_exhausted', 'too many failed attempts, please try again later', {
    headers: { 'Retry-After': String(Math.max(1, unlockAt - now)) },
    reason: 'login_lockout',
  });
}

export async function recordLoginFailure(lockout: LoginLockout, key: string, now: number): Promise<void> {
  await lockout.recordFailure(key, now, now - LOCKOUT_WINDOW_SECONDS + 1);
}
