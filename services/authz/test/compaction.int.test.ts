/**
 * @module compaction.int.test
 * Issue 32 §3, "authz's change log compacted once no replica needs it", on SQLite, PostgreSQL and MariaDB:
 * replicas (engines on one store) report the revision their snapshot applied; compaction deletes the change
 * log below the lowest live report, keeps the safety floor, ignores a replica that stopped reporting, and
 * is bounded by the ceiling; a replica further behind than what is kept reloads its snapshot and answers
 * as a fresh one.
 */
import { describe, expect, it } from '@jest/globals';
import { createLogger } from '@gatehouse/observability';
import { createEngine, type Engine } from '../src/domain/index.ts';
import { startChangeLogCompaction } from '../src/storage/compaction.ts';
import { createSqlStore } from '../src/storage/sql/store.ts';
import type { TestDatabase } from './sql-adapters.ts';
import { openMysql, openPostgres, openSqlite } from './sql-adapters.ts';

const MODEL = `model
  schema 1.1
type user
type doc
  relations
    define viewer: [user]
`;

const logger = createLogger('error');
const viewer = (i: number) => ({ user: `user:u${i}`, relation: 'viewer', object: `doc:${i}` });

/** The revisions the change log still holds, lowest first. */
async function logged(db: TestDatabase): Promise<number[]> {
  const rows = await db.port.execute('SELECT DISTINCT revision FROM fga_changes ORDER BY revision');
  return rows.map((r) => Number(r.revision));
}

/** A replica: an engine on its own store object over the shared database, and its compaction (floor 5 revisions). */
function replica(db: TestDatabase, clock: () => number) {
  const store = createSqlStore(db.port);
  const engine: Engine = createEngine({ store });
  const compaction = startChangeLogCompaction({
    store, logger, now: clock, floor: 5, ceiling: 40, intervalMs: 3_600_000,
    applied: () => (engine.stats().full_loads > 0 ? engine.stats().revision : null),
  });
  return { store, engine, compaction };
}

for (const [name, open] of [['sqlite', openSqlite], ['postgres', openPostgres], ['mariadb', openMysql]] as Array<[string, () => Promise<TestDatabase>]>) {
  describe(`change log compaction on ${name}`, () => {
    it('deletes below the lowest live replica, keeps the floor, forgets a dead replica, and a replica left behind reloads', async () => {
      const db = await open();
      let clock = 1_000_000;
      const now = () => clock;
      const a = replica(db, now);
      const b = replica(db, now);
      try {
        await a.engine.writeModel(MODEL);
        await a.engine.writeTuples([viewer(0)]);
        await a.engine.warm();
        await b.engine.warm();
        const r0 = await a.store.revision();
        expect(b.engine.stats().revision).toBe(r0);

        // both report r0; a writes 20 revisions that b has not seen yet
        await b.compaction.run();
        for (let i = 1; i <= 20; i++) await a.engine.writeTuples([viewer(i)]);
        const r1 = await a.store.revision();
        expect(r1).toBe(r0 + 20);
        // b still needs everything after r0: nothing it needs goes, though a is at r1
        const first = await a.compaction.run();
        expect(first).toEqual({ horizon: r0, deleted: expect.any(Number) });
        expect((await logged(db))[0]).toBe(r0 + 1);

        // b catches up from the log (no full load) and reports: now only the floor is kept
        expect((await b.engine.check('user:u20', [{ relation: 'viewer', object: 'doc:20' }]))[0]?.allowed).toBe(true);
        expect(b.engine.stats()).toMatchObject({ revision: r1, full_loads: 1, catch_ups: 1 });
        await b.compaction.run();
        const second = await a.compaction.run();
        expect(second?.horizon).toBe(r1 - 5);
        expect(await logged(db)).toEqual([r1 - 4, r1 - 3, r1 - 2, r1 - 1, r1]);

        // b stops reporting (it is gone as far as the others know): after the live window it holds
        // nothing back, a compacts past it, and when b comes back it finds a gap and reloads its snapshot
        clock += 61_000;
        for (let i = 21; i <= 30; i++) await a.engine.writeTuples([viewer(i)]);
        await a.engine.deleteTuples([viewer(3)]);
        const r2 = await a.store.revision();
        await a.compaction.run();
        expect((await logged(db))[0]).toBe(r2 - 4);
        expect((await b.engine.check('user:u30', [{ relation: 'viewer', object: 'doc:30' }]))[0]?.allowed).toBe(true);
        expect((await b.engine.check('user:u3', [{ relation: 'viewer', object: 'doc:3' }]))[0]?.allowed).toBe(false);
        // those checks answered from the store while the reload they started runs in the background
        // (a full load never holds a check up): wait for it, then b is a fresh snapshot at r2, not a catch-up
        await b.engine.warm();
        expect(b.engine.stats()).toMatchObject({ revision: r2, full_loads: 2, catch_ups: 1 });
        const fresh = createEngine({ store: createSqlStore(db.port) });
        for (const user of ['user:u0', 'user:u3', 'user:u25']) {
          expect(await b.engine.listPermissions(user, { relation: 'viewer', object_type: 'doc' })).toEqual(await fresh.listPermissions(user, { relation: 'viewer', object_type: 'doc' }));
        }

        // a live replica that stays behind holds the log back only up to the ceiling (40 revisions)
        await b.compaction.run(); // b reports r2 at the current time
        for (let i = 31; i <= 80; i++) await a.engine.writeTuples([viewer(i)]);
        const r3 = await a.store.revision();
        const capped = await a.compaction.run();
        expect(capped?.horizon).toBe(r3 - 40);
        expect((await logged(db))[0]).toBe(r3 - 39);

        // a replica that stops forgets its report; reports older than a day are deleted
        await b.compaction.stop();
        const reports = await db.port.execute('SELECT replica_id FROM fga_replicas');
        expect(reports.map((r) => String(r.replica_id))).toEqual([a.compaction.replicaId]);
        clock += 25 * 3600_000;
        const c = replica(db, now);
        await c.engine.warm();
        await c.compaction.run();
        expect((await db.port.execute('SELECT replica_id FROM fga_replicas')).map((r) => String(r.replica_id))).toEqual([c.compaction.replicaId]);
        await c.compaction.stop();
      } finally {
        await a.compaction.stop();
        await b.compaction.stop();
        await db.close();
      }
    });
  });
}
