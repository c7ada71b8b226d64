/**
 * @module @gatehouse/admin/storage/mikro/scratch
 * Opens the MikroORM {@link AdminStore} on a throwaway database of one type, for the conformance
 * suite's runs (SQLite in the unit run, PostgreSQL and MariaDB in the integration run).
 */
import type { Envelope } from '@gatehouse/bus';
import { createScratchDatabase, openDatabase, type DatabaseType } from '@gatehouse/db';
import { createLogger } from '@gatehouse/observability';
import type { AdminStoreHandle } from '../ports.suite.ts';
import { adminSchema } from './schema.ts';
import { createMikroAdminStore } from './store.ts';

interface OutboxRow { id: string; name: string; source: string; occurred_at: number | string; data: string }

/** Creates a fresh database of `type`, migrates it and builds the store on it; `close()` drops it. */
export async function openScratchAdminStore(type: DatabaseType, clock: () => number): Promise<AdminStoreHandle> {
  const scratch = await createScratchDatabase(type);
  const db = await openDatabase(scratch.options, adminSchema, { logger: createLogger('silent') });
  return {
    store: createMikroAdminStore(db, clock),
    async outbox() {
      const rows = await db.execute<OutboxRow>(`select id, name, source, occurred_at, data from ${db.outbox.table} order by seq`);
      return rows.map((r): Envelope => ({ id: r.id, name: r.name, source: r.source, occurredAt: Number(r.occurred_at), data: JSON.parse(r.data) as unknown }));
    },
    async close() {
      await db.close();
      await scratch.drop();
    },
  };
}
