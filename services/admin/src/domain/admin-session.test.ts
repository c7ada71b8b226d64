import { describe, expect, it } from '@jest/globals';
import { createMemoryAdminAccessStore } from '@gatehouse/auth';
import { sha256Hex } from '@gatehouse/crypto';
import { adminLogin, adminLogout, refreshAdminSession } from './admin-session.ts';

const SECRET = 'the-admin-secret-of-this-test-123';

function setup() {
  let now = 1_000_000;
  const store = createMemoryAdminAccessStore();
  const d = { store, adminSecret: SECRET, now: () => now };
  return { d, store, tick: (s: number) => { now += s; }, now: () => now };
}

describe('admin session (behaviour.md §5.1, §2.1)', () => {
  it('opens a session for the right secret: idle 3600 s, stored only as the handle hash', async () => {
    const { d, store, now } = setup();
    const s = await adminLogin(d, SECRET, '10.0.0.1');
    expect(s!.maxAgeSeconds).toBe(3600);
    const rec = await store.getSession(sha256Hex(s!.handle), now());
    expect(rec).toMatchObject({ idleExpiresAt: now() + 3600, absoluteExpiresAt: now() + 8 * 3600 });
  });

  it('lapses after 3600 idle seconds, and a refresh extends it but never past the absolute 8 h', async () => {
    const { d, store, tick, now } = setup();
    const s = (await adminLogin(d, SECRET, '10.0.0.1'))!;
    for (let i = 0; i < 8; i++) {
      tick(3500);
      const r = await refreshAdminSession(d, s.handle);
      if (i < 7) expect(r).not.toBeNull();
      if (r) expect(now() + r.maxAgeSeconds).toBeLessThanOrEqual(1_000_000 + 8 * 3600);
    }
    // 8 × 3500 s = 28000 s: the last refresh was capped at 28800 s after login
    tick(801);
    expect(await store.getSession(sha256Hex(s.handle), now())).toBeNull();
    const other = (await adminLogin(d, SECRET, '10.0.0.1'))!;
    tick(3601);
    expect(await refreshAdminSession(d, other.handle)).toBeNull();
  });

  it('locks a client IP after 10 wrong secrets in 15 min, correct ones included; other IPs still log in', async () => {
    const { d, tick } = setup();
    for (let i = 0; i < 10; i++) expect(await adminLogin(d, 'wrong', '10.0.0.9')).toBeNull();
    await expect(adminLogin(d, SECRET, '10.0.0.9')).rejects.toMatchObject({ code: 'resource_exhausted', message: 'too many failed attempts, please try again later' });
    expect(await adminLogin(d, SECRET, '10.0.0.10')).not.toBeNull();
    tick(15 * 60);
    expect(await adminLogin(d, SECRET, '10.0.0.9')).not.toBeNull();
  });

  it('logout deletes the session; a blank secret is invalid input and not counted', async () => {
    const { d, store, now } = setup();
    const s = (await adminLogin(d, SECRET, '10.0.0.1'))!;
    await adminLogout(d, s.handle);
    expect(await store.getSession(sha256Hex(s.handle), now())).toBeNull();
    await expect(adminLogin(d, '', '10.0.0.1')).rejects.toMatchObject({ code: 'invalid_argument' });
    expect(await store.failures.attemptsSince('10.0.0.1', 0)).toEqual([]);
  });
});
