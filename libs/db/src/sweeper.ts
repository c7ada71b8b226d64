/**
 * @module @gatehouse/db/sweeper
 * The retention sweeper (issue 23): one per service, it deletes the rows of the service's tables that
 * have outlived their use (expired sessions, codes, challenges, lockout windows, old delivery
 * records), by the service's declared {@link RetentionRule}s, on a period, on every supported
 * database (SQL and MongoDB).
 *
 * Each pass selects at most `batchSize` primary keys of expired rows, then deletes exactly those rows
 * *and only while they are still expired* (the rule's condition is repeated in the `delete`), by
 * primary key: no statement holds more than one batch of row locks, and a row renewed in between is
 * kept. Replicas need no leader: two sweepers that pick the same rows both issue the delete, the
 * database removes each row once, and each counts only the rows its own statement removed
 * (the driver's affected-row count, MongoDB's `deletedCount`), so `gatehouse_retention_rows_swept_total`
 * counts every row once.
 */
import type { EntityManager, EntityMetadata, EntityProperty } from '@mikro-orm/core';
import { Counter, type Registry } from 'prom-client';
import { dependencyState, type Logger } from '@gatehouse/observability';
import { quoteIdentifier } from './ddl.ts';
import { startPeriodic } from './periodic.ts';
import type { Database } from './types.ts';

export const SWEPT_METRIC = 'gatehouse_retention_rows_swept_total';

/** MongoDB's `IndexOptionsConflict`: an index on these keys exists under another name */
const INDEX_OPTIONS_CONFLICT = 85;

/**
 * The condition of an expired row: `column < before(now)` (`now` in Unix seconds), and every column of
 * `isNull` null. Columns are the SQL column names; on MongoDB they are the entities' field names
 * (the same, but for the primary key, which is `_id` there).
 */
export interface RetentionCondition {
  readonly column: string;
  /** the bound at `now` (Unix seconds): rows whose `column` is below it are expired */
  before(now: number): number;
  /** columns that must also be null (SQL `is null`; MongoDB `null` or missing) */
  readonly isNull?: readonly string[];
}

/** One table's retention: which of its rows may go. */
export interface RetentionRule {
  /** the table (MongoDB: collection), owned by the sweeping service */
  readonly table: string;
  /** its primary key column (a single column) */
  readonly key: string;
  /** when a row is expired. Example: `{ column: 'expires_at', before: (now) => now }` */
  readonly expired: RetentionCondition;
}

/**
 * The SQL form of `condition` at `now`: `[<col> is null and …] <column> < ?` and its one parameter,
 * column names as written (they are the service's own, unquoted in its migrations).
 */
export function retentionWhere(condition: RetentionCondition, now: number): { where: string; params: unknown[] } {
  const where = [...(condition.isNull ?? []).map((c) => `${c} is null`), `${condition.column} < ?`].join(' and ');
  return { where, params: [condition.before(now)] };
}

/** How one rule's table is stored on MongoDB: its collection and the condition as a filter. */
interface MongoTarget {
  readonly collection: string;
  /** the index on the compared field (`{ <field>: 1 }`), which the SQL migrations create on SQL */
  readonly index: Record<string, 1>;
  filter(now: number): Record<string, unknown>;
}

/**
 * The entity stored in `rule.table` among the database's entities, and its property stored in `column`
 * (`rule.key` is the primary key, whose field is `_id` on MongoDB).
 */
export function entityColumn(db: Database, rule: Pick<RetentionRule, 'table' | 'key'>, column: string): { meta: EntityMetadata; prop: EntityProperty } {
  const meta = [...db.orm.getMetadata()].find((m) => m.tableName === rule.table);
  if (!meta) throw new Error(`retention: no entity of ${db.service} is stored in ${rule.table}`);
  const prop = column === rule.key && meta.primaryKeys.length === 1
    ? meta.properties[meta.primaryKeys[0]!]
    : meta.props.find((p) => p.fieldNames?.includes(column));
  if (!prop) throw new Error(`retention: no property of ${meta.className} is stored in ${rule.table}.${column}`);
  return { meta, prop };
}

/**
 * A column value as the entity's property stores it on MongoDB (its type's `convertToDatabaseValue`:
 * MikroORM's bigint is a decimal string there, so Unix seconds compare as equal-width strings).
 */
function stored(db: Database, prop: EntityProperty, value: unknown): unknown {
  return value != null && prop.customType ? prop.customType.convertToDatabaseValue(value, db.orm.em.getPlatform(), { mode: 'query' }) : value;
}

/**
 * `rule` on MongoDB: its collection and the filter of its condition, over the entities' field names
 * with values stored as the entities store them.
 * @throws Error when no entity of `db` is stored in the table or a condition column
 */
export function mongoRetentionTarget(db: Database, rule: RetentionRule): MongoTarget {
  const { column, isNull = [] } = rule.expired;
  const { meta, prop } = entityColumn(db, rule, column);
  const nulls = isNull.map((c) => entityColumn(db, rule, c).prop.fieldNames[0]!);
  const field = prop.fieldNames[0]!;
  return {
    collection: meta.collection,
    index: { [field]: 1 },
    filter: (now) => ({
      ...Object.fromEntries(nulls.map((f) => [f, null])),
      [field]: { $lt: stored(db, prop, rule.expired.before(now)) },
    }),
  };
}

/**
 * A row of `rule.table` given by SQL column names as its entity stores it on MongoDB (field names,
 * `_id` for the key, values converted by each property's type). For tests that plant rows.
 * @throws Error when a column is stored by no property of the entity
 */
export function mongoDocument(db: Database, rule: RetentionRule, row: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(row).map(([column, value]) => {
    const { prop } = entityColumn(db, rule, column);
    return [prop.fieldNames[0]!, stored(db, prop, value)];
  }));
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

/** The part of the driver's collection the sweeper uses. */
interface MongoCollection {
  createIndex(keys: object): Promise<string>;
  find(filter: object, options: { projection: object; sort: object; limit: number }): { toArray(): Promise<Array<{ _id: unknown }>> };
  deleteMany(filter: object): Promise<{ deletedCount: number }>;
}

/** The affected-row count of a `run` statement, across the drivers' result shapes. */
export function affected(res: unknown): number {
  const r = res as { affectedRows?: unknown; changes?: unknown; rowCount?: unknown } | null;
  return Number(r?.affectedRows ?? r?.changes ?? r?.rowCount ?? 0);
}

/**
 * Starts the period of sweeping `opts.rules` on `opts.db`: on SQL the statements are raw SQL through
 * the database's connection; on MongoDB a `find` of `_id`s then a `deleteMany` by `_id` with the
 * condition repeated, on the collections of the service's entities. A failing pass is logged once
 * when the failure starts (dependency state) and retried next period; it never throws.
 * @throws Error at once, on MongoDB, when a rule names a table or column no entity of `db` stores
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

  const mongo = db.type === 'mongodb' ? new Map(rules.map((r) => [r, mongoRetentionTarget(db, r)])) : null;

  /** One batch: selects at most `batchSize` expired keys and deletes those still expired; [selected, deleted]. */
  type Batch = (em: EntityManager, rule: RetentionRule, now: number) => Promise<[number, number]>;

  const sqlBatch: Batch = async (em, rule, now) => {
    const conn = em.getConnection() as unknown as { execute(sql: string, params: unknown[], method: 'all' | 'run'): Promise<unknown> };
    const table = q(rule.table);
    const key = q(rule.key);
    const { where, params } = retentionWhere(rule.expired, now);
    const rows = (await conn.execute(`select ${key} as k from ${table} where ${where} order by ${key} limit ${batchSize}`, params, 'all')) as Array<{ k: unknown }>;
    if (rows.length === 0) return [0, 0];
    const keys = rows.map((r) => r.k);
    const res = await conn.execute(`delete from ${table} where ${key} in (${keys.map(() => '?').join(', ')}) and (${where})`, [...keys, ...params], 'run');
    return [rows.length, affected(res)];
  };

  /** rules whose compared field is known to be indexed on MongoDB */
  const indexed = new Set<RetentionRule>();

  const mongoBatch: Batch = async (em, rule, now) => {
    const target = mongo!.get(rule)!;
    const coll = (em as unknown as { getCollection(name: string): MongoCollection }).getCollection(target.collection);
    if (!indexed.has(rule)) {
      // idempotent across passes and replicas; an index on the same key under another name will do
      await coll.createIndex(target.index).catch((err: { code?: number }) => {
        if (err.code !== INDEX_OPTIONS_CONFLICT) throw err;
      });
      indexed.add(rule);
    }
    const filter = target.filter(now);
    const docs = await coll.find(filter, { projection: { _id: 1 }, sort: { _id: 1 }, limit: batchSize }).toArray();
    if (docs.length === 0) return [0, 0];
    const res = await coll.deleteMany({ $and: [{ _id: { $in: docs.map((d) => d._id) } }, filter] });
    return [docs.length, res.deletedCount];
  };

  const batchOf = mongo ? mongoBatch : sqlBatch;

  async function sweepRule(em: EntityManager, rule: RetentionRule, now: number): Promise<number> {
    let total = 0;
    for (let batch = 0; batch < maxBatches && !loop.stopped; batch += 1) {
      const [selected, n] = await batchOf(em, rule, now);
      total += n;
      if (n > 0) counter.inc({ service: db.service, table: rule.table }, n);
      if (selected < batchSize) break;
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
