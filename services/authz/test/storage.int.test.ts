/** @module storage.int.test: the SQL store on PostgreSQL and MariaDB passes the storage conformance suite (fresh database per test), for Gatehouse's store and for a store created through the OpenFGA API. */
import { createSqlStore } from '../src/storage/sql/store.ts';
import { createSqlCatalog } from '../src/storage/sql/catalog.ts';
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

// the OpenFGA API's created stores (issue 36 §1, the fga_store_* tables), rows of Gatehouse's store and of another store around them
for (const [name, openDb] of [['postgres', openPostgres], ['mariadb', openMysql]] as const) {
  runStorageSuite(`${name}, a created store (fga_store_* tables)`, async () => {
    const db = await openDb();
    const catalog = createSqlCatalog(db.port);
    await createSqlStore(db.port).writeTuples([{ user: 'user:noise', relation: 'r', object: 'doc:noise' }], []);
    await catalog.create({ id: '01KB0000000000000000000002', name: 'other' });
    await catalog.open('01KB0000000000000000000002').writeTuples([{ user: 'user:noise', relation: 'r', object: 'doc:noise' }], []);
    const { id } = await catalog.create({ id: '01KB0000000000000000000001', name: 'suite' });
    return { store: catalog.open(id), close: db.close };
  });
}
