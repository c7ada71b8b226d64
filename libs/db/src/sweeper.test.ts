/**
 * @module @gatehouse/db/sweeper.test — the retention sweeper on each SQL database: expired rows go in
 * small batches, live rows stay, and two replicas sweeping at once delete every row once and fail nothing.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createLogger, createMetricsRegistry } from '@gatehouse/observability';
import { createScratchDatabase, openDatabase, startSweeper, SWEPT_METRIC, type Database, type RetentionRule, type ScratchDatabase } from './index.ts';
import { testSchema } from './test-schema.ts';

const logger = createLogger('silent');
const NOW = 1_800_000_000;
/** a note "expires" 100 s after it was created */
const RULE: RetentionRule = { table: 'dbtest_notes', key: 'id', expired: { column: 'created_at', before: (now) => now - 100 } };

describe.each(['sqlite', 'postgres', 'mariadb'] as const)('startSweeper (%s)', (type) => {
  let scratch: ScratchDatabase;
  let db: Database;
  let other: Database;
  beforeAll(async () => {
    scratch = await createScratchDatabase(type);
    db = await openDatabase(scratch.options, testSchema, { logger });
    other = await openDatabase(scratch.options, testSchema, { logger });
  }, 60_000);
  afterAll(async () => {
    await other?.close();
    await db?.close();
    await scratch?.drop();
  });

  const plant = async (expired: number, live: number): Promise<string[]> => {
    await db.execute('delete from dbtest_notes');
    const liveIds: string[] = [];
    const rows: Array<[string, string, number]> = [];
    for (let i = 0; i < expired; i += 1) rows.push([randomUUID(), `old ${i}`, NOW - 101 - i]);
    for (let i = 0; i < live; i += 1) {
      const id = randomUUID();
      liveIds.push(id);
      rows.push([id, `live ${i}`, NOW - 100 + i]);
    }
    for (let i = 0; i < rows.length; i += 200) {
      const chunk = rows.slice(i, i + 200);
      await db.execute(`insert into dbtest_notes (id, body, created_at) values ${chunk.map(() => '(?, ?, ?)').join(', ')}`, chunk.flat());
    }
    return liveIds;
  };
  const ids = async (): Promise<string[]> => (await db.execute<{ id: string }>('select id from dbtest_notes order by id')).map((r) => r.id);
  const swept = async (registry: ReturnType<typeof createMetricsRegistry>): Promise<number> =>
    (await registry.getSingleMetric(SWEPT_METRIC)!.get()).values.filter((v) => v.labels.table === 'dbtest_notes').reduce((a, v) => a + v.value, 0);

  it('deletes the expired rows in batches and keeps the live ones; the metric counts them', async () => {
    const live = await plant(250, 5);
    const registry = createMetricsRegistry();
    const s = startSweeper({ db, rules: [RULE], logger, registry, intervalMs: 3_600_000, batchSize: 40, maxBatches: 3, clock: () => NOW });
    // at most maxBatches × batchSize per pass: a backlog drains over passes
    expect(await s.sweep()).toEqual({ dbtest_notes: 120 });
    expect(await s.sweep()).toEqual({ dbtest_notes: 120 });
    expect(await s.sweep()).toEqual({ dbtest_notes: 10 });
    expect(await s.sweep()).toEqual({ dbtest_notes: 0 });
    await s.stop();
    expect(await ids()).toEqual([...live].sort());
    expect(await swept(registry)).toBe(250);
  });

  it('two replicas sweeping at once delete every expired row once and fail nothing', async () => {
    const live = await plant(600, 3);
    const registry = createMetricsRegistry();
    const warnings: unknown[] = [];
    const watching = createLogger('warn', { write: (line: string) => void warnings.push(line) } as unknown as NodeJS.WritableStream);
    const a = startSweeper({ db, rules: [RULE], logger: watching, registry, intervalMs: 3_600_000, batchSize: 50, clock: () => NOW });
    const b = startSweeper({ db: other, rules: [RULE], logger: watching, registry, intervalMs: 3_600_000, batchSize: 50, clock: () => NOW });
    const [ra, rb] = await Promise.all([a.sweep(), b.sweep()]);
    await Promise.all([a.stop(), b.stop()]);
    expect(ra.dbtest_notes! + rb.dbtest_notes!).toBe(600);
    expect(await swept(registry)).toBe(600);
    expect(warnings).toEqual([]);
    expect(await ids()).toEqual([...live].sort());
  }, 60_000);

  it('sweeps on its own every intervalMs', async () => {
    const live = await plant(3, 1);
    const s = startSweeper({ db, rules: [RULE], logger, registry: createMetricsRegistry(), intervalMs: 20, clock: () => NOW });
    const end = Date.now() + 5000;
    while ((await ids()).length > 1 && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
    await s.stop();
    expect(await ids()).toEqual(live);
  });
});
