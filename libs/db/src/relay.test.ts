/** @module @gatehouse/db/relay.test — the outbox relay on SQLite, PostgreSQL and MariaDB: order, deletion once acknowledged, retry without loss, two relays, polling. */
import { randomUUID } from 'node:crypto';
import { describe, it, expect, beforeAll, afterAll } from '@jest/globals';
import { createLogger } from '@gatehouse/observability';
import { createInProcessBus, newEnvelope } from '@gatehouse/bus';
import type { Bus, Envelope } from '@gatehouse/bus';
import { createScratchDatabase, openDatabase, startOutboxRelay } from './index.ts';
import type { Database, ScratchDatabase } from './index.ts';
import { testSchema } from './test-schema.ts';

const logger = createLogger('silent');

/** A bus that records publishes and fails while `down` is set. */
function recordingBus(): Bus & { published: Envelope[]; down: boolean } {
  const b = {
    published: [] as Envelope[],
    down: false,
    async publish(e: Envelope) {
      if (b.down) throw new Error('bus down');
      b.published.push(e);
    },
    consume: () => Promise.reject(new Error('unused')),
    close: async () => {},
  };
  return b;
}

describe.each(['sqlite', 'postgres', 'mariadb'] as const)('startOutboxRelay (%s)', (type) => {
  let scratch: ScratchDatabase;
  let db: Database;
  beforeAll(async () => {
    scratch = await createScratchDatabase(type);
    db = await openDatabase(scratch.options, testSchema, { logger });
  });
  afterAll(async () => {
    await db.close();
    await scratch.drop();
  });

  const enqueue = async (n: number): Promise<Envelope[]> => {
    const envs = Array.from({ length: n }, (_, i) => newEnvelope('note.created', 'dbtest', { i }));
    await db.transactional(async (em) => {
      for (const e of envs) db.outbox.enqueue(em, e);
    });
    return envs;
  };

  const rowCount = async (): Promise<number> => (await db.execute('select seq from dbtest_outbox')).length;

  it('publishes pending rows in seq order across batches and deletes them once the bus acknowledged them', async () => {
    const bus = recordingBus();
    const envs = await enqueue(7);
    const relay = startOutboxRelay({ db, bus, logger, intervalMs: 60_000, batchSize: 3 });
    expect(await relay.flush()).toBe(7);
    expect(bus.published).toEqual(envs);
    expect(await relay.flush()).toBe(0);
    await relay.stop();
    expect(await rowCount()).toBe(0);
  });

  it('deletes rows an earlier release only marked published, one batch per tick, without publishing them again', async () => {
    const bus = recordingBus();
    await enqueue(5);
    await db.execute('update dbtest_outbox set published_at = ?', [Date.now()]);
    const relay = startOutboxRelay({ db, bus, logger, intervalMs: 60_000, batchSize: 2 });
    expect(await relay.flush()).toBe(0);
    expect(await rowCount()).toBe(3);
    await relay.flush();
    await relay.flush();
    await relay.stop();
    expect(await rowCount()).toBe(0);
    expect(bus.published).toEqual([]);
  });

  it('on publish failure keeps the row and everything after it, and retries in order', async () => {
    const bus = recordingBus();
    const envs = await enqueue(3);
    const relay = startOutboxRelay({ db, bus, logger, intervalMs: 60_000 });
    bus.down = true;
    expect(await relay.flush()).toBe(0);
    expect(await db.execute('select seq from dbtest_outbox where published_at is null')).toHaveLength(3);
    bus.down = false;
    let calls = 0;
    const publish = bus.publish.bind(bus);
    bus.publish = async (e) => {
      calls += 1;
      if (calls === 2) throw new Error('bus down');
      return publish(e);
    };
    expect(await relay.flush()).toBe(1); // the first went out and is deleted; the rest wait
    expect(await rowCount()).toBe(2);
    bus.publish = publish;
    bus.down = false;
    expect(await relay.flush()).toBe(2);
    expect(bus.published).toEqual(envs);
    expect(await rowCount()).toBe(0);
    await relay.stop();
  });

  it('polls on its own every intervalMs and delivers through the in-process bus', async () => {
    const bus = createInProcessBus({ logger });
    const got: string[] = [];
    await bus.consume({ durable: 'poll', names: ['note.created'], maxAttempts: 1, backoffMs: [], handler: async (e) => void got.push(e.id) });
    const relay = startOutboxRelay({ db, bus, logger, intervalMs: 20 });
    const [e] = await enqueue(1);
    const end = Date.now() + 5000;
    while (got.length === 0 && Date.now() < end) await new Promise((r) => setTimeout(r, 10));
    await relay.stop();
    await bus.close();
    expect(got).toEqual([e!.id]);
  });

  it('two relays at once publish every row at least once and leave none pending', async () => {
    const bus = recordingBus();
    const envs = await enqueue(20);
    const a = startOutboxRelay({ db, bus, logger, intervalMs: 60_000, batchSize: 5 });
    const b = startOutboxRelay({ db, bus, logger, intervalMs: 60_000, batchSize: 5 });
    await Promise.all([a.flush(), b.flush()]);
    await Promise.all([a.stop(), b.stop()]);
    expect(new Set(bus.published.map((e) => e.id))).toEqual(new Set(envs.map((e) => e.id)));
    expect(await rowCount()).toBe(0);
  });

  it('a row from a transaction that rolled back is never published', async () => {
    const bus = recordingBus();
    const id = randomUUID();
    await expect(
      db.transactional(async (em) => {
        db.outbox.enqueue(em, { id, name: 'note.created', source: 'dbtest', occurredAt: 1, data: {} });
        throw new Error('abort');
      }),
    ).rejects.toThrow('abort');
    const relay = startOutboxRelay({ db, bus, logger, intervalMs: 60_000 });
    await relay.flush();
    await relay.stop();
    expect(bus.published.map((e) => e.id)).not.toContain(id);
  });

  it('issue 32: over the in-process bus a row stays (marked) until its handler is done, and a process that stops first leaves it to be delivered again', async () => {
    const envs = await enqueue(2);
    // process 1: its handler never finishes (the process stops first)
    const bus1 = createInProcessBus({ logger });
    let started = 0;
    await bus1.consume({ durable: 'slow', names: ['note.created'], maxAttempts: 3, backoffMs: [10], handler: () => { started += 1; return new Promise<void>(() => {}); } });
    const relay1 = startOutboxRelay({ db, bus: bus1, logger, intervalMs: 60_000 });
    expect(await relay1.flush()).toBe(2);
    await new Promise((r) => setTimeout(r, 100));
    expect(started).toBe(2);
    await relay1.stop();
    expect(await rowCount()).toBe(2);

    // process 2 (a restart): the rows in flight are published again, deleted once handled
    const bus2 = createInProcessBus({ logger });
    const handled: string[] = [];
    let release!: () => void;
    const gate = new Promise<void>((r) => { release = r; });
    await bus2.consume({ durable: 'slow', names: ['note.created'], maxAttempts: 3, backoffMs: [10], handler: async (e) => { await gate; handled.push(e.id); } });
    const relay2 = startOutboxRelay({ db, bus: bus2, logger, intervalMs: 60_000 });
    expect(await relay2.flush()).toBe(2);
    expect(await rowCount()).toBe(2);
    release();
    const deadline = Date.now() + 10_000;
    while ((await rowCount()) > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect(await rowCount()).toBe(0);
    expect(handled.sort()).toEqual(envs.map((e) => e.id).sort());
    // nothing is published a third time
    expect(await relay2.flush()).toBe(0);
    await relay2.stop();
    await bus2.close();
  }, 30_000);
});
