/** The in-process attempt log (behaviour.md §3.3 lockout, §10 admin secret): its memory has a bound. */
import { describe, expect, it } from '@jest/globals';
import { LOCKOUT_WINDOW_SECONDS, createMemoryAttemptLog } from './lockout.ts';

describe('createMemoryAttemptLog', () => {
  it('drops keys whose attempts left the window: 100,000 one-off keys leave at most twice the live ones (+64)', async () => {
    const log = createMemoryAttemptLog();
    const t0 = 1_000_000;
    // one failed attempt each from 100,000 addresses over 10 windows, never back (the shape of a spray)
    for (let i = 0; i < 100_000; i++) {
      const now = t0 + Math.floor((i * 10 * LOCKOUT_WINDOW_SECONDS) / 100_000);
      const r = await log.claim(`ip:${i}`, now, 5, LOCKOUT_WINDOW_SECONDS);
      expect(r.claimed).not.toBeNull();
    }
    // 10,000 keys per window are live at the end; the log may hold up to about twice that, never all 100,000
    expect(log.size()).toBeLessThanOrEqual(2 * 10_000 + 64);
    expect(log.size()).toBeGreaterThanOrEqual(10_000);
  });

  it('still counts a key whose attempts are inside the window, through sweeps', async () => {
    const log = createMemoryAttemptLog();
    const now = 2_000_000;
    for (let i = 0; i < 5; i++) await log.claim('user@example.com', now + i, 5, LOCKOUT_WINDOW_SECONDS);
    // many other keys, enough to sweep several times, all within the window
    for (let i = 0; i < 1000; i++) await log.claim(`ip:${i}`, now + 10, 5, LOCKOUT_WINDOW_SECONDS);
    const locked = await log.claim('user@example.com', now + 20, 5, LOCKOUT_WINDOW_SECONDS);
    expect(locked).toEqual({ claimed: null, unlockAt: now + LOCKOUT_WINDOW_SECONDS });
    expect(await log.attemptsSince('user@example.com', now)).toEqual([now, now + 1, now + 2, now + 3, now + 4]);
  });

  it('forgets a key once its only attempt is released (a right admin secret leaves nothing behind)', async () => {
    const log = createMemoryAttemptLog();
    const r = await log.claim('ip:203.0.113.7', 3_000_000, 10, LOCKOUT_WINDOW_SECONDS);
    if (!r.claimed) throw new Error('not claimed');
    await log.release(r.claimed);
    expect(log.size()).toBe(0);
    expect(await log.attemptsSince('ip:203.0.113.7', 0)).toEqual([]);
  });
});
