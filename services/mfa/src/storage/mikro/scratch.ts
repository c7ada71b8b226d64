/**
 * @module @gatehouse/mfa/storage/mikro/scratch
 * Opens the MikroORM {@link MfaStore} on a throwaway database of one type, for the conformance
 * suite's runs (SQLite in the unit run, PostgreSQL and MariaDB in the integration run).
 */
import { openScratchService, type DatabaseType } from '@gatehouse/db';
import type { MfaStoreHandle } from '../ports.suite.ts';
import { mfaSchema } from './schema.ts';
import { createMikroMfaStore } from './store.ts';

/**
 * Creates a fresh database of `type`, migrates it and builds the store on it.
 * @param clock Unix seconds, stamped on outbox envelopes
 * @returns the suite's handle: `outbox()` reads `mfa_outbox` in `seq` order; `close()` drops the database
 */
export async function openScratchMfaStore(type: DatabaseType, clock: () => number): Promise<MfaStoreHandle> {
  const scratch = await openScratchService(type, mfaSchema);
  return { store: createMikroMfaStore(scratch.db, clock), outbox: () => scratch.outbox(), close: () => scratch.close() };
}
