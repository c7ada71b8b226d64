/**
 * @module @gatehouse/auth/attempt-log.suite
 * Conformance suite every {@link AttemptLog} passes (memory, Redis, and the attempt slots of authn
 * and mfa on SQLite, PostgreSQL, MariaDB and MongoDB): the sliding window, release and clear, and the
 * property the lockouts rest on (issue 30 §1): of N concurrent claims exactly `max` are admitted.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from '@jest/globals';
import { claimAttempt, LOCKOUT_WINDOW_SECONDS, type AttemptLog } from './lockout.ts';

/**
 * Registers the suite. `log()` gives the implementation under test (it may be shared between
 * tests: every test uses fresh keys).
 * @param concurrency claims fired at once in the race test (50 as issue 30 asks; fewer for slow stores)
 */
export function runAttemptLogSuite(name: string, log: () => AttemptLog, concurrency = 50): void {
  describe(`AttemptLog conformance: ${name}`, () => {
    const now = 1_900_000_000;
    const key = (): string => `t:${randomUUID()}`;

    it('admits max attempts in the window, then answers when the oldest leaves it', async () => {
      const k = key();
      for (let i = 0; i < 5; i++) expect((await log().claim(k, now + i * 60, 5, LOCKOUT_WINDOW_SECONDS)).claimed).not.toBeNull();
      const at = now + 300;
      expect(await log().claim(k, at, 5, LOCKOUT_WINDOW_SECONDS)).toEqual({ claimed: null, unlockAt: now + LOCKOUT_WINDOW_SECONDS });
      expect(await log().attemptsSince(k, 0)).toEqual([now, now + 60, now + 120, now + 180, now + 240]);
      // the window slides: the first attempt's second has passed, one more is admitted, and only one
      expect((await log().claim(k, now + LOCKOUT_WINDOW_SECONDS, 5, LOCKOUT_WINDOW_SECONDS)).claimed).not.toBeNull();
      expect((await log().claim(k, now + LOCKOUT_WINDOW_SECONDS, 5, LOCKOUT_WINDOW_SECONDS)).claimed).toBeNull();
      expect(await log().attemptsSince(k, now + 1)).toEqual([now + 60, now + 120, now + 180, now + 240, now + LOCKOUT_WINDOW_SECONDS]);
    });

    it('claimAttempt refuses a locked key with resource_exhausted and Retry-After', async () => {
      const k = key();
      for (let i = 0; i < 5; i++) await claimAttempt(log(), k, now + i * 60, 'otp_lockout');
      const at = now + 5 * 60;
      await expect(claimAttempt(log(), k, at, 'otp_lockout')).rejects.toMatchObject({
        code: 'resource_exhausted', message: 'too many failed attempts, please try again later',
        headers: { 'Retry-After': String(now + LOCKOUT_WINDOW_SECONDS - at) },
      });
      await expect(claimAttempt(log(), k, now + LOCKOUT_WINDOW_SECONDS, 'otp_lockout')).resolves.toMatchObject({ key: k });
    });

    it('release gives one claim back; clear forgets the key; keys are independent', async () => {
      const [a, b] = [key(), key()];
      const first = (await log().claim(a, now, 2, 60)).claimed!;
      await log().claim(a, now + 1, 2, 60);
      await log().claim(b, now, 2, 60);
      expect((await log().claim(a, now + 2, 2, 60)).claimed).toBeNull();
      await log().release(first);
      expect(await log().attemptsSince(a, 0)).toEqual([now + 1]);
      expect((await log().claim(a, now + 3, 2, 60)).claimed).not.toBeNull();
      await log().clear(a);
      expect(await log().attemptsSince(a, 0)).toEqual([]);
      expect(await log().attemptsSince(b, 0)).toEqual([now]);
    });

    it(`of ${concurrency} concurrent claims on one key exactly max are admitted`, async () => {
      for (const max of [1, 5, 10]) {
        const k = key();
        const results = await Promise.all(Array.from({ length: concurrency }, () => log().claim(k, now, max, LOCKOUT_WINDOW_SECONDS)));
        expect(results.filter((r) => r.claimed !== null)).toHaveLength(max);
        expect(await log().attemptsSince(k, 0)).toEqual(Array.from({ length: max }, () => now));
      }
    }, 60_000);
  });
}
