/** @module storage.int.test: the MikroORM DeliveryStore on the machine's PostgreSQL and MariaDB (fresh database each). */
import { createScratchDatabase, openDatabase, type DatabaseType } from '@gatehouse/db';
import { createLogger } from '@gatehouse/observability';
import { describeDeliveryStore } from '../src/storage/storage.suite.ts';
import { notificationsSchema } from '../src/storage/mikro/schema.ts';
import { createMikroDeliveryStore } from '../src/storage/mikro/store.ts';

for (const type of ['postgres', 'mariadb'] as DatabaseType[]) {
  describeDeliveryStore(`MikroORM on ${type}`, async () => {
    const scratch = await createScratchDatabase(type);
    const db = await openDatabase(scratch.options, notificationsSchema, { logger: createLogger('silent') });
    return {
      store: createMikroDeliveryStore(db),
      async close() {
        await db.close();
        await scratch.drop();
      },
    };
  });
}
