/**
 * @module @gatehouse/orgs/storage/mikro/scratch
 * Opens the MikroORM {@link OrgsStore} on a throwaway database of one type, for the conformance
 * suite's runs (SQLite in the unit run, PostgreSQL and MariaDB in the integration run).
 */
import { openScratchService, type DatabaseType } from '@gatehouse/db';
import type { OrgsStoreHandle } from '../ports.suite.ts';
import { orgsSchema } from './schema.ts';
import { createMikroOrgsStore } from './store.ts';

/**
 * Creates a fresh database of `type`, migrates it and builds the store on it.
 * @param clock Unix seconds, stamped on outbox envelopes
 * @returns the suite's handle: `outbox()` reads `orgs_outbox` in `seq` order; `close()` drops the database
 */
export async function openScratchOrgsStore(type: DatabaseType, clock: () => number): Promise<OrgsStoreHandle> {
  const scratch = await openScratchService(type, orgsSchema);
  return { store: createMikroOrgsStore(scratch.db, clock), outbox: () => scratch.outbox(), close: () => scratch.close() };
}
