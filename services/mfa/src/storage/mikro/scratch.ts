/**
 * @module @gatehouse/mfa/storage/mikro/scratch
 * Opens the MikroORM {@link MfaStore} on a throwaway database of one type, for the conformance
 * suite's runs (SQLite in the unit run, PostgreSQL and MariaDB in the integration run).
 */
import type { Envelope } from '@gatehouse/bus';
import { createScratchDatabase, openDatabase, type DatabaseType } from '@gatehouse/db';
import { createLogger } from '@gatehouse/observability';
import type { MfaStoreHandle } from '../ports.suite.ts';
import { mfaSchema } from './schema.ts';
import { createMikroMfaStore } from './store.ts';

interface OutboxRow {
  id: string;
  name: string;
  source: string;
  occurred_at: number | string;
  data: string;
}

/**
 * Creates a fresh database of `type`, migrates it and builds the store on it.
 * @param clock Unix seconds, stamped on outbox envelopes
 * @returns the suite's handle: `outbox()` reads `mfa_outbox` in `seq` order; `close()` drops the database
 */
export async function openScratchMfaStore(type: DatabaseType, clock: () => number): Promise<MfaStoreHandle> {
  const scratch = await createScratchDatabase(type);
  const db = await openDatabase(scratch.options, mfaSchema, { logger: createLogger('silent') });
  return {
    store: createMikroMfaStore(db, clock),
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
