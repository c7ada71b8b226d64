/**
 * The credential reads that go through the driver's prepared statements (issue 22 §1: session by id
 * and by handle hash, user by id) answer exactly what the MikroORM path answers for the same rows, on
 * SQLite, PostgreSQL and MariaDB: a full row, a row of nulls, an expired session, a revoked or
 * deactivated user, a missing row, and a deleted session.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createScratchDatabase, openDatabase, type Database, type DatabaseType, type ScratchDatabase } from '@gatehouse/db';
import type { SessionRecord } from '@gatehouse/auth';
import { createLogger } from '@gatehouse/observability';
import { sampleUser } from '../ports.suite.ts';
import { SessionEntity } from './entities.ts';
import { authnSchema, createMikroSessionStore, createMikroUserRepository } from './index.ts';

const logger = createLogger('silent');

const session = (over: Partial<SessionRecord> = {}): SessionRecord => ({
  id: randomUUID(), userId: randomUUID(), handleHash: randomUUID().replace(/-/g, '').padEnd(64, '0'), loginMethod: 'basic_auth',
  roles: ['user', 'admin'], scope: ['openid', 'profile'], authTime: 1_799_999_000, expiresAt: 1_800_086_400,
  refreshTokenId: null, createdAt: 1_799_999_000, ...over,
});

for (const type of ['sqlite', 'postgres', 'mariadb'] as DatabaseType[]) {
  describe(`prepared credential reads on ${type}`, () => {
    let scratch: ScratchDatabase;
    let db: Database;
    /** `db` whose `prepare` counts the prepared reads it hands out calls to */
    let counting: Database;
    /** `db` without `prepare`: the MikroORM path, as on MongoDB */
    let ormOnly: Database;
    let preparedCalls = 0;
    const now = 1_800_000_000;
    beforeAll(async () => {
      scratch = await createScratchDatabase(type);
      db = await openDatabase(scratch.options, authnSchema, { logger });
      counting = { ...db, prepare: (sql) => {
        const read = db.prepare!(sql);
        return (params) => {
          preparedCalls++;
          return read(params);
        };
      } };
      ormOnly = { ...db, prepare: undefined };
    });
    afterAll(async () => {
      await db?.close();
      await scratch?.drop();
    });

    it('reads sessions by id and by handle hash as the ORM does: full, minimal, expired, missing, deleted', async () => {
      const clock = () => now;
      const prepared = createMikroSessionStore(counting, { clock });
      const orm = createMikroSessionStore(ormOnly, { clock });
      const full = session({
        refreshTokenId: 'rt-1', amr: ['otp'], previousRefreshTokenId: 'rt-0', refreshRotatedAt: 1_799_999_500, clientId: 'client-a',
        // past 2^31: a BIGINT that must come back as the same number
        expiresAt: 4_102_444_800,
      });
      const minimal = session({ roles: [], scope: [] });
      const expired = session({ expiresAt: now - 1 });
      const atExpiry = session({ expiresAt: now });
      for (const s of [full, minimal, expired, atExpiry]) await prepared.create(s);

      const before = preparedCalls;
      for (const s of [full, minimal, expired, atExpiry]) {
        expect(await prepared.get(s.id)).toStrictEqual(await orm.get(s.id));
        expect(await prepared.findByHandleHash(s.handleHash)).toStrictEqual(await orm.findByHandleHash(s.handleHash));
      }
      expect(preparedCalls - before).toBe(8);
      expect(await prepared.get(full.id)).toStrictEqual(full);
      expect(await prepared.findByHandleHash(minimal.handleHash)).toStrictEqual({ ...minimal, refreshTokenId: null });
      expect(await prepared.get(expired.id)).toBeNull();
      expect(await prepared.get(atExpiry.id)).toBeNull();
      expect(await prepared.get(randomUUID())).toBeNull();
      expect(await prepared.findByHandleHash('f'.repeat(64))).toBeNull();
      expect(await orm.get(randomUUID())).toBeNull();

      // logout / revoke: gone on both paths
      await prepared.delete(full.id);
      expect(await prepared.get(full.id)).toBeNull();
      expect(await prepared.findByHandleHash(full.handleHash)).toBeNull();
      expect(await orm.get(full.id)).toBeNull();
    });

    it('does not read the rows of a transaction in progress (SQLite: waits for it on the shared connection)', async () => {
      const prepared = createMikroSessionStore(counting, { clock: () => now });
      const s = session();
      let inserted!: () => void;
      const insertedP = new Promise<void>((r) => (inserted = r));
      let release!: () => void;
      const gate = new Promise<void>((r) => (release = r));
      const tx = db.transactional(async (em) => {
        em.persist(em.create(SessionEntity as never, { ...s, roles: '[]', scope: '[]' } as never));
        await em.flush();
        inserted();
        await gate;
        throw new Error('rolled back');
      });
      await insertedP;
      const read = prepared.get(s.id);
      release();
      await expect(tx).rejects.toThrow('rolled back');
      expect(await read).toBeNull();
    });

    it('reads users by id as the ORM does: every column type, revoked, deactivated, missing', async () => {
      const prepared = createMikroUserRepository(counting);
      const orm = createMikroUserRepository(ormOnly);
      const users = [
        sampleUser({ isMultiFactorAuthEnabled: true, phoneNumber: '+15550100', phoneNumberVerifiedAt: 1_700_000_002, hasSkippedMfaSetupAt: 1_700_000_003, mfaLockedAt: 1_700_000_004, updatedAt: 4_102_444_800 }),
        sampleUser({ isMultiFactorAuthEnabled: false, revokedTimestamp: 1_700_000_100 }),
        sampleUser({ deactivatedAt: 1_700_000_200, appData: null, email: null, emailVerifiedAt: null, passwordHash: null, givenName: null, roles: [] }),
      ];
      await prepared.transaction(async (tx) => {
        for (const u of users) await tx.users.create(u);
      });
      const before = preparedCalls;
      for (const u of users) {
        const read = await prepared.findById(u.id);
        expect(read).toStrictEqual(await orm.findById(u.id));
        expect(read).toStrictEqual(u);
      }
      expect(await prepared.findById(randomUUID())).toBeNull();
      expect(await orm.findById(randomUUID())).toBeNull();
      expect(preparedCalls - before).toBe(4);
    });
  });
}
