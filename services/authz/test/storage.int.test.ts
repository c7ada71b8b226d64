/** @module storage.int.test: the SQL store on PostgreSQL and MariaDB passes the storage conformance suite (fresh database per test). */
import { createSqlStore } from '../src/storage/sql/store.ts';
import { runStorageSuite } from '../src/storage/ports.suite.ts';
import { openMysql, openPostgres } from './sql-adapters.ts';

runStorageSuite('postgres', async () => {
  const db = await openPostgres();
  return { store: createSqlStore(db.port), close: db.close };
});

runStorageSuite('mariadb', async () => {
  const db = await openMysql();
  return { store: createSqlStore(db.port), close: db.close };
});
