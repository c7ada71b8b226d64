/**
 * @module @gatehouse/auth/lockout
 * The sliding-window lockout shared by password login and OTP/TOTP verification (behaviour.md §3.3
 * step 3, §4.4, §10): 5 failures per key within 15 minutes lock the key; further attempts, correct
 * ones included, are refused until the window admits another. Each service keeps its own failure
 * table behind {@link FailureLog}.
 */
import { AppError } from '@gatehouse/errors';

export const LOCKOUT_MAX_FAILURES = 5;
export const LOCKOUT_WINDOW_SECONDS = 15 * 60;
export const LOCKOUT_MESSAGE = 'too many failed attempts, please try again later';

/** One service's failure times per key. Times are Unix seconds. */
export interface FailureLog {
  /** records one failure at `atSeconds`; may prune failures older than `pruneBeforeSeconds` */
  recordFailure(key: string, atSeconds: number, pruneBeforeSeconds?: number): Promise<void>;
  /** failure times (ascending) at or after `sinceSeconds` */
  failuresSince(key: string, sinceSeconds: number): Promise<number[]>;
  clear(key: string): Promise<void>;
}

/**
 * @param reason the AppError `reason`, for logs and metrics (`login_lockout`, `otp_lockout`)
 * @param maxFailures failures in the window that lock the key (5; the admin secret's is 10, §10)
 * @throws AppError `resource_exhausted` `too many failed attempts, please try again later` with a
 *   `Retry-After` header (seconds until the window admits another attempt)
 */
export async function assertNotLocked(log: FailureLog, key: string, now: number, reason: string, maxFailures = LOCKOUT_MAX_FAILURES): Promise<void> {
  const recent = await log.failuresSince(key, now - LOCKOUT_WINDOW_SECONDS + 1);
  if (recent.length < maxFailures) return;
  const unlockAt = recent[recent.length - maxFailures]! + LOCKOUT_WINDOW_SECONDS;
  throw new AppError('resource_exhausted', LOCKOUT_MESSAGE, {
    headers: { 'Retry-After': String(Math.max(1, unlockAt - now)) },
    reason,
  });
}

/** Counts one failure at `now` and prunes what has left the window. */
export async function recordFailure(log: FailureLog, key: string, now: number): Promise<void> {
  await log.recordFailure(key, now, now - LOCKOUT_WINDOW_SECONDS + 1);
}
