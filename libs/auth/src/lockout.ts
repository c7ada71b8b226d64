/**
 * @module @gatehouse/auth/lockout
 * The sliding-window lockout shared by password login, OTP/TOTP verification and the admin secret
 * (behaviour.md §3.3 step 3, §4.4, §5.1, §10): 5 failures per key within 15 minutes lock the key
 * (10 for the admin secret); further attempts, correct ones included, are refused until the window
 * admits another.
 *
 * An attempt is **claimed before it is judged** (issue 30 §1): {@link claimAttempt} records it
 * atomically when the window still has room and refuses it otherwise, so N concurrent wrong attempts
 * let exactly the allowance through to the comparison, whatever the number of processes. A claim
 * that turns out right is cleared (login, OTP: a success resets the counter) or released (admin
 * secret: only failures count); a wrong one simply stays as the failure. The same claim, with other
 * allowances and windows, caps sends (`send-caps.ts`).
 */
import { Counter, type Registry } from 'prom-client';
import { AppError } from '@gatehouse/errors';
import type { AttemptSlots } from '@gatehouse/db';

export const LOCKOUT_MAX_FAILURES = 5;
export const LOCKOUT_WINDOW_SECONDS = 15 * 60;
export const LOCKOUT_MESSAGE = 'too many failed attempts, please try again later';

/** One admitted attempt, for {@link AttemptLog.release}. */
export interface AttemptClaim {
  readonly key: string;
  /** Unix seconds of the attempt */
  readonly at: number;
  /** the implementation's handle on the recorded attempt */
  readonly token: string;
}

/** The outcome of {@link AttemptLog.claim}: the claim, or when the key admits its next attempt. */
export type ClaimResult = { claimed: AttemptClaim } | { claimed: null; unlockAt: number };

/** Attempt times per key, claimed atomically. Times are Unix seconds. */
export interface AttemptLog {
  /**
   * Records one attempt at `now` for `key` when fewer than `max` attempts lie in the window
   * `[now - windowSeconds + 1, now]`, as one atomic step; otherwise records nothing and answers the
   * time at which the oldest counted attempt leaves the window.
   */
  claim(key: string, now: number, max: number, windowSeconds: number): Promise<ClaimResult>;
  /** forgets one claimed attempt (a right admin secret: only failures count) */
  release(claim: AttemptClaim): Promise<void>;
  /** attempt times (ascending) at or after `sinceSeconds` */
  attemptsSince(key: string, sinceSeconds: number): Promise<number[]>;
  /** forgets every attempt of the key (a success resets the counter) */
  clear(key: string): Promise<void>;
  /** called once per {@link claimAttempt} with its `reason` and whether it was admitted (metrics) */
  observe?: (reason: string, admitted: boolean) => void;
}

/**
 * Claims one attempt of `key` before the secret is compared.
 * @param reason the AppError `reason`, for logs and metrics (`login_lockout`, `otp_lockout`, …)
 * @param maxFailures attempts admitted per window (5; the admin secret's is 10, §10)
 * @returns the claim: clear the key on success (or release the claim), keep it on failure
 * @throws AppError `resource_exhausted` `too many failed attempts, please try again later` with a
 *   `Retry-After` header (seconds until the window admits another attempt)
 */
export async function claimAttempt(log: AttemptLog, key: string, now: number, reason: string, maxFailures = LOCKOUT_MAX_FAILURES): Promise<AttemptClaim> {
  const r = await log.claim(key, now, maxFailures, LOCKOUT_WINDOW_SECONDS);
  log.observe?.(reason, r.claimed !== null);
  if (r.claimed) return r.claimed;
  throw new AppError('resource_exhausted', LOCKOUT_MESSAGE, {
    headers: { 'Retry-After': String(Math.max(1, r.unlockAt - now)) },
    reason,
  });
}

/**
 * An in-process {@link AttemptLog} (unit tests; all-in-one's admin store). Each call is atomic. Keys whose
 * attempts have all left their window are dropped by a sweep that runs once the claims since the last
 * sweep reach the keys it left (at least 64; amortised O(1) per claim), so the log holds at most about twice
 * the keys with an attempt inside the window, plus 64, however many distinct keys (client IPs, addresses)
 * ever came by.
 * @returns the log and `size()`, the keys it holds
 */
export function createMemoryAttemptLog(): AttemptLog & { size(): number } {
  /** per key: its attempts, and the time (Unix seconds) its latest attempt leaves the window */
  const times = new Map<string, { list: Array<{ at: number; token: string }>; until: number }>();
  let seq = 0;
  let claimsSinceSweep = 0;
  /** keys left by the last sweep (at least 64): the next sweep comes after as many claims */
  let sweepEvery = 64;
  const sweep = (now: number): void => {
    for (const [key, e] of times) if (e.until <= now) times.delete(key);
    claimsSinceSweep = 0;
    sweepEvery = Math.max(64, times.size);
  };
  return {
    async claim(key, now, max, windowSeconds) {
      if (++claimsSinceSweep >= sweepEvery) sweep(now);
      const since = now - windowSeconds + 1;
      const kept = (times.get(key)?.list ?? []).filter((t) => t.at >= since);
      const entry = { list: kept, until: kept.length > 0 ? kept[kept.length - 1]!.at + windowSeconds : now };
      times.set(key, entry);
      if (kept.length >= max) return { claimed: null, unlockAt: kept[kept.length - max]!.at + windowSeconds };
      const claim = { key, at: now, token: String(++seq) };
      kept.push({ at: now, token: claim.token });
      kept.sort((a, b) => a.at - b.at);
      entry.until = Math.max(entry.until, now + windowSeconds);
      return { claimed: claim };
    },
    async release(claim) {
      const e = times.get(claim.key);
      if (!e) return;
      e.list = e.list.filter((t) => t.token !== claim.token);
      if (e.list.length === 0) times.delete(claim.key);
    },
    async attemptsSince(key, since) {
      return (times.get(key)?.list ?? []).filter((t) => t.at >= since).map((t) => t.at);
    },
    async clear(key) {
      times.delete(key);
    },
    size: () => times.size,
  };
}

/** Claim rounds before giving up on a key that other callers keep winning (each round is one read). */
const MAX_CLAIM_ROUNDS = 50;

/**
 * An {@link AttemptLog} on a database's attempt slots (`@gatehouse/db` `createMikroAttemptSlots`):
 * a key has `max` slots, an attempt takes a slot whose time has left the window by a conditional
 * write, and a key whose slots are all inside the window is locked until the oldest leaves it.
 * @throws AppError `unavailable` when a claim keeps losing races for {@link MAX_CLAIM_ROUNDS} rounds
 */
export function slotAttemptLog(slots: AttemptSlots): AttemptLog {
  return {
    async claim(key, now, max, windowSeconds) {
      const since = now - windowSeconds + 1;
      for (let round = 0; round < MAX_CLAIM_ROUNDS; round++) {
        const rows = (await slots.read(key)).filter((s) => s.slot < max);
        const missing = [];
        for (let i = 0; i < max; i++) if (!rows.some((s) => s.slot === i)) missing.push(i);
        if (missing.length > 0) {
          await slots.create(key, missing);
          continue;
        }
        const free = rows.filter((s) => s.at < since).sort((a, b) => a.slot - b.slot);
        if (free.length === 0) return { claimed: null, unlockAt: Math.min(...rows.map((s) => s.at)) + windowSeconds };
        for (const s of free) {
          if (await slots.swap(key, s.slot, s.at, now)) return { claimed: { key, at: now, token: `${s.slot}:${s.at}` } };
        }
      }
      throw new AppError('unavailable', 'attempt counter busy, please try again', { reason: 'attempt_slots_contended' });
    },
    async release(claim) {
      const [slot, previous] = claim.token.split(':').map(Number) as [number, number];
      await slots.swap(claim.key, slot, claim.at, previous);
    },
    async attemptsSince(key, since) {
      return (await slots.read(key)).map((s) => s.at).filter((t) => t >= since && t > 0).sort((a, b) => a - b);
    },
    clear: (key) => slots.clear(key),
  };
}

export const ATTEMPTS_METRIC = 'gatehouse_secret_attempts_total';

/**
 * Counts every {@link claimAttempt} of `log` on `registry` as
 * `gatehouse_secret_attempts_total{reason,outcome}` (`reason`: `login_lockout`, `otp_lockout`,
 * `totp_lockout`, `admin_secret_lockout`; `outcome`: `compared` when admitted to the comparison,
 * `locked` when refused). Summed over replicas, `compared` is how many secrets were judged.
 * @returns `log`, observed (a log already observed is left as it is)
 */
export function countAttempts<T extends AttemptLog>(log: T, registry: Registry): T {
  if (log.observe) return log;
  const existing = registry.getSingleMetric(ATTEMPTS_METRIC) as Counter<'reason' | 'outcome'> | undefined;
  const counter = existing ?? new Counter({
    name: ATTEMPTS_METRIC,
    help: 'Attempts at a limited secret (password, OTP, TOTP, admin secret) by lockout and outcome: compared, or locked (refused before comparing)',
    labelNames: ['reason', 'outcome'] as const,
    registers: [registry],
  });
  log.observe = (reason, admitted) => counter.inc({ reason, outcome: admitted ? 'compared' : 'locked' });
  return log;
}
