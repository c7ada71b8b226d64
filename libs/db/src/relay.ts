/**
 * @module @gatehouse/db/relay
 * Publishes a service's outbox rows through the Bus in `seq` order and marks them published
 * (ARCHITECTURE §4). A failed publish stops the batch (later rows wait, order is kept) and is
 * retried on the next tick. Two relays may run: a row may then be published twice, which the
 * bus tolerates (JetStream dedups on the envelope id; consumers are idempotent on it).
 */
import type { Bus, Envelope } from '@gatehouse/bus';
import { dependencyState, extractTraceContext, SpanKind, withSpan, type Logger } from '@gatehouse/observability';
import { quoteIdentifier } from './ddl.ts';
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
  seq: number | string;
  id: string;
  name: string;
  source: string;
  occurred_at: number | string;
  data: string | null;
  trace_parent: string | null;
}

/** Starts polling `db`'s outbox; see module doc for the guarantees. */
export function startOutboxRelay(opts: OutboxRelayOptions): OutboxRelay {
  const { db, bus, logger } = opts;
  const intervalMs = opts.intervalMs ?? 500;
  const batchSize = Math.max(1, Math.floor(opts.batchSize ?? 100));
  const q = (n: string): string => quoteIdentifier(db.type, n);
  const table = q(db.outbox.table);
  let chain: Promise<number> = Promise.resolve(0);
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  // an outage fails every tick: one line when it starts, one when it ends (issue 15), never a flood
  const relayLog = logger.child({ component: 'outbox relay', outbox: db.outbox.table });
  const database = dependencyState(relayLog, 'database', db.outbox.table);
  const publishing = dependencyState(relayLog, 'bus', 'publish');

  async function tick(): Promise<number> {
    let published = 0;
    for (;;) {
      let rows: Row[];
      try {
        rows = await db.execute<Row>(
          `select ${q('seq')} as seq, ${q('id')} as id, ${q('name')} as name, ${q('source')} as source, ` +
            `${q('occurred_at')} as occurred_at, ${q('data')} as data, ${q('trace_parent')} as trace_parent from ${table} ` +
            `where ${q('published_at')} is null order by ${q('seq')} limit ${batchSize}`,
        );
      } catch (err) {
        database.down(err);
        return published;
      }
      database.up();
      for (const row of rows) {
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
          return published;
        }
        publishing.up();
        try {
          await db.execute(`update ${table} set ${q('published_at')} = ? where ${q('seq')} = ?`, [Date.now(), row.seq]);
        } catch (err) {
          // published but not marked: it goes out again next tick (duplicates are tolerated)
          database.down(err);
          return published;
        }
        published += 1;
      }
      if (rows.length < batchSize || stopped) return published;
    }
  }

  const run = (): Promise<number> => {
    const next = chain.then(tick, tick);
    chain = next;
    return next;
  };
  const schedule = (): void => {
    if (stopped) return;
    timer = setTimeout(() => {
      void run().finally(schedule);
    }, intervalMs);
    timer.unref?.();
  };
  schedule();

  return {
    flush: run,
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      await chain.catch(() => 0);
    },
  };
}
