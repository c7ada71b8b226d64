/**
 * @module worker.int.test: the email.send worker end to end with the in-process bus, the MikroORM
 * store on SQLite and a real SMTP server (ARCHITECTURE §4; behaviour.md §5.5).
 */
import { describe, it, expect, beforeAll, afterAll, afterEach } from '@jest/globals';
import { createInProcessBus, type Bus } from '@gatehouse/bus';
import { createScratchDatabase, openDatabase, type Database, type ScratchDatabase } from '@gatehouse/db';
import { createLogger } from '@gatehouse/observability';
import { emailJobEnvelope } from '../src/job.ts';
import { notificationsSchema } from '../src/storage/mikro/schema.ts';
import { createMikroDeliveryStore } from '../src/storage/mikro/store.ts';
import type { DeliveryStore } from '../src/storage/storage.ts';
import { buildWorker, deliveries, eventually, LINK, resetJob, type Worker } from './harness.ts';
import { startSmtpSink, type SinkOptions, type SmtpSink } from './smtp-sink.ts';

const quiet = createLogger('silent');
let scratch: ScratchDatabase;
let db: Database;
let store: DeliveryStore;

beforeAll(async () => {
  scratch = await createScratchDatabase('sqlite');
  db = await openDatabase(scratch.options, notificationsSchema, { logger: quiet });
  store = createMikroDeliveryStore(db);
});
afterAll(async () => {
  await db?.close();
  await scratch?.drop();
});

const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const fn of cleanup.splice(0).reverse()) await fn();
});

async function setup(opts: { refuse?: SinkOptions['refuse']; maxAttempts?: number; backoffMs?: number[] } = {}):
Promise<{ sink: SmtpSink; bus: Bus; worker: Worker }> {
  const sink = await startSmtpSink({ refuse: opts.refuse });
  cleanup.push(() => sink.close());
  const bus = createInProcessBus({ logger: quiet });
  cleanup.push(() => bus.close());
  const worker = buildWorker({ bus, store, smtpPort: sink.port, maxAttempts: opts.maxAttempts, backoffMs: opts.backoffMs ?? [50, 100] });
  await worker.service.start();
  cleanup.push(() => worker.service.stop());
  return { sink, bus, worker };
}

const settle = (ms = 300): Promise<void> => new Promise((r) => setTimeout(r, ms));

describe('notifications worker: email.send on the in-process bus', () => {
  it('sends a job once, with the From, To, Subject and link of the job, and records it as sent', async () => {
    const { sink, bus, worker } = await setup();
    const envelope = emailJobEnvelope(resetJob(), 'authn');
    await bus.publish(envelope);
    const [mail] = await sink.waitFor(1);
    expect(mail!.from).toBe('Acme <no-reply@acme.test>');
    expect(mail!.to).toBe('ann@acme.test');
    expect(mail!.rcptTo).toEqual(['ann@acme.test']);
    expect(mail!.subject).toBe('Reset Password');
    expect(mail!.html).toContain(`href="${LINK.replace(/&/g, '&amp;')}"`);
    expect(mail!.html).toContain('Hi Ann,');
    expect(mail!.text).toContain(LINK);
    await eventually(async () => (await store.findJob(envelope.id))?.status === 'sent');
    const attempts = await store.listAttempts(envelope.id);
    expect(attempts.map((a) => [a.attempt, a.outcome, a.channel, a.eventName, a.recipient, a.error]))
      .toEqual([[1, 'sent', 'email', 'forgot_password', 'ann@acme.test', null]]);
    expect(await deliveries(worker.registry, 'forgot_password', 'sent')).toBe(1);
    await settle();
    expect(sink.received).toHaveLength(1);
    expect(await worker.registry.metrics()).toContain('gatehouse_notification_deliveries_total{event="forgot_password",outcome="sent"} 1');
  });

  it('retries after the SMTP server refuses the first two attempts and delivers exactly once', async () => {
    const { sink, bus, worker } = await setup({ refuse: (n) => (n <= 2 ? { code: 451, message: 'greylisted, try again' } : null) });
    const envelope = emailJobEnvelope({ ...resetJob('bob@acme.test'), event_name: 'invite_member' }, 'admin');
    await bus.publish(envelope);
    const [mail] = await sink.waitFor(1);
    expect(mail!.subject).toBe('Please accept the invitation');
    expect(mail!.to).toBe('bob@acme.test');
    await eventually(async () => (await store.findJob(envelope.id))?.status === 'sent');
    const attempts = await store.listAttempts(envelope.id);
    expect(attempts.map((a) => [a.attempt, a.outcome])).toEqual([[1, 'failed'], [2, 'failed'], [3, 'sent']]);
    expect(attempts[0]!.error).toContain('greylisted, try again');
    expect(sink.sessions()).toBe(3);
    expect(await deliveries(worker.registry, 'invite_member', 'failed')).toBe(2);
    expect(await deliveries(worker.registry, 'invite_member', 'sent')).toBe(1);
    expect(worker.lines.filter((l) => l.msg === 'email delivery failed, will retry')).toHaveLength(2);
    await settle();
    expect(sink.received).toHaveLength(1);
  });

  it('does not send a redelivered envelope (same id) a second time', async () => {
    const first = await setup();
    const envelope = emailJobEnvelope(resetJob('cy@acme.test'), 'authn');
    await first.bus.publish(envelope);
    await first.sink.waitFor(1);
    await eventually(async () => (await store.findJob(envelope.id))?.status === 'sent');
    // A restarted process (new bus, same database) gets the same envelope again, as after a lost
    // ack or an outbox relay that crashed before marking the row published.
    const bus2 = createInProcessBus({ logger: quiet });
    cleanup.push(() => bus2.close());
    const worker2 = buildWorker({ bus: bus2, store, smtpPort: first.sink.port });
    await worker2.service.start();
    cleanup.push(() => worker2.service.stop());
    await bus2.publish(envelope);
    await eventually(() => worker2.lines.some((l) => l.msg === 'email job already final, skipped' && l['job_id'] === envelope.id));
    await settle();
    expect(first.sink.received).toHaveLength(1);
    expect(first.sink.sessions()).toBe(1);
    expect((await store.listAttempts(envelope.id)).map((a) => a.outcome)).toEqual(['sent']);
    expect(await deliveries(worker2.registry, 'forgot_password', 'sent')).toBe(0);
  });

  it('writes a dead letter and logs an error after the last failed attempt', async () => {
    const { sink, bus, worker } = await setup({ refuse: () => ({ code: 421, message: 'service not available' }), maxAttempts: 3, backoffMs: [20] });
    const envelope = emailJobEnvelope({ event_name: 'verify_otp', to: 'dee@acme.test', user: { id: 'u-4' }, variables: { otp: 'ABC123' } }, 'mfa');
    await bus.publish(envelope);
    await eventually(async () => (await store.findJob(envelope.id))?.status === 'dead');
    const job = await store.findJob(envelope.id);
    expect(job).toMatchObject({ status: 'dead', channel: 'email', eventName: 'verify_otp' });
    expect(job!.error).toContain('service not available');
    expect((await store.listAttempts(envelope.id)).map((a) => [a.attempt, a.outcome])).toEqual([[1, 'failed'], [2, 'failed'], [3, 'dead']]);
    expect((await store.listDeadLetters(100)).map((j) => j.jobId)).toContain(envelope.id);
    const errors = worker.lines.filter((l) => l.level === 'error');
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({ msg: 'email delivery failed, dead-lettered', job_id: envelope.id, attempt: 3 });
    expect(JSON.stringify(worker.lines)).not.toContain('ABC123'); // the OTP never reaches the logs
    expect(await deliveries(worker.registry, 'verify_otp', 'dead')).toBe(1);
    expect(await deliveries(worker.registry, 'verify_otp', 'failed')).toBe(2);
    expect(sink.received).toHaveLength(0);
  });

  it('dead-letters at once on a permanent SMTP refusal (5yz, RFC 5321 §4.2.1)', async () => {
    const { sink, bus } = await setup({ refuse: () => ({ code: 550, message: 'no such user' }) });
    const envelope = emailJobEnvelope(resetJob('ghost@acme.test'), 'authn');
    await bus.publish(envelope);
    await eventually(async () => (await store.findJob(envelope.id))?.status === 'dead');
    expect((await store.listAttempts(envelope.id)).map((a) => [a.attempt, a.outcome])).toEqual([[1, 'dead']]);
    await settle();
    expect(sink.sessions()).toBe(1);
  });

  it('dead-letters a job that can never be sent without opening an SMTP session', async () => {
    const { sink, bus, worker } = await setup();
    const envelope = emailJobEnvelope({ ...resetJob(), variables: {} }, 'authn');
    await bus.publish(envelope);
    await eventually(async () => (await store.findJob(envelope.id))?.status === 'dead');
    expect(await store.findJob(envelope.id)).toMatchObject({ error: 'email job forgot_password requires verification_url' });
    expect(worker.lines.find((l) => l.level === 'error')?.msg).toBe('email job invalid, dead-lettered');
    expect(sink.sessions()).toBe(0);
  });

  it('stop() stops consuming; jobs published meanwhile are sent after start()', async () => {
    const { sink, bus, worker } = await setup();
    await worker.service.stop();
    const envelopes = [1, 2, 3].map((i) => emailJobEnvelope(resetJob(`user${i}@acme.test`), 'authn'));
    for (const e of envelopes) await bus.publish(e);
    await settle(200);
    expect(sink.received).toHaveLength(0);
    await worker.service.start();
    await sink.waitFor(3);
    expect(sink.received.map((m) => m.to).sort()).toEqual(['user1@acme.test', 'user2@acme.test', 'user3@acme.test']);
    await settle();
    expect(sink.received).toHaveLength(3);
  });
});
