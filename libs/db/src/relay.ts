/**
 * @module @gatehouse/db/relay
 * Publishes a service's outbox rows through the Bus in `seq` order and deletes each batch once the
 * bus has acknowledged it (ARCHITECTURE §4, issue 23): the outbox holds only what is not yet on the
 * bus, so it never grows and never keeps a published job. A failed publish stops the batch (later
 * rows wait, order is kept) and is retried on the next tick; the rows published before it are
 * deleted first. Deletes go by primary key, at most `batchSize` rows per statement, so no statement
 * locks more than one batch of rows, and only for a moment. Rows marked `published_at` by an earlier
 * release are deleted in the same small batches. Two relays may run: a row may then be published
 * twice, which the bus tolerates (JetStream dedups on the envelope id; consumers are idempotent on
 * it), and deleting a row the other relay already deleted is a no-op.
 */
import type { Bus, Envelope } from '@gatehouse/bus';
import { dependencyState, extractTraceContext, SpanKind, withSpan, type Logger } from '@gatehouse/observability';
import { quoteIdentifier } from './ddl.ts';
import { startPeriodic } from './periodic.ts';
import type { Database } from './types.ts';

export interface OutboxRelayOptions {
  db: Database;
  bus: Bus;
  logger: Logger;
  /** poll period in ms (default 500) */
  intervalMs?: number;
  /** rows per tick (default 100) */
  batchSize?: number;
}

export interface OutboxRelay {
  /** stops polling and waits for the tick in progress */
  stop(): Promise<void>;
  /** publishes what is pending now; resolves with the number of rows published */
  flush(): Promise<number>;
}

interface Row {
  /** what `remove` takes: `seq` on SQL, the document `_id` on MongoDB */
  key: number | string;
  id: string;
  name: string;
  source: string;
  occurred_at: number | string;
  data: string | null;
  trace_parent: string | null;
}

/** The three reads and writes the relay makes, per kind of database. */
interface OutboxRows {
  /** up to `limit` unpublished rows in `seq` order */
  pending(limit: number): Promise<Row[]>;
  /** deletes these rows (one statement) */
  remove(keys: (number | string)[]): Promise<void>;
  /** keys of up to `limit` rows an earlier release marked published instead of deleting */
  marked(limit: number): Promise<(number | string)[]>;
}

/** SQL: raw statements through the database's connection, by the `seq` primary key. */
function sqlRows(db: Database): OutboxRows {
  const q = (n: string): string => quoteIdentifier(db.type, n);
  const table = q(db.outbox.table);
  return {
    pending: (limit) => db.execute<Row>(
      `select ${q('seq')} as ${q('key')}, ${q('id')} as id, ${q('name')} as name, ${q('source')} as source, ` +
        `${q('occurred_at')} as occurred_at, ${q('data')} as data, ${q('trace_parent')} as trace_parent from ${table} ` +
        `where ${q('published_at')} is null order by ${q('seq')} limit ${limit}`,
    ),
    async remove(keys) {
      await db.execute(`delete from ${table} where ${q('seq')} in (${keys.map(() => '?').join(', ')})`, keys);
    },
    async marked(limit) {
      const rows = await db.execute<{ seq: number | string }>(
        `select ${q('seq')} as seq from ${table} where ${q('published_at')} is not null order by ${q('seq')} limit ${limit}`,
      );
      return rows.map((r) => r.seq);
    },
  };
}

interface MongoCollection {
  find(filter: object, options?: object): { sort(s: object): { limit(n: number): { toArray(): Promise<Array<Record<string, unknown>>> } } };
  deleteMany(filter: object): Promise<unknown>;
}

/** MongoDB: the `<service>_outbox` collection through the driver, by `_id` (the envelope id). */
function mongoRows(db: Database): OutboxRows {
  const coll = (): MongoCollection => (db.fork() as unknown as { getCollection(name: string): MongoCollection }).getCollection(db.outbox.table);
  return {
    async pending(limit) {
      const docs = await coll().find({ published_at: null }).sort({ seq: 1 }).limit(limit).toArray();
      return docs.map((d) => ({
        key: String(d._id), id: String(d._id), name: String(d.name), source: String(d.source),
        occurred_at: d.occurred_at as number, data: (d.data as string | null) ?? null,
        trace_parent: typeof d.trace_parent === 'string' ? d.trace_parent : null,
      }));
    },
    async remove(keys) {
      await coll().deleteMany({ _id: { $in: keys } });
    },
    // no earlier release wrote this collection
    marked: async () => [],
  };
}

/** Starts polling `db`'s outbox; see module doc for the guarantees. */
export function startOutboxRelay(opts: OutboxRelayOptions): OutboxRelay {
  const { db, bus, logger } = opts;
  const intervalMs = opts.intervalMs ?? 500;
  const batchSize = Math.max(1, Math.floor(opts.batchSize ?? 100));
  const rows = db.type === 'mongodb' ? mongoRows(db) : sqlRows(db);
  // an outage fails every tick: one line when it starts, one when it ends (issue 15), never a flood
  const relayLog = logger.child({ component: 'outbox relay', outbox: db.outbox.table });
  const database = dependencyState(relayLog, 'database', db.outbox.table);
  const publishing = dependencyState(relayLog, 'bus', 'publish');

  /** Deletes the rows of `keys` (one statement, primary key); false when the database failed. */
  async function remove(keys: (number | string)[]): Promise<boolean> {
    if (keys.length === 0) return true;
    try {
      await rows.remove(keys);
      return true;
    } catch (err) {
      // published but not deleted: it goes out again next tick (duplicates are tolerated)
      database.down(err);
      return false;
    }
  }

  async function tick(): Promise<number> {
    let published = 0;
    try {
      await remove(await rows.marked(batchSize));
    } catch (err) {
      database.down(err);
      return published;
    }
    for (;;) {
      let batch: Row[];
      try {
        batch = await rows.pending(batchSize);
      } catch (err) {
        database.down(err);
        return published;
      }
      database.up();
      const done: (number | string)[] = [];
      for (const row of batch) {
        const envelope: Envelope = {
          id: String(row.id),
          name: row.name,
          source: row.source,
          occurredAt: Number(row.occurred_at),
          data: row.data === null ? null : JSON.parse(row.data),
        };
        try {
          // the row's request trace continues here (issue 15: gateway → service → relay → bus)
          await withSpan(`outbox relay ${row.name}`, {
            kind: SpanKind.INTERNAL,
            parent: extractTraceContext({ traceparent: row.trace_parent ?? undefined }),
            attributes: { 'gatehouse.outbox': db.outbox.table, 'messaging.message.id': envelope.id },
          }, () => bus.publish(envelope));
        } catch (err) {
          publishing.down(err); // retried next tick; later rows wait, so order is kept
          await remove(done);
          return published + done.length;
        }
        publishing.up();
        done.push(row.key);
      }
      published += done.length;
      if (!(await remove(done))) return published;
      if (batch.length < batchSize || loop.stopped) return published;
    }
  }

  const loop = startPeriodic(tick, intervalMs, 0);

  return { flush: loop.run, stop: loop.stop };
}
