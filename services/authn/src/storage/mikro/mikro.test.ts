import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createScratchDatabase, openDatabase, type Database, type DatabaseType, type ScratchDatabase } from '@gatehouse/db';
import { runSessionStoreSuite } from '@gatehouse/auth/testing';
import { createLogger } from '@gatehouse/observability';
import { runAuthnStorageSuite } from '../storage.suite.ts';
import { authnSchema, createMikroAuthnStorage } from './index.ts';

const logger = createLogger('silent');

for (const type of ['sqlite', 'postgres', 'mariadb'] as DatabaseType[]) {
  describe(`MikroORM storage on ${type}`, () => {
    let scratch: ScratchDatabase;
    let db: Database;
    let now = 1_800_000_000;
    beforeAll(async () => {
      scratch = await createScratchDatabase(type);
      db = await openDatabase(scratch.options, authnSchema, { logger });
    });
    afterAll(async () => {
      await db?.close();
      await scratch?.drop();
    });
    const reset = async () => {
      for (const t of ['authn_users', 'authn_sessions', 'authn_login_failures', 'authn_verification_requests', 'authn_outbox']) await db.execute(`delete from ${t}`);
    };

    runAuthnStorageSuite(type, async () => {
      await reset();
      const s = createMikroAuthnStorage(db, { clock: () => now });
      return {
        users: s.users,
        lockout: s.lockout,
        publishedEvents: async () => {
          const rows = await db.execute<{ name: string; data: string }>('select name, data from authn_outbox order by seq');
          return rows.map((r) => ({ name: r.name, data: JSON.parse(r.data) as unknown }));
        },
      };
    });

    runSessionStoreSuite(`authn database (${type})`, async () => {
      await reset();
      return { store: createMikroAuthnStorage(db, { clock: () => now }).sessions, advance: (s) => { now += s; }, now: () => now };
    });

    it('runs its migrations once and leaves email and phone non-unique', async () => {
      const again = await openDatabase(scratch.options, authnSchema, { logger });
      await again.close();
      const rows = await db.execute<{ name: string }>('select name from authn_migrations order by name');
      expect(rows.map((r) => r.name)).toEqual(['0000_authn_outbox', '0001_authn_users', '0002_authn_sessions', '0003_authn_login_failures', '0004_authn_verification_requests']);
    });
  });
}
