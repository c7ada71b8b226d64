import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createScratchDatabase, openDatabase, type Database, type DatabaseType, type ScratchDatabase } from '@gatehouse/db';
import { runSessionStoreSuite } from '@gatehouse/auth/testing';
import { createLogger } from '@gatehouse/observability';
import { DeadlockException } from '@mikro-orm/core';
import { runAuthnStorageSuite, sampleUser } from '../ports.suite.ts';
import { runOAuthStoreSuite } from '../oauth.suite.ts';
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
      for (const t of ['authn_users', 'authn_sessions', 'authn_attempt_slots', 'authn_verification_requests', 'authn_outbox']) await db.execute(`delete from ${t}`);
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

    runOAuthStoreSuite(type, async () => {
      for (const t of ['authn_oauth_clients', 'authn_trusted_issuers', 'authn_authorization_codes', 'authn_used_jtis']) await db.execute(`delete from ${t}`);
      return createMikroAuthnStorage(db).oauth;
    });

    it('runs its migrations once and leaves email and phone non-unique', async () => {
      const again = await openDatabase(scratch.options, authnSchema, { logger });
      await again.close();
      const rows = await db.execute<{ name: string }>('select name from authn_migrations order by name');
      expect(rows.map((r) => r.name)).toEqual(['0000_authn_outbox', '0000_authn_outbox_trace_parent', '0001_authn_users', '0002_authn_sessions', '0003_authn_login_failures', '0004_authn_verification_requests', '0005_authn_session_amr', '0006_authn_oauth', '0007_authn_retention_indexes', '0008_authn_identity_links', '0009_authn_attempt_slots', '0010_authn_consent', '0011_authn_client_registration', '0012_authn_device_authorizations', '0013_authn_logout', '0014_authn_client_require_par', '0015_authn_session_device']);
    });
  });
}

// InnoDB answers two inserts into one locked gap with a deadlock and kills one transaction (MySQL 8.0
// manual §17.7.5); the repository reruns the victim. Simulated here on SQLite: the first runs fail as
// MariaDB's driver reports a deadlock.
describe('UserRepository.transaction when the database kills it as a deadlock victim', () => {
  let scratch: ScratchDatabase;
  let db: Database;
  beforeAll(async () => {
    scratch = await createScratchDatabase('sqlite');
    db = await openDatabase(scratch.options, authnSchema, { logger });
  });
  afterAll(async () => {
    await db?.close();
    await scratch?.drop();
  });

  /** `db` whose first `victimRuns` transactions fail with a deadlock; `runs()` counts every transaction started */
  const losing = (victimRuns: number): { db: Database; runs: () => number } => {
    let runs = 0;
    const transactional: Database['transactional'] = (fn) => {
      runs++;
      if (runs <= victimRuns) return Promise.reject(new DeadlockException(Object.assign(new Error('Deadlock found when trying to get lock; try restarting transaction'), { code: 'ER_LOCK_DEADLOCK' })));
      return db.transactional(fn);
    };
    return { db: { ...db, transactional }, runs: () => runs };
  };

  it('reruns a transaction that lost five deadlocks in a row, and it commits', async () => {
    const { db: flaky, runs } = losing(5);
    const users = createMikroAuthnStorage(flaky).users;
    const u = sampleUser({ email: 'deadlock-5@example.com' });
    await expect(users.transaction(async (tx) => {
      await tx.users.create(u);
      return 'created';
    })).resolves.toBe('created');
    expect(runs()).toBe(6);
    expect((await users.findByEmail('deadlock-5@example.com'))?.id).toBe(u.id);
  });

  it('answers aborted after eight deadlocks in a row, and writes nothing', async () => {
    const { db: flaky, runs } = losing(100);
    const users = createMikroAuthnStorage(flaky).users;
    await expect(users.transaction(async (tx) => tx.users.create(sampleUser({ email: 'deadlock-8@example.com' }))))
      .rejects.toMatchObject({ code: 'aborted', message: 'concurrent update, please retry' });
    expect(runs()).toBe(8);
    expect(await users.findByEmail('deadlock-8@example.com')).toBeNull();
  });
});
