/** @module mikro/store.test: the MikroORM DeliveryStore on SQLite passes the conformance suite. */
import { createScratchDatabase, openDatabase } from '@gatehouse/db';
import { createLogger } from '@gatehouse/observability';
import { describeDeliveryStore } from '../storage.suite.ts';
import { notificationsSchema } from './schema.ts';
import { createMikroDeliveryStore } from './store.ts';

describeDeliveryStore('MikroORM on sqlite', async () => {
  const scratch = await createScratchDatabase('sqlite');
  const db = await openDatabase(scratch.options, notificationsSchema, { logger: createLogger('silent') });
  return {
    store: createMikroDeliveryStore(db),
    async close() {
      await db.close();
      await scratch.drop();
    },
  };
});
