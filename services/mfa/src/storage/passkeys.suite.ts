/**
 * @module @gatehouse/mfa/storage/passkeys.suite
 * Conformance suite of the passkey and WebAuthn-challenge ports (behaviour.md §4.6) every
 * {@link MfaStore} passes: memory, SQLite (unit run), PostgreSQL and MariaDB (integration run).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { MfaStoreHandle, OpenMfaStore } from './ports.suite.ts';
import type { MfaStore, PasskeyRecord, WebauthnChallengeRecord } from './ports.ts';

/** Registers the suite for one implementation. `open` runs once in beforeAll; tests share the store. */
export function describePasskeyStore(name: string, open: OpenMfaStore): void {
  describe(`passkey store conformance: ${name}`, () => {
    let handle: MfaStoreHandle;
    let store: MfaStore;
    const now = 4_102_444_800; // past 2^31: 32-bit columns would not hold it
    beforeAll(async () => {
      handle = await open(() => now);
      store = handle.store;
    });
    afterAll(async () => {
      await handle?.close();
    });

    let n = 0;
    const passkey = (over: Partial<PasskeyRecord> = {}): PasskeyRecord => ({
      id: randomUUID(),
      userId: `u-${randomUUID()}`,
      // credential ids are up to 1023 bytes; a long one shows the column holds it
      credentialId: randomBytes(n++ % 2 ? 16 : 700).toString('base64url'),
      publicKey: randomBytes(77).toString('base64url'),
      signCount: 0,
      transports: ['internal', 'hybrid'],
      name: 'Passkey',
      aaguid: '00000000-0000-0000-0000-000000000000',
      deviceType: 'singleDevice',
      backedUp: false,
      createdAt: now - 100 + n,
      updatedAt: now - 100 + n,
      lastUsedAt: null,
      ...over,
    });
    const challenge = (over: Partial<WebauthnChallengeRecord> = {}): WebauthnChallengeRecord => ({
      challenge: randomBytes(32).toString('base64url'), ceremony: 'login', userId: null, mfaSessionId: null,
      expiresAt: now + 300, createdAt: now, ...over,
    });
    const create = (...ps: PasskeyRecord[]) => store.transaction(async (tx) => {
      for (const p of ps) await tx.passkeys.create(p);
    });

    describe('passkeys', () => {
      it('stores every field and lists a user\'s passkeys oldest first, only theirs', async () => {
        const a = passkey({ name: 'Laptop', transports: [], lastUsedAt: now - 5, backedUp: true, deviceType: 'multiDevice', signCount: 4_000_000_000 });
        const b = passkey({ userId: a.userId, createdAt: a.createdAt + 1, updatedAt: a.createdAt + 1 });
        const other = passkey();
        await create(b, other, a);
        expect(await store.passkeys.listByUser(a.userId)).toEqual([a, b]);
        expect(await store.passkeys.listByUser('nobody')).toEqual([]);
        expect(await store.passkeys.findByCredentialId(a.credentialId)).toEqual(a);
        expect(await store.passkeys.findByCredentialId(a.credentialId.slice(1))).toBeNull();
      });

      it('a credential id is registered once, across users; the failed transaction leaves nothing', async () => {
        const a = passkey();
        await create(a);
        const dup = passkey({ credentialId: a.credentialId });
        const extra = passkey({ userId: dup.userId });
        await expect(create(extra, dup)).rejects.toThrow();
        expect(await store.passkeys.listByUser(dup.userId)).toEqual([]);
      });

      it('records a use only while the sign count is the one read: a racing second use loses', async () => {
        const a = passkey({ signCount: 5 });
        await create(a);
        expect(await store.transaction((tx) => tx.passkeys.recordUse(a.id, 5, 6, now))).toBe(true);
        expect(await store.transaction((tx) => tx.passkeys.recordUse(a.id, 5, 7, now))).toBe(false);
        expect(await store.passkeys.findByCredentialId(a.credentialId)).toEqual({ ...a, signCount: 6, lastUsedAt: now, updatedAt: now });
        expect(await store.transaction((tx) => tx.passkeys.recordUse(randomUUID(), 0, 1, now))).toBe(false);
      });

      it('deletes one passkey of its own user only, and all of a user\'s at once', async () => {
        const a = passkey();
        const b = passkey({ userId: a.userId });
        const c = passkey({ userId: a.userId });
        const other = passkey();
        await create(a, b, c, other);
        expect(await store.transaction((tx) => tx.passkeys.delete(other.userId, a.id))).toBe(false);
        expect(await store.transaction((tx) => tx.passkeys.delete(a.userId, a.id))).toBe(true);
        expect(await store.transaction((tx) => tx.passkeys.delete(a.userId, a.id))).toBe(false);
        expect((await store.passkeys.listByUser(a.userId)).map((p) => p.id)).toEqual([b.id, c.id]);
        expect(await store.transaction((tx) => tx.passkeys.deleteAllOfUser(a.userId))).toBe(2);
        expect(await store.passkeys.listByUser(a.userId)).toEqual([]);
        expect(await store.passkeys.listByUser(other.userId)).toEqual([other]);
      });

      it('a transaction sees its own writes; a rolled-back one leaves nothing', async () => {
        const a = passkey();
        let seen: PasskeyRecord[] = [];
        await expect(store.transaction(async (tx) => {
          await tx.passkeys.create(a);
          seen = await tx.passkeys.listByUser(a.userId);
          throw new Error('boom');
        })).rejects.toThrow('boom');
        expect(seen).toEqual([a]);
        expect(await store.passkeys.findByCredentialId(a.credentialId)).toBeNull();
      });
    });

    describe('WebAuthn challenges (single use, 300 s)', () => {
      it('stores a challenge bound to a user or an MFA session, and takes it once', async () => {
        const reg = challenge({ ceremony: 'registration', userId: 'u-1' });
        const mfa = challenge({ userId: 'u-2', mfaSessionId: randomUUID() });
        await store.transaction(async (tx) => {
          await tx.webauthnChallenges.create(reg);
          await tx.webauthnChallenges.create(mfa);
        });
        expect(await store.transaction((tx) => tx.webauthnChallenges.take(reg.challenge))).toEqual(reg);
        expect(await store.transaction((tx) => tx.webauthnChallenges.take(reg.challenge))).toBeNull();
        expect(await store.transaction((tx) => tx.webauthnChallenges.take(mfa.challenge))).toEqual(mfa);
      });

      it('takes an expired challenge (the caller tells expired from unknown); expired ones are pruned by later creates', async () => {
        const old = challenge({ expiresAt: now - 1, createdAt: now - 301 });
        await store.transaction((tx) => tx.webauthnChallenges.create(old));
        expect(await store.transaction((tx) => tx.webauthnChallenges.take(old.challenge))).toEqual(old);
        const stale = challenge({ expiresAt: now - 1, createdAt: now - 301 });
        await store.transaction((tx) => tx.webauthnChallenges.create(stale));
        await store.transaction((tx) => tx.webauthnChallenges.create(challenge()));
        expect(await store.transaction((tx) => tx.webauthnChallenges.take(stale.challenge))).toBeNull();
      });

      it('of concurrent takes of one challenge exactly one gets it', async () => {
        const c = challenge();
        await store.transaction((tx) => tx.webauthnChallenges.create(c));
        const got = await Promise.all(Array.from({ length: 4 }, () => store.transaction((tx) => tx.webauthnChallenges.take(c.challenge)).catch(() => null)));
        expect(got.filter((g) => g !== null)).toEqual([c]);
      });
    });
  });
}
