/**
 * @module db-port.int.test: the production adapter (@gatehouse/db through db-port.ts, migrations included) passes the
 * storage conformance suite and the OpenFGA conformance data on SQLite, PostgreSQL and MariaDB (STYLE §8).
 */
import { createScratchDatabase, openDatabase } from '@gatehouse/db';
import { createLogger } from '@gatehouse/observability';
import { fgaMigrations, sqlPortOf } from '../src/storage/db-port.ts';
import { createSqlStore } from '../src/storage/sql.ts';
import { runStorageSuite } from '../src/storage/storage.suite.ts';
import { describeConformance } from './conformance.ts';

for (const type of ['sqlite', 'postgres', 'mariadb'] as const) {
  const open = async () => {
    const scratch = await createScratchDatabase(type);
    const db = await openDatabase(scratch.options, { service: 'authz', entities: [], migrations: fgaMigrations }, { logger: createLogger('silent') });
    return {
      store: createSqlStore(sqlPortOf(db)),
      close: async () => {
        await db.close();
        await scratch.drop();
      },
    };
  };
  runStorageSuite(`@gatehouse/db adapter on ${type}`, open);
  describeConformance(`@gatehouse/db adapter on ${type}`, open);
}
