/**
 * @module @gatehouse/admin/storage/mikro/scratch
 * Opens the MikroORM {@link AdminStore} on a throwaway database of one type, for the conformance
 * suite's runs (SQLite in the unit run, PostgreSQL and MariaDB in the integration run).
 */
import { openScratchService, type DatabaseType } from '@gatehouse/db';
import type { AdminStoreHandle } from '../ports.suite.ts';
import { adminSchema } from './schema.ts';
import { createMikroAdminStore } from './store.ts';

/**
 * Creates a fresh database of `type`, migrates it and builds the store on it.
 * @param clock Unix seconds, stamped on outbox envelopes
 * @returns the suite's handle: `outbox()` reads `admin_outbox` in `seq` order; `close()` drops the database
 */
export async function openScratchAdminStore(type: DatabaseType, clock: () => number): Promise<AdminStoreHandle> {
  const scratch = await openScratchService(type, adminSchema);
  return { store: createMikroAdminStore(scratch.db, clock), outbox: () => scratch.outbox(), close: () => scratch.close() };
}
