/** @module authz/storage/sql/store.test: the SQL store on SQLite (better-sqlite3) passes the storage conformance suite. */
import { describe, it, expect } from '@jest/globals';
import { openSqlite } from '../../../test/sql-adapters.ts';
import { createSqlStore, fgaSchemaStatements, isDuplicateColumn } from './store.ts';
import { runStorageSuite } from '../ports.suite.ts';

runStorageSuite('sqlite', async () => {
  const db = await openSqlite();
  return { store: createSqlStore(db.port), close: db.close };
});

describe('SQL store: rows from before the write-time columns (migration 0005_fga_write_times)', () => {
  it('the schema statements run again on a database that has the columns; a row without a write time reads as null', async () => {
    const db = await openSqlite();
    try {
      for (const sql of fgaSchemaStatements('sqlite')) {
        await db.port.execute(sql).catch((err: unknown) => {
          if (!isDuplicateColumn(err)) throw err;
        });
      }
      await db.port.execute("INSERT INTO fga_tuples (tuple_key, object_type, object_id, relation, subject) VALUES ('k', 'doc', '1', 'viewer', 'user:old')");
      await db.port.execute("INSERT INTO fga_changes (revision, op, subject, relation, object_type, object_id) VALUES (1, 'write', 'user:old', 'viewer', 'doc', '1')");
      const store = createSqlStore(db.port);
      await store.writeTuples([{ user: 'user:new', relation: 'viewer', object: 'doc:1' }], []);
      const page = await store.readPage({}, 0, 10);
      expect(page.tuples.map((t) => [t.user, t.writtenAt === null ? null : typeof t.writtenAt])).toEqual([['user:old', null], ['user:new', 'number']]);
      const changes = await store.readChanges(0, await store.revision());
      expect(changes.map((c) => [c.tuple?.user, c.at === null ? null : typeof c.at])).toEqual([['user:old', null], ['user:new', 'number']]);
    } finally {
      await db.close();
    }
  });
});

describe('SQL store: the revision kept in memory under a notification version (issue 22 §1, issue 38)', () => {
  it('a revision read that started before a notification and answers after a newer read is not kept', async () => {
    const db = await openSqlite();
    try {
      let version = 1;
      // the revision reads of this replica, each held until the test releases it (answers out of order,
      // as two pool connections can)
      const held: Array<() => void> = [];
      let hold = false;
      const port = {
        ...db.port,
        prepare: (sql: string) => async (params: unknown[]) => {
          const rows = await db.port.execute(sql, params);
          if (hold) await new Promise<void>((resolve) => held.push(resolve));
          return rows;
        },
      };
      const replica = createSqlStore(port, { externalVersion: () => version });
      const other = createSqlStore(db.port); // another replica, writing
      const r0 = await replica.revision();
      version++; // something was written (its notification), so the next read goes to the database
      hold = true;
      const early = replica.revision(); // reads r0 now, answers later
      await new Promise((resolve) => setImmediate(resolve));
      hold = false;
      await other.writeTuples([{ user: 'user:anne', relation: 'viewer', object: 'doc:1' }], []);
      version++; // the write's notification
      const r1 = await replica.revision(); // reads after the write
      expect(r1).toBeGreaterThan(r0);
      held.shift()!();
      expect(await early).toBe(r0);
      // the late answer must not replace the newer one under the current version
      expect(await replica.revision()).toBe(r1);
      expect(replica.knownRevision!()).toBe(r1);
    } finally {
      await db.close();
    }
  });
});
