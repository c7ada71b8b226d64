/**
 * @module @gatehouse/authn/storage/ports.suite
 * Conformance suite every authn storage implementation must pass (memory, SQLite, PostgreSQL, MariaDB).
 */
import { describe, it, expect, beforeEach, afterEach } from '@jest/globals';
import { runAttemptLogSuite } from '@gatehouse/auth/attempt-log-suite';
import { randomUUID } from 'node:crypto';
import type { LoginLockout, UserRecord, UserRepository, VerificationRequestRecord } from './ports.ts';

export interface AuthnStorageHarness {
  users: UserRepository;
  lockout: LoginLockout;
  /** names of committed events, in commit order */
  publishedEvents(): Promise<Array<{ name: string; data: unknown }>>;
  close?(): Promise<void>;
}

/** A complete user record with every field set, for round-trip checks. */
export function sampleUser(over: Partial<UserRecord> = {}): UserRecord {
  return {
    id: randomUUID(), email: `u-${randomUUID().slice(0, 8)}@example.com`, emailVerifiedAt: 1700000000,
    passwordHash: '$argon2id$v=19$m=19456,t=2,p=1$c2FsdA$aGFzaA', signupMethods: 'basic_auth',
    givenName: 'Ada', familyName: 'Lovelace', middleName: 'King', nickname: 'ada', gender: 'female',
    birthdate: '1815-12-10', picture: 'https://example.com/a.png', phoneNumber: null, phoneNumberVerifiedAt: null,
    roles: ['user', 'editor'], createdAt: 1700000000, updatedAt: 1700000001, revokedTimestamp: null, deactivatedAt: null,
    isMultiFactorAuthEnabled: null, hasSkippedMfaSetupAt: null, mfaLockedAt: null,
    appData: { plan: 'pro', nested: { n: 1, list: [1, 'two'] } },
    ...over,
  };
}

/** A complete verification request, for round-trip checks. */
export function sampleVerification(over: Partial<VerificationRequestRecord> = {}): VerificationRequestRecord {
  const id = randomUUID();
  return {
    id, identifier: 'magic_link_login', email: 'ada@example.com', tokenHash: id.replace(/-/g, '').padEnd(64, 'a'),
    expiresAt: 1700001800, redirectUri: 'https://app.example.com/cb', state: 's-1', scope: ['openid', 'offline_access'],
    roles: ['user'], userId: randomUUID(), consumedAt: null, createdAt: 1700000000, updatedAt: 1700000000,
    ...over,
  };
}

export function runAuthnStorageSuite(name: string, make: () => Promise<AuthnStorageHarness>): void {
  describe(`authn storage conformance: ${name}`, () => {
    let h: AuthnStorageHarness;
    beforeEach(async () => {
      h = await make();
    });
    afterEach(async () => {
      await h.close?.();
    });

    it('creates and reads a user by id, email and phone with every field intact', async () => {
      const u = sampleUser({ phoneNumber: '+4915112345678', phoneNumberVerifiedAt: 1700000002, isMultiFactorAuthEnabled: false, mfaLockedAt: 5, hasSkippedMfaSetupAt: 6, revokedTimestamp: 7, deactivatedAt: 7 });
      await h.users.transaction(async (tx) => tx.users.create(u));
      expect(await h.users.findById(u.id)).toEqual(u);
      expect(await h.users.findByEmail(u.email!)).toEqual(u);
      expect(await h.users.findByPhone('+4915112345678')).toEqual(u);
      expect(await h.users.findById(randomUUID())).toBeNull();
      expect(await h.users.findByEmail('nobody@example.com')).toBeNull();
      expect(await h.users.findByPhone('+10000000000')).toBeNull();
    });

    it('stores nulls and empty lists as such', async () => {
      const u = sampleUser({ email: null, emailVerifiedAt: null, passwordHash: null, givenName: null, familyName: null, middleName: null, nickname: null, gender: null, birthdate: null, picture: null, phoneNumber: '+12025550123', roles: [], appData: null });
      await h.users.transaction(async (tx) => tx.users.create(u));
      expect(await h.users.findById(u.id)).toEqual(u);
    });

    it('updates a user in place', async () => {
      const u = sampleUser();
      await h.users.transaction(async (tx) => tx.users.create(u));
      const changed = { ...u, email: 'new@example.com', roles: ['user'], appData: { a: 1 }, updatedAt: u.updatedAt + 10, revokedTimestamp: 99 };
      await h.users.transaction(async (tx) => tx.users.update(changed));
      expect(await h.users.findById(u.id)).toEqual(changed);
      expect(await h.users.findByEmail(u.email!)).toBeNull();
    });

    it('sees its own writes inside a transaction', async () => {
      const u = sampleUser();
      await h.users.transaction(async (tx) => {
        await tx.users.create(u);
        expect(await tx.users.findByEmail(u.email!)).toMatchObject({ id: u.id });
      });
    });

    it('commits events with the state change, in order, once', async () => {
      const u = sampleUser();
      await h.users.transaction(async (tx) => {
        await tx.users.create(u);
        tx.events.emit('user.created', { user_id: u.id });
        tx.events.emit('user.signup', { user_id: u.id });
      });
      expect(await h.publishedEvents()).toEqual([
        { name: 'user.created', data: { user_id: u.id } },
        { name: 'user.signup', data: { user_id: u.id } },
      ]);
    });

    it('rolls back writes and events when the transaction throws', async () => {
      const u = sampleUser();
      await expect(h.users.transaction(async (tx) => {
        await tx.users.create(u);
        tx.events.emit('user.created', { user_id: u.id });
        throw new Error('boom');
      })).rejects.toThrow('boom');
      expect(await h.users.findById(u.id)).toBeNull();
      expect(await h.publishedEvents()).toEqual([]);
    });

    it('lets only one of many concurrent claims of the same email through lockIdentifier', async () => {
      const email = `race-${randomUUID().slice(0, 8)}@example.com`;
      const attempt = () => h.users.transaction(async (tx) => {
        await tx.users.lockIdentifier('email', email);
        if (await tx.users.findByEmail(email)) return 'taken';
        await tx.users.create(sampleUser({ email }));
        tx.events.emit('user.created', { email });
        return 'created';
      });
      const results = await Promise.all(Array.from({ length: 6 }, attempt));
      expect(results.filter((r) => r === 'created')).toHaveLength(1);
      expect(results.filter((r) => r === 'taken')).toHaveLength(5);
      expect((await h.publishedEvents()).map((e) => e.name)).toEqual(['user.created']);
    });

    it('stores verification requests with every field and finds them by token hash', async () => {
      const v = sampleVerification();
      const bare = sampleVerification({ identifier: 'basic_auth_signup', email: 'bob@example.com', redirectUri: null, state: null, scope: null, roles: null, userId: null });
      await h.users.transaction(async (tx) => {
        await tx.verifications.issue(v);
        await tx.verifications.issue(bare);
      });
      const read = await h.users.transaction((tx) => Promise.all([
        tx.verifications.findByTokenHash(v.tokenHash), tx.verifications.findByTokenHash(bare.tokenHash), tx.verifications.findByTokenHash('0'.repeat(64)),
      ]));
      expect(read).toEqual([v, bare, null]);
    });

    it('supersedes the unconsumed request of the same address and purpose only', async () => {
      const first = sampleVerification({ identifier: 'forgot_password', createdAt: 100, updatedAt: 100 });
      const otherPurpose = sampleVerification({ identifier: 'basic_auth_signup', createdAt: 100, updatedAt: 100 });
      const otherEmail = sampleVerification({ identifier: 'forgot_password', email: 'eve@example.com', createdAt: 100, updatedAt: 100 });
      const second = sampleVerification({ identifier: 'forgot_password', createdAt: 160, updatedAt: 160 });
      await h.users.transaction(async (tx) => {
        for (const v of [first, otherPurpose, otherEmail]) await tx.verifications.issue(v);
      });
      await h.users.transaction(async (tx) => {
        expect(await tx.verifications.findPending('ada@example.com', 'forgot_password')).toEqual(first);
        await tx.verifications.issue(second);
      });
      await h.users.transaction(async (tx) => {
        expect(await tx.verifications.findByTokenHash(first.tokenHash)).toMatchObject({ consumedAt: 160, updatedAt: 160 });
        expect(await tx.verifications.findPending('ada@example.com', 'forgot_password')).toEqual(second);
        expect(await tx.verifications.findPending('ada@example.com', 'basic_auth_signup')).toEqual(otherPurpose);
        expect(await tx.verifications.findPending('eve@example.com', 'forgot_password')).toEqual(otherEmail);
        expect(await tx.verifications.findPending('ada@example.com', 'update_email')).toBeNull();
        expect(await tx.verifications.lastIssuedAt('ada@example.com', 'forgot_password')).toBe(160);
        expect(await tx.verifications.lastIssuedAt('nobody@example.com', 'forgot_password')).toBeNull();
      });
    });

    it('consumes a request once, even under concurrent redemptions', async () => {
      const v = sampleVerification();
      await h.users.transaction((tx) => tx.verifications.issue(v));
      const results = await Promise.all(Array.from({ length: 5 }, () => h.users.transaction((tx) => tx.verifications.consume(v.id, 500))));
      expect(results.filter(Boolean)).toHaveLength(1);
      await h.users.transaction(async (tx) => {
        expect(await tx.verifications.findByTokenHash(v.tokenHash)).toMatchObject({ consumedAt: 500 });
        expect(await tx.verifications.findPending(v.email, v.identifier)).toBeNull();
        expect(await tx.verifications.consume(v.id, 600)).toBe(false);
      });
    });

    it('rolls back an issued request with the transaction', async () => {
      const v = sampleVerification();
      await expect(h.users.transaction(async (tx) => {
        await tx.verifications.issue(v);
        throw new Error('boom');
      })).rejects.toThrow('boom');
      expect(await h.users.transaction((tx) => tx.verifications.findByTokenHash(v.tokenHash))).toBeNull();
    });

    // the login lockout's attempts, claimed before the password is compared (issue 30 §1)
    runAttemptLogSuite('login lockout', () => h.lockout);

    it('searches users by a case-insensitive substring of id, email, given_name, family_name and nickname, newest first, with the total', async () => {
      const a = sampleUser({ email: 'alpha@example.com', givenName: 'Grace', familyName: 'Hopper', nickname: 'amazing', createdAt: 100 });
      const b = sampleUser({ email: 'beta@example.com', givenName: 'Ada', familyName: 'LOVELACE', nickname: null, createdAt: 300 });
      const c = sampleUser({ email: 'gamma@example.com', givenName: null, familyName: null, nickname: '50%_off', createdAt: 200 });
      const d = sampleUser({ id: '00000000-0000-4000-8000-000000000000', email: null, phoneNumber: '+4915100000001', givenName: null, familyName: null, nickname: null, createdAt: 300 });
      await h.users.transaction(async (tx) => { for (const u of [a, b, c, d]) await tx.users.create(u); });
      const ids = async (q: string | null, offset = 0, limit = 10) => {
        const p = await h.users.search(q, { offset, limit });
        return { ids: p.rows.map((u) => u.id), total: p.total };
      };
      // same created_at: id ascending breaks the tie
      expect(await ids(null)).toEqual({ ids: [d.id, b.id, c.id, a.id], total: 4 });
      expect(await ids('lovelace')).toEqual({ ids: [b.id], total: 1 });
      expect(await ids('GRACE')).toEqual({ ids: [a.id], total: 1 });
      expect(await ids('example.com', 1, 2)).toEqual({ ids: [c.id, a.id], total: 3 });
      expect(await ids('example.com', 10, 2)).toEqual({ ids: [], total: 3 });
      // LIKE wildcards in the query are literal
      expect(await ids('%_')).toEqual({ ids: [c.id], total: 1 });
      expect(await ids('00000000-0000')).toEqual({ ids: [d.id], total: 1 });
      expect((await h.users.search(null, { offset: 0, limit: 10 })).rows[0]).toEqual(d);
    });

    it('deletes a user and the verification requests of the user or the address; lists requests newest first', async () => {
      const u = sampleUser();
      const mine = sampleVerification({ userId: u.id, email: 'x@example.com', createdAt: 10 });
      const byAddress = sampleVerification({ userId: null, email: u.email!, identifier: 'invite_member', createdAt: 30 });
      const other = sampleVerification({ email: 'other@example.com', createdAt: 20 });
      await h.users.transaction(async (tx) => {
        await tx.users.create(u);
        for (const v of [mine, byAddress, other]) await tx.verifications.issue(v);
      });
      const listed = await h.users.listVerificationRequests({ offset: 0, limit: 10 });
      expect({ ids: listed.rows.map((v) => v.id), total: listed.total }).toEqual({ ids: [byAddress.id, other.id, mine.id], total: 3 });
      expect((await h.users.listVerificationRequests({ offset: 1, limit: 1 })).rows.map((v) => v.id)).toEqual([other.id]);
      await h.users.transaction(async (tx) => {
        expect(await tx.verifications.deleteForUser(u.id, [u.email!])).toBe(2);
        await tx.users.delete(u.id);
      });
      expect(await h.users.findById(u.id)).toBeNull();
      const left = await h.users.listVerificationRequests({ offset: 0, limit: 10 });
      expect({ ids: left.rows.map((v) => v.id), total: left.total }).toEqual({ ids: [other.id], total: 1 });
    });
  
    it('links an upstream identity once, finds it by (issuer, subject), and deletes the links of a user', async () => {
      const u = sampleUser();
      const link = { id: randomUUID(), issuer: 'https://accounts.example.com', subject: '1234', userId: u.id, method: 'google', createdAt: 100 };
      await h.users.transaction(async (tx) => {
        await tx.users.create(u);
        await tx.identities.link(link);
      });
      await h.users.transaction(async (tx) => {
        expect(await tx.identities.find(link.issuer, link.subject)).toEqual(link);
        expect(await tx.identities.find(link.issuer, '12345')).toBeNull();
        expect(await tx.identities.find('https://other.example.com', link.subject)).toBeNull();
      });
      // (issuer, subject) is unique: the second link fails its whole transaction
      const u2 = sampleUser();
      await expect(h.users.transaction(async (tx) => {
        await tx.users.create(u2);
        await tx.identities.link({ ...link, id: randomUUID(), userId: u2.id });
      })).rejects.toThrow();
      expect(await h.users.findById(u2.id)).toBeNull();
      await h.users.transaction(async (tx) => {
        await tx.identities.link({ ...link, id: randomUUID(), subject: '999' });
        expect(await tx.identities.deleteForUser(u.id)).toBe(2);
      });
      await h.users.transaction(async (tx) => { expect(await tx.identities.find(link.issuer, link.subject)).toBeNull(); });
    });
  });
}
