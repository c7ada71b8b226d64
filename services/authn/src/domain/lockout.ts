/**
 * @module @gatehouse/authn/domain/lockout
 * Password-login lockout: 5 failures per normalised identifier in a sliding 15 min
 * (behaviour.md §3.3 step 3, §10), on the shared window of @gatehouse/auth. Unknown identifiers lock
 * the same way.
 */
import { assertNotLocked as assertWindowOpen, recordFailure } from '@gatehouse/auth';
import { sha256Hex } from '@gatehouse/crypto';
import type { LoginLockout } from '../storage/ports.ts';

export { LOCKOUT_MAX_FAILURES, LOCKOUT_WINDOW_SECONDS } from '@gatehouse/auth';

/** Storage key: a hash, so the table holds no identifiers of people who never signed up. */
export const lockoutKey = (kind: 'email' | 'phone', identifier: string): string => sha256Hex(`login:${kind}:${identifier}`);

/**
 * @throws AppError `resource_exhausted` `too many failed attempts, please try again later` with a
 *   `Retry-After` header (seconds until the window admits another attempt)
 */
export function assertNotLocked(lockout: LoginLockout, key: string, now: number): Promise<void> {
  return assertWindowOpen(lockout, key, now, 'login_lockout');
}

export function recordLoginFailure(lockout: LoginLockout, key: string, now: number): Promise<void> {
  return recordFailure(lockout, key, now);
}
