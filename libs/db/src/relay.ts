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
 * it), and deleting a row the other relay already deleted is a no-op. On MongoDB the pending events are
 * the `_outbox` maps of the service's documents (single-document pattern, outbox.ts), removed entry by
 * entry once published. Over the in-process bus (all-in-one, issue 32) a published row is marked
 * (`published_at`) and deleted only once every handler of its event is done (`Bus.handled`); rows
 * still marked when a relay starts were in flight when the last process stopped, and are published
 * again (consumers are idempotent on the envelope id). MongoDB keeps deleting on publish.
 */
import type { Bus, Envelope } from '@gatehouse/bus';
import { dependencyState, extractTraceContext, SpanKind, withSpan, type Logger } from '@gatehouse/observability';
import { quoteIdentifier } from './ddl.ts';
import { MONGO_OUTBOX_FIELD, type MongoOutboxEntry } from './outbox.ts';
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
  /** what `remove` takes: `seq` on SQL, a {@link MongoKey} on MongoDB */
  key: unknown;
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
  remove(keys: unknown[]): Promise<void>;
  /** keys of up to `limit` rows an earlier release marked published instead of deleting */
  marked(limit: number): Promise<unknown[]>;
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
  find(filter: object, options?: object): { limit(n: number): { toArray(): Promise<Array<Record<string, unknown>>> } };
  updateOne(filter: object, update: object): Promise<unknown>;
  deleteOne(filter: object): Promise<unknown>;
}

/** Where a pending event sits on MongoDB: the collection, the document's `_id`, the envelope id. */
interface MongoKey {
  collection: string;
  doc: unknown;
  id: string;
}

/**
 * MongoDB (single-document pattern, `attachMongoOutbox`): pending events are the entries of the
 * `_outbox` map of any document of the service's collections (the `<service>_outbox` collection
 * holds the events of units of work that changed no other document). `pending` reads every
 * collection's documents that carry one and orders their entries by `seq`; `remove` `$unset`s the
 * published entries of each document (one update per document), then drops an emptied map (and an
 * emptied `<service>_outbox` document).
 */
function mongoRows(db: Database): OutboxRows {
  const client = (): { getCollection(name: string): MongoCollection } => db.fork() as unknown as { getCollection(name: string): MongoCollection };
  const collections = [...new Set([...db.orm.getMetadata().getAll().values()].filter((m) => !m.embeddable && !m.virtual).map((m) => m.collection).filter((c): c is string => typeof c === 'string'))].sort();
  return {
    async pending(limit) {
      const rows: Array<Row & { seq: number }> = [];
      for (const name of collections) {
        const docs = await client().getCollection(name).find({ [MONGO_OUTBOX_FIELD]: { $exists: true } }, { projection: { [MONGO_OUTBOX_FIELD]: 1 } }).limit(limit).toArray();
        for (const d of docs) {
          for (const [id, e] of Object.entries((d[MONGO_OUTBOX_FIELD] ?? {}) as Record<string, MongoOutboxEntry>)) {
            const key: MongoKey = { collection: name, doc: d._id, id };
            rows.push({ key, seq: Number(e.seq), id, name: e.name, source: e.source, occurred_at: e.occurred_at, data: e.data ?? null, trace_parent: e.trace_parent ?? null });
          }
        }
      }
      return rows.sort((a, b) => a.seq - b.seq).slice(0, limit);
    },
    async remove(keys) {
      const byDoc = new Map<string, { collection: string; doc: unknown; ids: string[] }>();
      for (const k of keys as MongoKey[]) {
        const at = `${k.collection}\u0000${JSON.stringify(k.doc)}`;
        const entry = byDoc.get(at) ?? { collection: k.collection, doc: k.doc, ids: [] };
        entry.ids.push(k.id);
        byDoc.set(at, entry);
      }
      for (const { collection, doc, ids } of byDoc.values()) {
        const coll = client().getCollection(collection);
        await coll.updateOne({ _id: doc }, { $unset: Object.fromEntries(ids.map((id) => [`${MONGO_OUTBOX_FIELD}.${id}`, ''])) });
        // a unit of work that wrote new events here since the read keeps its map (it is not empty)
        if (collection === db.outbox.table) await coll.deleteOne({ _id: doc, [MONGO_OUTBOX_FIELD]: {} });
        else await coll.updateOne({ _id: doc, [MONGO_OUTBOX_FIELD]: {} }, { $unset: { [MONGO_OUTBOX_FIELD]: '' } });
      }
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
  async function remove(keys: unknown[]): Promise<boolean> {
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

  // issue 32: over the in-process bus a row is kept, marked published, until every handler is done
  // with its event; rows still marked at start were in flight when the last process stopped
  const acking = bus.handled !== undefined && db.type !== 'mongodb';
  const q = (n: string): string => quoteIdentifier(db.type, n);
  let recovered = !acking;

  /** Marks published rows, then deletes each once the bus says its handlers are done (acking mode). */
  async function settle(done: Array<{ key: unknown; envelope: Envelope }>): Promise<boolean> {
    if (!acking) return remove(done.map((d) => d.key));
    if (done.length === 0) return true;
    try {
      await db.execute(`update ${q(db.outbox.table)} set ${q('published_at')} = ? where ${q('seq')} in (${done.map(() => '?').join(', ')})`, [Date.now(), ...done.map((d) => d.key)]);
    } catch (err) {
      // not marked: published again next tick (duplicates are tolerated)
      database.down(err);
      return false;
    }
    for (const { key, envelope } of done) void bus.handled!(envelope).then(() => handledKey(key));
    return true;
  }

  /** keys whose events every handler is done with, deleted together on the next turn of the loop */
  let handledKeys: unknown[] = [];
  function handledKey(key: unknown): void {
    handledKeys.push(key);
    if (handledKeys.length > 1) return;
    setImmediate(() => {
      const keys = handledKeys;
      handledKeys = [];
      // a row whose delete fails stays marked and is published again at the next start
      void (async () => {
        for (let i = 0; i < keys.length; i += batchSize) await remove(keys.slice(i, i + batchSize));
      })();
    });
  }

  async function tick(): Promise<number> {
    let published = 0;
    try {
      if (!recovered) {
        await db.execute(`update ${q(db.outbox.table)} set ${q('published_at')} = null where ${q('published_at')} is not null`);
        recovered = true;
      } else if (!acking) {
        await remove(await rows.marked(batchSize));
      }
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
      const done: Array<{ key: unknown; envelope: Envelope }> = [];
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
          await settle(done);
          return published + done.length;
        }
        publishing.up();
        done.push({ key: row.key, envelope });
      }
      published += done.length;
      if (!(await settle(done))) return published;
      if (batch.length < batchSize || loop.stopped) return published;
    }
  }

  const loop = startPeriodic(tick, intervalMs, 0);

  return { flush: loop.run, stop: loop.stop };
}
