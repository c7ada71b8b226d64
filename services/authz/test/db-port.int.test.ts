/**
 * @module db-port.int.test: the production adapter (@gatehouse/db through db-port.ts, migrations included) passes the
 * storage conformance suite and the OpenFGA conformance data on SQLite, PostgreSQL and MariaDB (STYLE §8).
 */
import { createRequire } from 'node:module';
import { describe, it, expect } from '@jest/globals';
import { createScratchDatabase, openDatabase, sqliteDataVersion } from '@gatehouse/db';
import { createLogger } from '@gatehouse/observability';
import { fgaMigrations, sqlPortOf } from '../src/storage/sql/db-port.ts';
import { createSqlStore, type SqlPort } from '../src/storage/sql/store.ts';
import { runStorageSuite } from '../src/storage/ports.suite.ts';
import { describeConformance } from './conformance.ts';

/** `port` whose prepared reads call `onRead(sql)` on every run. */
function countingPrepared(port: SqlPort, onRead: (sql: string) => void): SqlPort {
  return { ...port, prepare: (sql) => {
    const read = port.prepare!(sql);
    return (params) => {
      onRead(sql);
      return read(params);
    };
  } };
}

for (const type of ['sqlite', 'postgres', 'mariadb'] as const) {
  const open = async () => {
    const scratch = await createScratchDatabase(type);
    const db = await openDatabase(scratch.options, { service: 'authz', entities: [], migrations: fgaMigrations }, { logger: createLogger('silent') });
    return {
      // on SQLite as in production: the revision is remembered until another process commits
      store: createSqlStore(sqlPortOf(db), { externalVersion: type === 'sqlite' ? sqliteDataVersion(scratch.options.url!) : null }),
      close: async () => {
        await db.close();
        await scratch.drop();
      },
    };
  };
  runStorageSuite(`@gatehouse/db adapter on ${type}`, open);
  describeConformance(`@gatehouse/db adapter on ${type}`, open);

  it(`${type}: reads the revision through a prepared statement, answering what the ORM connection answers`, async () => {
    const scratch = await createScratchDatabase(type);
    const db = await openDatabase(scratch.options, { service: 'authz', entities: [], migrations: fgaMigrations }, { logger: createLogger('silent') });
    try {
      const port = sqlPortOf(db);
      let prepared = 0;
      let writes = 0;
      const store = createSqlStore(countingPrepared(port, (sql) => {
        if (sql.startsWith('SELECT revision')) prepared++;
        else writes++;
      }));
      const viaOrm = createSqlStore({ ...port, prepare: undefined });
      const r0 = await viaOrm.revision();
      expect(await store.revision()).toBe(r0);
      await store.writeTuples([{ user: 'user:ada', relation: 'viewer', object: 'doc:1' }], []);
      await viaOrm.appendModel({ id: '01J00000000000000000000001', dsl: 'model\n  schema 1.1\ntype user' });
      expect(await viaOrm.revision()).toBe(r0 + 2);
      expect(await store.revision()).toBe(r0 + 2);
      // a BIGINT past 2^32 comes back as the same number on both paths
      await db.execute('UPDATE fga_revision SET revision = ? WHERE id = 1', [2 ** 40 + 7]);
      expect(await store.revision()).toBe(2 ** 40 + 7);
      expect(await viaOrm.revision()).toBe(2 ** 40 + 7);
      // no revision row: both read 0
      await db.execute('DELETE FROM fga_revision');
      expect(await store.revision()).toBe(0);
      expect(await viaOrm.revision()).toBe(0);
      expect(prepared).toBe(4);
      // on PostgreSQL a call that only writes is one prepared statement (revision, tuples, change log, outbox)
      expect(writes).toBe(type === 'postgres' ? 1 : 0);
    } finally {
      await db.close();
      await scratch.drop();
    }
  });
}

describe('SQLite: the remembered revision (PRAGMA data_version)', () => {
  it('queries the revision once while nothing changes, and again after an own write or another process\'s commit', async () => {
    const scratch = await createScratchDatabase('sqlite');
    const db = await openDatabase(scratch.options, { service: 'authz', entities: [], migrations: fgaMigrations }, { logger: createLogger('silent') });
    try {
      const port = sqlPortOf(db);
      let reads = 0;
      // the revision is read through the prepared statement (issue 22 §1): count those reads
      const counting = countingPrepared(port, (sql) => {
        if (sql.startsWith('SELECT revision FROM fga_revision')) reads++;
      });
      const store = createSqlStore(counting, { externalVersion: sqliteDataVersion(scratch.options.url!) });
      expect(store.knownRevision!()).toBeNull(); // nothing read yet: only a query can tell
      const r0 = await store.revision();
      expect(store.knownRevision!()).toBe(r0);
      expect(await store.revision()).toBe(r0);
      expect(await store.revision()).toBe(r0);
      expect(reads).toBe(1);

      await store.appendModel({ id: '01J00000000000000000000000', dsl: 'model\n  schema 1.1\ntype user' });
      expect(store.knownRevision!()).toBeNull(); // an own write: read again
      expect(await store.revision()).toBe(r0 + 1);
      expect(store.knownRevision!()).toBe(r0 + 1);

      // another process: its own connection to the file
      const Sqlite = createRequire(import.meta.url)('better-sqlite3') as new (file: string) => { exec(sql: string): void; close(): void };
      const other = new Sqlite(scratch.options.url!);
      other.exec('UPDATE fga_revision SET revision = revision + 5 WHERE id = 1');
      other.close();
      await new Promise((r) => setImmediate(r)); // the version is read once per event-loop turn
      expect(store.knownRevision!()).toBeNull(); // another process committed
      expect(await store.revision()).toBe(r0 + 6);
      const before = reads;
      expect(await store.revision()).toBe(r0 + 6);
      expect(reads).toBe(before);
    } finally {
      await db.close();
      await scratch.drop();
    }
  });
});
