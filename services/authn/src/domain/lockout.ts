/**
 * @module @gatehouse/authn/domain/lockout
 * Password-login lockout: 5 failures per normalised identifier in a sliding 15 min
 * (behaviour.md §3.3 step 3, §10), on the shared window of @gatehouse/auth. Unknown identifiers lock
 * the same way. The attempt is claimed before the password is compared (issue 30 §1).
 */
import { claimAttempt, type AttemptClaim } from '@gatehouse/auth';
import { sha256Hex } from '@gatehouse/crypto';
import type { LoginLockout } from '../storage/ports.ts';

export { LOCKOUT_MAX_FAILURES, LOCKOUT_WINDOW_SECONDS } from '@gatehouse/auth';

/** Storage key: a hash, so the table holds no identifiers of people who never signed up. */
export const lockoutKey = (kind: 'email' | 'phone', identifier: string): string => sha256Hex(`login:${kind}:${identifier}`);

/**
 * Claims one password attempt for `key`; a wrong password leaves it as the failure, a right one
 * clears the key (step 5).
 * @throws AppError `resource_exhausted` `too many failed attempts, please try again later` with a
 *   `Retry-After` header (seconds until the window admits another attempt)
 */
export function claimLoginAttempt(lockout: LoginLockout, key: string, now: number): Promise<AttemptClaim> {
  return claimAttempt(lockout, key, now, 'login_lockout');
}
