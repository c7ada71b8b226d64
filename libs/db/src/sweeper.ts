/**
 * @module @gatehouse/db/sweeper
 * The retention sweeper (issue 23): one per service, it deletes the rows of the service's tables that
 * have outlived their use (expired sessions, codes, challenges, lockout windows, old delivery
 * records), by the service's declared {@link RetentionRule}s, on a period.
 *
 * Each pass selects at most `batchSize` primary keys of expired rows, then deletes exactly those rows
 * *and only while they are still expired* (the rule's condition is repeated in the `delete`), by
 * primary key: no statement holds more than one batch of row locks, and a row renewed in between is
 * kept. Replicas need no leader: two sweepers that pick the same rows both issue the delete, the
 * database removes each row once, and each counts only the rows its own statement removed
 * (the driver's affected-row count), so `gatehouse_retention_rows_swept_total` counts every row once.
 */
import type { EntityManager } from '@mikro-orm/core';
import { Counter, type Registry } from 'prom-client';
import { dependencyState, type Logger } from '@gatehouse/observability';
import { quoteIdentifier } from './ddl.ts';
import { startPeriodic } from './periodic.ts';
import type { Database } from './types.ts';

export const SWEPT_METRIC = 'gatehouse_retention_rows_swept_total';

/** One table's retention: which of its rows may go. */
export interface RetentionRule {
  /** the table, owned by the sweeping service */
  readonly table: string;
  /** its primary key column (a single column) */
  readonly key: string;
  /**
   * The condition of an expired row at `now` (Unix seconds): SQL over the table's columns with `?`
   * placeholders and their values. Example: `{ where: 'expires_at < ?', params: [now] }`.
   */
  expired(now: number): { where: string; params: unknown[] };
}

export interface SweeperOptions {
  db: Database;
  rules: readonly RetentionRule[];
  logger: Logger;
  /** the process registry; the counter is registered once per registry */
  registry: Registry;
  /** period between passes in ms (default 60 000); the first pass runs one period after start */
  intervalMs?: number;
  /** rows per statement (default 500) */
  batchSize?: number;
  /** batches per table per pass (default 20): a large backlog drains over several passes */
  maxBatches?: number;
  /** Unix seconds (default the wall clock) */
  clock?: () => number;
}

export interface Sweeper {
  /** runs one pass now (after the one in progress); resolves with the rows this pass deleted per table */
  sweep(): Promise<Record<string, number>>;
  /** stops the period and waits for the pass in progress */
  stop(): Promise<void>;
}

/** `gatehouse_retention_rows_swept_total{service,table}` on `registry`, created once. */
export function sweptCounter(registry: Registry): Counter<'service' | 'table'> {
  const existing = registry.getSingleMetric(SWEPT_METRIC);
  if (existing) return existing as Counter<'service' | 'table'>;
  return new Counter({
    name: SWEPT_METRIC,
    help: 'Rows deleted by the retention sweeper, by service and table (each row counted once across replicas)',
    labelNames: ['service', 'table'] as const,
    registers: [registry],
  });
}

/** The affected-row count of a `run` statement, across the drivers' result shapes. */
function affected(res: unknown): number {
  const r = res as { affectedRows?: unknown; changes?: unknown; rowCount?: unknown } | null;
  return Number(r?.affectedRows ?? r?.changes ?? r?.rowCount ?? 0);
}

/**
 * Starts the period of sweeping `opts.rules` on `opts.db` (SQL databases: the statements are raw
 * SQL through the database's connection). A failing pass is logged once when the failure starts
 * (dependency state) and retried next period; it never throws.
 */
export function startSweeper(opts: SweeperOptions): Sweeper {
  const { db, rules } = opts;
  const intervalMs = opts.intervalMs ?? 60_000;
  const batchSize = Math.max(1, Math.floor(opts.batchSize ?? 500));
  const maxBatches = Math.max(1, Math.floor(opts.maxBatches ?? 20));
  const clock = opts.clock ?? (() => Math.floor(Date.now() / 1000));
  const q = (n: string): string => quoteIdentifier(db.type, n);
  const counter = sweptCounter(opts.registry);
  const log = opts.logger.child({ component: 'retention sweeper', service: db.service });
  const database = dependencyState(log, 'database', `${db.service} retention`);

  async function sweepRule(em: EntityManager, rule: RetentionRule, now: number): Promise<number> {
    const conn = em.getConnection() as unknown as { execute(sql: string, params: unknown[], method: 'all' | 'run'): Promise<unknown> };
    const table = q(rule.table);
    const key = q(rule.key);
    const { where, params } = rule.expired(now);
    let total = 0;
    for (let batch = 0; batch < maxBatches && !loop.stopped; batch += 1) {
      const rows = (await conn.execute(`select ${key} as k from ${table} where ${where} order by ${key} limit ${batchSize}`, params, 'all')) as Array<{ k: unknown }>;
      if (rows.length === 0) break;
      const keys = rows.map((r) => r.k);
      const res = await conn.execute(`delete from ${table} where ${key} in (${keys.map(() => '?').join(', ')}) and (${where})`, [...keys, ...params], 'run');
      const n = affected(res);
      total += n;
      if (n > 0) counter.inc({ service: db.service, table: rule.table }, n);
      if (rows.length < batchSize) break;
    }
    return total;
  }

  async function pass(): Promise<Record<string, number>> {
    const out: Record<string, number> = {};
    const now = clock();
    const em = db.fork();
    try {
      for (const rule of rules) out[rule.table] = await sweepRule(em, rule, now);
      database.up();
    } catch (err) {
      database.down(err);
    }
    const swept = Object.values(out).reduce((a, b) => a + b, 0);
    if (swept > 0) log.debug({ swept: out }, 'retention sweep');
    return out;
  }

  const loop = startPeriodic(pass, intervalMs, {} as Record<string, number>);
  return { sweep: loop.run, stop: loop.stop };
}
