/** @module @gatehouse/db/concurrent.test — two opens racing on an empty database apply each migration once. */
import { describe, it, expect } from '@jest/globals';
import { createLogger } from '@gatehouse/observability';
import { openDatabase, createScratchDatabase } from './index.ts';
import type { DatabaseType } from './index.ts';
import { testSchema } from './test-schema.ts';

const logger = createLogger('silent');
const types: DatabaseType[] = ['sqlite', 'postgres', 'mariadb'];

describe.each(types)('concurrent first open on %s', (type) => {
  it('three services-worth of opens at once: no error, each migration recorded once', async () => {
    const scratch = await createScratchDatabase(type);
    try {
      const dbs = await Promise.all([1, 2, 3].map(() => openDatabase(scratch.options, testSchema, { logger })));
      const rows = await dbs[0]!.execute<{ name: string }>('select name from dbtest_migrations order by name');
      expect(rows.map((r) => r.name)).toEqual(['0000_dbtest_outbox', '0000_dbtest_outbox_trace_parent', '0001_notes', '0002_notes_body_idx']);
      await Promise.all(dbs.map((d) => d.close()));
    } finally {
      await scratch.drop();
    }
  });
});

describe('two services on one SQLite file in one process (all-in-one)', () => {
  it('interleaved transactions that await mid-way all commit (no SQLITE_BUSY, no nested BEGIN)', async () => {
    const scratch = await createScratchDatabase('sqlite');
    const other = { ...testSchema, service: 'dbtest2', migrations: [] };
    const [a, b] = await Promise.all([openDatabase(scratch.options, testSchema, { logger }), openDatabase(scratch.options, other, { logger })]);
    try {
      const work = (db: typeof a, i: number) =>
        db.transactional(async (em) => {
          db.outbox.enqueue(em, { id: crypto.randomUUID(), name: 'x.y', source: db.service, occurredAt: i, data: {} });
          await em.flush();
          await new Promise((r) => setTimeout(r, 2)); // hold the write transaction across an await
          db.outbox.enqueue(em, { id: crypto.randomUUID(), name: 'x.z', source: db.service, occurredAt: i, data: {} });
        });
      await Promise.all(Array.from({ length: 20 }, (_, i) => [work(a, i), work(b, i)]).flat());
      expect(await a.execute('select seq from dbtest_outbox')).toHaveLength(40);
      expect(await b.execute('select seq from dbtest2_outbox')).toHaveLength(40);
    } finally {
      await a.close();
      await b.close();
      await scratch.drop();
    }
  });
});
