/**
 * @module @gatehouse/db/retention-suite
 * The retention test every service runs for its sweeper rules (issue 23), on SQLite, PostgreSQL,
 * MariaDB and MongoDB (FerretDB v1, the test stand-in): for each swept table it plants expired and
 * live rows, runs two sweepers at once on two connections (two replicas), and checks that the expired
 * rows are gone, the live ones stay, each expired row was counted once and no pass failed.
 * Used by *.test.ts only.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import type { MongoEntityManager } from '@mikro-orm/mongodb';
import { createLogger, createMetricsRegistry } from '@gatehouse/observability';
import { startFerretDb } from '@gatehouse/testing';
import { openDatabase } from './open.ts';
import { createScratchDatabase, type ScratchDatabase } from './scratch.ts';
import { mongoDocument, startSweeper, SWEPT_METRIC, type RetentionRule } from './sweeper.ts';
import type { Database, DatabaseType, ServiceSchema } from './types.ts';

/** Rows to plant in one table: column → value maps; `i` makes each row distinct. */
export interface RetentionPlant {
  expired(i: number, now: number): Record<string, unknown>;
  live(i: number, now: number): Record<string, unknown>;
}

const NOW = 1_800_000_000;
const EXPIRED = 30;
const LIVE = 3;

/** A fresh database of `type`: a scratch SQL database, or a database on a FerretDB server of its own. */
async function scratchOf(type: DatabaseType): Promise<ScratchDatabase> {
  if (type !== 'mongodb') return createScratchDatabase(type);
  const ferret = await startFerretDb();
  return { options: { type, url: ferret.url(`gh_${randomBytes(6).toString('hex')}`) }, drop: () => ferret.stop() };
}

/**
 * Declares the suite. `plants` must name every table of `rules` (the suite fails on a rule without one).
 * Rows are given by SQL column names; on MongoDB they are stored as the service's entities store them
 * (field names, `_id` for the key, values converted by each property's type). MongoDB runs last: opening
 * the entities there changes their key mapping for the rest of the process (`openDatabase`).
 */
export function describeRetention(schema: ServiceSchema, rules: readonly RetentionRule[], plants: Record<string, RetentionPlant>, types: readonly DatabaseType[] = ['sqlite', 'postgres', 'mariadb', 'mongodb']): void {
  describe.each(types)(`${schema.service} retention (%s)`, (type) => {
    let scratch: ScratchDatabase;
    let a: Database;
    let b: Database;
    beforeAll(async () => {
      scratch = await scratchOf(type);
      a = await openDatabase(scratch.options, schema, { logger: createLogger('silent') });
      b = await openDatabase(scratch.options, schema, { logger: createLogger('silent') });
    }, 60_000);
    afterAll(async () => {
      await b?.close();
      await a?.close();
      await scratch?.drop();
    });

    const collection = (rule: RetentionRule) => (a.fork() as unknown as MongoEntityManager).getCollection(rule.table);
    const insert = async (rule: RetentionRule, row: Record<string, unknown>): Promise<void> => {
      if (type === 'mongodb') {
        await collection(rule).insertOne(mongoDocument(a, rule, row));
        return;
      }
      const cols = Object.keys(row);
      await a.execute(`insert into ${rule.table} (${cols.join(', ')}) values (${cols.map(() => '?').join(', ')})`, Object.values(row));
    };
    const clear = async (rule: RetentionRule): Promise<void> => {
      if (type === 'mongodb') await collection(rule).deleteMany({});
      else await a.execute(`delete from ${rule.table}`);
    };
    const keysLeft = async (rule: RetentionRule): Promise<string[]> => type === 'mongodb'
      ? (await collection(rule).find({}, { projection: { _id: 1 } }).toArray()).map((d) => String(d._id))
      : (await a.execute<{ k: unknown }>(`select ${rule.key} as k from ${rule.table}`)).map((r) => String(r.k));

    it('every rule has planted rows', () => {
      expect(rules.map((r) => r.table).filter((t) => !plants[t])).toEqual([]);
    });

    it.each(rules.map((r) => [r.table, r] as const))('%s: two replicas sweeping at once delete the expired rows once each, keep the live ones, fail nothing', async (table, rule) => {
      const plant = plants[table]!;
      await clear(rule);
      const live: string[] = [];
      for (let i = 0; i < EXPIRED; i += 1) await insert(rule, plant.expired(i, NOW));
      for (let i = 0; i < LIVE; i += 1) {
        const row = plant.live(i, NOW);
        live.push(String(row[rule.key]));
        await insert(rule, row);
      }
      const registry = createMetricsRegistry();
      const warnings: string[] = [];
      const logger = createLogger('warn', { write: (line: string) => void warnings.push(line) } as unknown as NodeJS.WritableStream);
      const options = { rules: [rule], logger, registry, intervalMs: 3_600_000, batchSize: 7, clock: () => NOW };
      const [sa, sb] = [startSweeper({ ...options, db: a }), startSweeper({ ...options, db: b })];
      const [ra, rb] = await Promise.all([sa.sweep(), sb.sweep()]);
      await Promise.all([sa.stop(), sb.stop()]);
      expect(warnings).toEqual([]);
      expect(ra[table]! + rb[table]!).toBe(EXPIRED);
      const metric = (await registry.getSingleMetric(SWEPT_METRIC)!.get()).values.filter((v) => v.labels.table === table);
      expect(metric.reduce((n, v) => n + v.value, 0)).toBe(EXPIRED);
      const left = await keysLeft(rule);
      expect(left.sort()).toEqual([...live].sort());
      // on MongoDB the sweeper indexes the compared field (the SQL migrations do it on SQL)
      if (type === 'mongodb') expect((await collection(rule).indexes()).map((i) => Object.keys(i.key).join(','))).toContain(rule.expired.column);
      // a second pass finds nothing more
      const again = startSweeper({ ...options, db: a });
      expect(await again.sweep()).toEqual({ [table]: 0 });
      await again.stop();
    }, 60_000);
  });
}
