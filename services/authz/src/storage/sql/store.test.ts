/** @module authz/storage/sql/store.test: the SQL store on SQLite (better-sqlite3) passes the storage conformance suite. */
import { openSqlite } from '../../../test/sql-adapters.ts';
import { createSqlStore } from './store.ts';
import { runStorageSuite } from '../ports.suite.ts';

runStorageSuite('sqlite', async () => {
  const db = await openSqlite();
  return { store: createSqlStore(db.port), close: db.close };
});
