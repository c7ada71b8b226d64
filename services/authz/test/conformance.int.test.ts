/** @module conformance.int.test: the YAML conformance data against PostgreSQL and MariaDB (fresh database per case, dropped after), checks also through the partial index. */
import { createSqlStore } from '../src/storage/sql/store.ts';
import { describeConformance } from './conformance.ts';
import { openMysql, openPostgres } from './sql-adapters.ts';

describeConformance('postgres', async () => {
  const db = await openPostgres();
  return { store: createSqlStore(db.port), close: db.close };
});
describeConformance('mariadb', async () => {
  const db = await openMysql();
  return { store: createSqlStore(db.port), close: db.close };
});

// the same checks answered while the full snapshot load is held open (issue 22 §3)
describeConformance('postgres', async () => {
  const db = await openPostgres();
  return { store: createSqlStore(db.port), close: db.close };
}, { partial: true });
describeConformance('mariadb', async () => {
  const db = await openMysql();
  return { store: createSqlStore(db.port), close: db.close };
}, { partial: true });
