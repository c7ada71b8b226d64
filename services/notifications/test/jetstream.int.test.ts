/**
 * @module jetstream.int.test: the email.send worker in split mode: NATS JetStream (127.0.0.1:4222,
 * a unique stream and subject prefix per run), PostgreSQL (a scratch database) and a real SMTP server.
 */
import { randomBytes } from 'node:crypto';
import { describe, it, expect, beforeAll, afterAll } from '@jest/globals';
import { connect } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';
import { createJetStreamBus, type Bus } from '@gatehouse/bus';
import { createScratchDatabase, openDatabase, type Database, type ScratchDatabase } from '@gatehouse/db';
import { createLogger } from '@gatehouse/observability';
import { emailJobEnvelope } from '../src/job.ts';
import { notificationsSchema } from '../src/storage/mikro/schema.ts';
import { createMikroDeliveryStore } from '../src/storage/mikro/store.ts';
import type { DeliveryStore } from '../src/storage/storage.ts';
import { buildWorker, eventually, resetJob } from './harness.ts';
import { startSmtpSink, type SmtpSink } from './smtp-sink.ts';

const NATS_URL = 'nats://127.0.0.1:4222';
const suffix = randomBytes(4).toString('hex');
const stream = `GH_NOTIF_${suffix}`;
const prefix = `ghnotif${suffix}`;
const quiet = createLogger('silent');

let scratch: ScratchDatabase;
let db: Database;
let store: DeliveryStore;
let sink: SmtpSink;
let refuseSessions = new Set<number>();
const buses: Bus[] = [];

const newBus = async (): Promise<Bus> => {
  const bus = await createJetStreamBus({ url: NATS_URL, logger: quiet, stream, subjectPrefix: prefix });
  buses.push(bus);
  return bus;
};

beforeAll(async () => {
  scratch = await createScratchDatabase('postgres');
  db = await openDatabase(scratch.options, notificationsSchema, { logger: quiet });
  store = createMikroDeliveryStore(db);
  sink = await startSmtpSink({ refuse: (n) => (refuseSessions.has(n) ? { code: 451, message: 'try later' } : null) });
});

afterAll(async () => {
  for (const b of buses) await b.close().catch(() => undefined);
  const nc = await connect({ servers: NATS_URL });
  await (await jetstreamManager(nc)).streams.delete(stream).catch(() => false);
  await nc.close();
  await sink?.close();
  await db?.close();
  await scratch?.drop();
});

const settle = (ms = 500): Promise<void> => new Promise((r) => setTimeout(r, ms));

describe('notifications worker on NATS JetStream', () => {
  it('delivers every job published while the worker is down once it starts, none twice', async () => {
    const producer = await newBus();
    const firstBatch = [1, 2, 3, 4].map((i) => emailJobEnvelope(resetJob(`early${i}@acme.test`), 'authn'));
    for (const e of firstBatch) await producer.publish(e); // before the durable consumer exists

    const worker1 = buildWorker({ bus: await newBus(), store, smtpPort: sink.port, backoffMs: [50] });
    await worker1.service.start();
    await sink.waitFor(4);
    await eventually(async () => (await Promise.all(firstBatch.map((e) => store.findJob(e.id)))).every((j) => j?.status === 'sent'));
    await worker1.service.stop();

    const secondBatch = [1, 2, 3].map((i) => emailJobEnvelope(resetJob(`late${i}@acme.test`), 'authn'));
    for (const e of secondBatch) await producer.publish(e); // the durable exists but nobody consumes
    await settle(300);
    expect(sink.received).toHaveLength(4);

    // a restarted worker process: a new connection, the same durable consumer
    const worker2 = buildWorker({ bus: await newBus(), store, smtpPort: sink.port, backoffMs: [50] });
    await worker2.service.start();
    // A job the stopped worker's last pull had already claimed is redelivered once that claim's ack
    // wait (30 s, libs/bus) runs out; usually none is, but on a loaded machine one can be.
    await sink.waitFor(7, 45_000);
    await eventually(async () => (await Promise.all(secondBatch.map((e) => store.findJob(e.id)))).every((j) => j?.status === 'sent'));
    await settle();
    const recipients = sink.received.map((m) => m.to).sort();
    expect(recipients).toEqual([
      'early1@acme.test', 'early2@acme.test', 'early3@acme.test', 'early4@acme.test',
      'late1@acme.test', 'late2@acme.test', 'late3@acme.test',
    ]);
    for (const e of [...firstBatch, ...secondBatch]) {
      expect((await store.listAttempts(e.id)).map((a) => a.outcome)).toEqual(['sent']);
    }
    await worker2.service.stop();
  }, 90_000);

  it('retries through JetStream redelivery after two refused SMTP sessions and sends once', async () => {
    const before = sink.received.length;
    const next = sink.sessions() + 1;
    refuseSessions = new Set([next, next + 1]);
    const worker = buildWorker({ bus: await newBus(), store, smtpPort: sink.port, backoffMs: [100, 200] });
    await worker.service.start();
    const envelope = emailJobEnvelope(resetJob('retry@acme.test'), 'authn');
    await (await newBus()).publish(envelope);
    await sink.waitFor(before + 1);
    await eventually(async () => (await store.findJob(envelope.id))?.status === 'sent');
    expect((await store.listAttempts(envelope.id)).map((a) => [a.attempt, a.outcome])).toEqual([[1, 'failed'], [2, 'failed'], [3, 'sent']]);
    await settle();
    expect(sink.received.filter((m) => m.to === 'retry@acme.test')).toHaveLength(1);
    await worker.service.stop();
  });
});
