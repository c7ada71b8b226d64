/**
 * @module @gatehouse/auth/session-store.suite
 * Conformance suite every SessionStore implementation must pass (memory, Redis, authn's database store).
 */
import { describe, it, expect, beforeEach } from '@jest/globals';
import type { SessionRecord, SessionStore } from './session-store.ts';

export interface SessionStoreHarness {
  store: SessionStore;
  /** moves the store's clock forward */
  advance(seconds: number): void;
  now(): number;
}

/** Registers the conformance tests; `make` is called before each test and must give an empty store. */
export function runSessionStoreSuite(name: string, make: () => Promise<SessionStoreHarness>): void {
  describe(`SessionStore conformance: ${name}`, () => {
    let h: SessionStoreHarness;
    let n = 0;
    // user ids are UUIDs: database stores type the column
    const U1 = '11111111-1111-4111-8111-111111111111';
    const U2 = '22222222-2222-4222-8222-222222222222';
    const rec = (over: Partial<SessionRecord> = {}): SessionRecord => {
      n++;
      const now = h.now();
      return {
        id: `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`,
        userId: U1, handleHash: `h${n}`.padEnd(64, '0'), loginMethod: 'basic_auth',
        roles: ['user'], scope: ['openid'], authTime: now, expiresAt: now + 100, refreshTokenId: null, createdAt: now,
        ...over,
      };
    };
    beforeEach(async () => {
      h = await make();
    });

    it('creates, gets and finds by handle hash', async () => {
      const s = rec({ roles: ['user', 'admin'], scope: ['openid', 'offline_access'], refreshTokenId: 'rt1' });
      await h.store.create(s);
      expect(await h.store.get(s.id)).toEqual(s);
      expect(await h.store.findByHandleHash(s.handleHash)).toEqual(s);
      expect(await h.store.get('00000000-0000-4000-8000-ffffffffffff')).toBeNull();
      expect(await h.store.findByHandleHash('f'.repeat(64))).toBeNull();
    });

    it('keeps the second factor\'s amr of a session, through an update too (issue 16)', async () => {
      const s = rec({ amr: ['otp'] });
      await h.store.create(s);
      expect(await h.store.get(s.id)).toEqual(s);
      await h.store.update({ ...s, refreshTokenId: 'rt2' });
      expect(await h.store.findByHandleHash(s.handleHash)).toEqual({ ...s, refreshTokenId: 'rt2' });
      const plain = rec();
      await h.store.create(plain);
      expect((await h.store.get(plain.id))?.amr ?? null).toBeNull();
    });

    it('reads an expired session as absent', async () => {
      const s = rec({ expiresAt: h.now() + 10 });
      await h.store.create(s);
      h.advance(11);
      expect(await h.store.get(s.id)).toBeNull();
      expect(await h.store.findByHandleHash(s.handleHash)).toBeNull();
    });

    it('deletes one session', async () => {
      const a = rec();
      const b = rec();
      await h.store.create(a);
      await h.store.create(b);
      await h.store.delete(a.id);
      expect(await h.store.get(a.id)).toBeNull();
      expect(await h.store.findByHandleHash(a.handleHash)).toBeNull();
      expect(await h.store.get(b.id)).not.toBeNull();
      await h.store.delete(a.id);
    });

    it('deletes all sessions of a user, optionally keeping one', async () => {
      const a = rec();
      const b = rec();
      const c = rec();
      const other = rec({ userId: U2 });
      for (const s of [a, b, c, other]) await h.store.create(s);
      expect(await h.store.deleteAllForUser(U1, b.id)).toBe(2);
      expect(await h.store.get(a.id)).toBeNull();
      expect(await h.store.get(b.id)).not.toBeNull();
      expect(await h.store.get(other.id)).not.toBeNull();
      expect(await h.store.deleteAllForUser(U1)).toBe(1);
      expect(await h.store.get(b.id)).toBeNull();
      expect(await h.store.deleteAllForUser('33333333-3333-4333-8333-333333333333')).toBe(0);
    });

    it('deletes every session issued to an OAuth client, of any user, and no other (issue 18, §5.8)', async () => {
      const a = rec({ clientId: 'client-a' });
      const b = rec({ userId: U2, clientId: 'client-a' });
      const other = rec({ clientId: 'client-b' });
      const own = rec();
      for (const s of [a, b, other, own]) await h.store.create(s);
      expect(await h.store.get(a.id)).toEqual(a);
      expect(await h.store.deleteAllForClient('client-a')).toBe(2);
      expect(await h.store.get(a.id)).toBeNull();
      expect(await h.store.findByHandleHash(b.handleHash)).toBeNull();
      expect(await h.store.get(other.id)).toEqual(other);
      expect(await h.store.get(own.id)).toEqual(own);
      expect(await h.store.deleteAllForClient('client-a')).toBe(0);
      // a session deleted alone leaves nothing behind for the client
      await h.store.delete(other.id);
      expect(await h.store.deleteAllForClient('client-b')).toBe(0);
    });

    it("deletes one user's sessions with an OAuth client, and no other user's (issue 34: a revoked consent)", async () => {
      const a = rec({ clientId: 'client-a' });
      const b = rec({ userId: U2, clientId: 'client-a' });
      const own = rec();
      for (const s of [a, b, own]) await h.store.create(s);
      expect(await h.store.deleteAllForClient('client-a', a.userId)).toBe(1);
      expect(await h.store.get(a.id)).toBeNull();
      expect(await h.store.get(b.id)).toEqual(b);
      expect(await h.store.get(own.id)).toEqual(own);
      expect(await h.store.deleteAllForClient('client-a')).toBe(1);
      expect(await h.store.get(b.id)).toBeNull();
    });

    it('updates a session in place', async () => {
      const s = rec();
      await h.store.create(s);
      const updated = { ...s, refreshTokenId: 'rt2', roles: ['user'], expiresAt: s.expiresAt + 50 };
      await h.store.update(updated);
      expect(await h.store.get(s.id)).toEqual(updated);
    });

    it("lists a user's live sessions with their device, and no other user's or expired ones (issue 33)", async () => {
      const a = rec({ userAgent: 'Mozilla/5.0 (X11; Linux x86_64) Chrome/131.0', ipAddress: '203.0.113.7' });
      const b = rec({ clientId: 'client-a', sid: a.id });
      const short = rec({ expiresAt: h.now() + 5 });
      const other = rec({ userId: U2 });
      for (const s of [a, b, short, other]) await h.store.create(s);
      const byId = (list: SessionRecord[]) => [...list].sort((x, y) => (x.id < y.id ? -1 : 1));
      expect(byId(await h.store.listForUser(U1))).toEqual([a, b, short]);
      expect(await h.store.listForUser('33333333-3333-4333-8333-333333333333')).toEqual([]);
      h.advance(6);
      expect(byId(await h.store.listForUser(U1))).toEqual([a, b]);
      await h.store.delete(a.id);
      expect(await h.store.listForUser(U1)).toEqual([b]);
      expect(await h.store.listForUser(U2)).toEqual([other]);
    });

    it('records the last use with touch; an update keeps it; a touch of a deleted session brings nothing back (issue 33)', async () => {
      const s = rec();
      await h.store.create(s);
      h.advance(61);
      await h.store.touch(s, h.now());
      const used = h.now();
      const [listed] = await h.store.listForUser(U1);
      expect(listed).toEqual({ ...s, lastUsedAt: used });
      // a rewrite from a record read before the touch (a refresh) does not set the last use back
      await h.store.update({ ...s, refreshTokenId: 'rt9' });
      expect(await h.store.listForUser(U1)).toEqual([{ ...s, refreshTokenId: 'rt9', lastUsedAt: used }]);
      await h.store.delete(s.id);
      await h.store.touch(s, h.now());
      expect(await h.store.get(s.id)).toBeNull();
      expect(await h.store.findByHandleHash(s.handleHash)).toBeNull();
      expect(await h.store.listForUser(U1)).toEqual([]);
    });
  });
}
