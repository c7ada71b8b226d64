import { describe, expect, it } from '@jest/globals';
import { createCachedActivityCheck, createCachedSessionStore } from './session-cache.ts';
import { createMemorySessionStore, type SessionRecord, type SessionStore } from './session-store.ts';
import { runSessionStoreSuite } from './session-store.suite.ts';

runSessionStoreSuite('memory behind the write-through cache', async () => {
  let now = 1_000_000;
  const clock = () => now;
  return { store: createCachedSessionStore(createMemorySessionStore({ clock }), { clock }), advance: (s) => { now += s; }, now: clock };
});

const U1 = '11111111-1111-4111-8111-111111111111';
const U2 = '22222222-2222-4222-8222-222222222222';

/** A memory store that counts reads, behind the cache, with a fake clock (seconds) and TTL clock (ms). */
function harness(o: { maxEntries?: number; ttlMs?: number } = {}) {
  let now = 1_000_000;
  let ms = 0;
  const clock = () => now;
  const inner = createMemorySessionStore({ clock });
  let reads = 0;
  const counting: SessionStore = {
    ...inner,
    get: (id) => { reads++; return inner.get(id); },
    findByHandleHash: (h) => { reads++; return inner.findByHandleHash(h); },
  };
  const store = createCachedSessionStore(counting, { clock, nowMs: () => ms, ...o });
  let n = 0;
  const rec = (over: Partial<SessionRecord> = {}): SessionRecord => {
    n++;
    return {
      id: `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`, userId: U1, handleHash: `h${n}`.padEnd(64, '0'),
      loginMethod: 'basic_auth', roles: ['user'], scope: ['openid'], authTime: now, expiresAt: now + 100, refreshTokenId: null, createdAt: now,
      ...over,
    };
  };
  return { store, inner, rec, reads: () => reads, advance: (s: number) => { now += s; }, advanceMs: (d: number) => { ms += d; } };
}

describe('write-through session cache', () => {
  it('serves repeated reads from memory, by id and by handle hash, as copies', async () => {
    const h = harness();
    const s = h.rec();
    await h.store.create(s);
    expect(await h.store.get(s.id)).toEqual(s);
    const first = (await h.store.get(s.id))!;
    first.roles.push('admin');
    expect(await h.store.findByHandleHash(s.handleHash)).toEqual(s);
    expect(h.reads()).toBe(1);
  });

  it('refuses a cached session as soon as it is deleted (logout)', async () => {
    const h = harness();
    const s = h.rec();
    await h.store.create(s);
    await h.store.get(s.id);
    await h.store.delete(s.id);
    expect(await h.store.get(s.id)).toBeNull();
    expect(await h.store.findByHandleHash(s.handleHash)).toBeNull();
  });

  it('refuses every cached session of a user after deleteAllForUser, except the one kept', async () => {
    const h = harness();
    const [a, b, c, other] = [h.rec(), h.rec(), h.rec(), h.rec({ userId: U2 })];
    for (const s of [a, b, c, other]) {
      await h.store.create(s);
      await h.store.get(s.id);
      await h.store.findByHandleHash(s.handleHash);
    }
    expect(await h.store.deleteAllForUser(U1, b.id)).toBe(2);
    expect(await h.store.get(a.id)).toBeNull();
    expect(await h.store.findByHandleHash(c.handleHash)).toBeNull();
    expect(await h.store.get(b.id)).toEqual(b);
    expect(await h.store.get(other.id)).toEqual(other);
  });

  it('refuses the old cookie after a rotation that replaces the handle hash', async () => {
    const h = harness();
    const s = h.rec();
    await h.store.create(s);
    await h.store.findByHandleHash(s.handleHash);
    const rotated = { ...s, handleHash: 'f'.repeat(64), refreshTokenId: 'rt2' };
    await h.store.update(rotated);
    expect(await h.store.findByHandleHash(s.handleHash)).toBeNull();
    expect(await h.store.findByHandleHash(rotated.handleHash)).toEqual(rotated);
    expect(await h.store.get(s.id)).toEqual(rotated);
  });

  it('does not store a read that was in flight while the session was deleted', async () => {
    const inner = createMemorySessionStore({ clock: () => 1_000_000 });
    const gate: { release?: () => void } = {};
    let calls = 0;
    const slow: SessionStore = {
      ...inner,
      async get(id) {
        calls++;
        const s = await inner.get(id);
        if (calls === 1) await new Promise<void>((r) => { gate.release = r; });
        return s;
      },
    };
    const store = createCachedSessionStore(slow, { clock: () => 1_000_000 });
    const s = harness().rec();
    await store.create(s);
    const racing = store.get(s.id);
    while (!gate.release) await new Promise((r) => setImmediate(r));
    await store.delete(s.id);
    gate.release();
    expect(await racing).toEqual(s);
    expect(await store.get(s.id)).toBeNull();
    expect(calls).toBe(2);
  });

  it('reads an expired cached session as absent', async () => {
    const h = harness();
    const s = h.rec({ expiresAt: 1_000_010 });
    await h.store.create(s);
    await h.store.get(s.id);
    h.advance(10);
    expect(await h.store.get(s.id)).toBeNull();
    expect(await h.store.findByHandleHash(s.handleHash)).toBeNull();
  });

  it('re-reads after the TTL and keeps at most maxEntries sessions', async () => {
    const h = harness({ maxEntries: 2, ttlMs: 1000 });
    const [a, b, c] = [h.rec(), h.rec(), h.rec()];
    for (const s of [a, b, c]) {
      await h.store.create(s);
      await h.store.get(s.id);
    }
    expect(h.store.size()).toBe(2);
    const before = h.reads();
    await h.store.get(a.id);
    expect(h.reads()).toBe(before + 1);
    await h.store.get(a.id);
    expect(h.reads()).toBe(before + 1);
    // a row changed behind the cache's back is seen once the TTL has passed
    await h.inner.delete(a.id);
    h.advanceMs(1000);
    expect(await h.store.get(a.id)).toBeNull();
  });
});

describe('external writes (another process on the SQLite file)', () => {
  it('drops every cached session and activity answer when the external version moves', async () => {
    let version = 7;
    let now = 1_000_000;
    const inner = createMemorySessionStore({ clock: () => now });
    const store = createCachedSessionStore(inner, { clock: () => now, externalVersion: () => version });
    const s: SessionRecord = {
      id: '00000000-0000-4000-8000-000000000001', userId: U1, handleHash: 'a'.repeat(64), loginMethod: 'basic_auth',
      roles: ['user'], scope: ['openid'], authTime: now, expiresAt: now + 100, refreshTokenId: null, createdAt: now,
    };
    await inner.create(s);
    expect(await store.get(s.id)).toEqual(s);
    expect(await store.findByHandleHash(s.handleHash)).toEqual(s);
    await inner.delete(s.id); // behind the cache's back, as another process would
    expect(await store.get(s.id)).toEqual(s);
    version++;
    expect(await store.findByHandleHash(s.handleHash)).toBeNull();
    expect(await store.get(s.id)).toBeNull();

    let active = true;
    const check = createCachedActivityCheck({ isActive: async () => active }, { externalVersion: () => version });
    expect(await check.isActive(U1)).toBe(true);
    active = false;
    expect(await check.isActive(U1)).toBe(true);
    version++;
    expect(await check.isActive(U1)).toBe(false);
    now++;
  });
});

describe('cached user-activity check', () => {
  it('caches both answers, drops one on invalidate, and ignores reads that raced an invalidation', async () => {
    const active = new Map([[U1, true], [U2, true]]);
    let reads = 0;
    const gate: { release?: () => void } = {};
    const check = createCachedActivityCheck({
      async isActive(id) {
        reads++;
        const answer = active.get(id) ?? false;
        if (!gate.release && id === U2) await new Promise<void>((r) => { gate.release = r; });
        return answer;
      },
    });
    expect(await check.isActive(U1)).toBe(true);
    expect(await check.isActive(U1)).toBe(true);
    expect(reads).toBe(1);
    active.set(U1, false);
    check.invalidate(U1);
    expect(await check.isActive(U1)).toBe(false);
    expect(await check.isActive(U1)).toBe(false);
    expect(reads).toBe(2);
    // U2 is read as active, then revoked and invalidated before the read returns
    const racing = check.isActive(U2);
    await new Promise((r) => setImmediate(r));
    active.set(U2, false);
    check.invalidate(U2);
    gate.release!();
    expect(await racing).toBe(true);
    expect(await check.isActive(U2)).toBe(false);
  });
});
