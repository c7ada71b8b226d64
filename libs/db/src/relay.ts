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
import { dependencyState, type Logger } from '@gatehouse/observability';
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
  seq: number | string;
  id: string;
  name: string;
  source: string;
  occurred_at: number | string;
  data: string | null;
}

/** Starts polling `db`'s outbox; see module doc for the guarantees. */
export function startOutboxRelay(opts: OutboxRelayOptions): OutboxRelay {
  const { db, bus, logger } = opts;
  const intervalMs = opts.intervalMs ?? 500;
  const batchSize = Math.max(1, Math.floor(opts.batchSize ?? 100));
  const q = (n: string): string => quoteIdentifier(db.type, n);
  const table = q(db.outbox.table);
  // an outage fails every tick: one line when it starts, one when it ends (issue 15), never a flood
  const relayLog = logger.child({ component: 'outbox relay', outbox: db.outbox.table });
  const database = dependencyState(relayLog, 'database', db.outbox.table);
  const publishing = dependencyState(relayLog, 'bus', 'publish');

  /** Deletes the rows of `seqs` (one statement, primary key); false when the database failed. */
  async function remove(seqs: (number | string)[]): Promise<boolean> {
    if (seqs.length === 0) return true;
    try {
      await db.execute(`delete from ${table} where ${q('seq')} in (${seqs.map(() => '?').join(', ')})`, seqs);
      return true;
    } catch (err) {
      // published but not deleted: it goes out again next tick (duplicates are tolerated)
      database.down(err);
      return false;
    }
  }

  /** Deletes rows an earlier release marked published instead of deleting, one batch per tick. */
  async function sweepMarked(): Promise<void> {
    const rows = await db.execute<{ seq: number | string }>(
      `select ${q('seq')} as seq from ${table} where ${q('published_at')} is not null order by ${q('seq')} limit ${batchSize}`,
    );
    await remove(rows.map((r) => r.seq));
  }

  async function tick(): Promise<number> {
    let published = 0;
    try {
      await sweepMarked();
    } catch (err) {
      database.down(err);
      return published;
    }
    for (;;) {
      let rows: Row[];
      try {
        rows = await db.execute<Row>(
          `select ${q('seq')} as seq, ${q('id')} as id, ${q('name')} as name, ${q('source')} as source, ` +
            `${q('occurred_at')} as occurred_at, ${q('data')} as data from ${table} ` +
            `where ${q('published_at')} is null order by ${q('seq')} limit ${batchSize}`,
        );
      } catch (err) {
        database.down(err);
        return published;
      }
      database.up();
      const done: (number | string)[] = [];
      for (const row of rows) {
        const envelope: Envelope = {
          id: String(row.id),
          name: row.name,
          source: row.source,
          occurredAt: Number(row.occurred_at),
          data: row.data === null ? null : JSON.parse(row.data),
        };
        try {
          await bus.publish(envelope);
        } catch (err) {
          publishing.down(err); // retried next tick; later rows wait, so order is kept
          await remove(done);
          return published + done.length;
        }
        publishing.up();
        done.push(row.seq);
      }
      published += done.length;
      if (!(await remove(done))) return published;
      if (rows.length < batchSize || loop.stopped) return published;
    }
  }

  const loop = startPeriodic(tick, intervalMs, 0);

  return { flush: loop.run, stop: loop.stop };
}
