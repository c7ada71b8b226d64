/** @module @gatehouse/bus/jetstream.test — the JetStream bus against the machine's NATS (127.0.0.1:4222). */
import { randomBytes } from 'node:crypto';
import { describe, it, expect, afterAll } from '@jest/globals';
import { connect } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';
import { createLogger } from '@gatehouse/observability';
import { createJetStreamBus, newEnvelope } from './index.ts';
import type { Bus, Delivery, Envelope } from './index.ts';

const URL = 'nats://127.0.0.1:4222';
const logger = createLogger('silent');
const suffix = randomBytes(4).toString('hex');
const stream = `GH_TEST_${suffix}`;
const prefix = `ghtest${suffix}`;
const until = async (cond: () => boolean, ms = 10000): Promise<void> => {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 10));
  }
};

describe('createJetStreamBus', () => {
  const buses: Bus[] = [];
  const open = async (): Promise<Bus> => {
    const b = await createJetStreamBus({ url: URL, logger, stream, subjectPrefix: prefix });
    buses.push(b);
    return b;
  };
  afterAll(async () => {
    await Promise.all(buses.map((b) => b.close()));
    const nc = await connect({ servers: URL });
    await (await jetstreamManager(nc)).streams.delete(stream).catch(() => false);
    await nc.close();
  });

  it('creates the stream on <prefix>.> with a duplicate window and round-trips an envelope', async () => {
    const bus = await open();
    const got: [Envelope, Delivery][] = [];
    const sub = await bus.consume({ durable: 'rt', names: ['user.signup'], maxAttempts: 3, backoffMs: [100], handler: async (e, d) => void got.push([e, d]) });
    const env = newEnvelope('user.signup', 'authn', { user_id: 'u1', email: 'a@example.com' });
    await bus.publish(env);
    await bus.publish(env); // same id inside the duplicate window: stored once
    await until(() => got.length >= 1);
    await new Promise((r) => setTimeout(r, 300));
    expect(got).toHaveLength(1);
    expect(got[0]).toEqual([env, { attempt: 1, isLastAttempt: false }]);
    await sub.stop();
    const nc = await connect({ servers: URL });
    const info = await (await jetstreamManager(nc)).streams.info(stream);
    await nc.close();
    expect(info.config.subjects).toEqual([`${prefix}.>`]);
    expect(info.config.storage).toBe('file');
    expect(info.config.duplicate_window).toBe(120_000_000_000);
  });

  it('retries a failing handler after the backoff with the same envelope id, then terminates on the last attempt', async () => {
    const bus = await open();
    const calls: { id: string; d: Delivery; at: number }[] = [];
    const sub = await bus.consume({
      durable: 'retry',
      names: ['email.send'],
      maxAttempts: 3,
      backoffMs: [300, 600],
      handler: async (e, d) => {
        calls.push({ id: e.id, d, at: Date.now() });
        throw new Error('smtp down');
      },
    });
    const env = newEnvelope('email.send', 'notifications', { to: 'a@example.com' });
    await bus.publish(env);
    await until(() => calls.length === 3);
    await new Promise((r) => setTimeout(r, 1500)); // terminated: no 4th delivery
    await sub.stop();
    expect(calls.map((c) => c.d)).toEqual([
      { attempt: 1, isLastAttempt: false },
      { attempt: 2, isLastAttempt: false },
      { attempt: 3, isLastAttempt: true },
    ]);
    expect(calls.every((c) => c.id === env.id)).toBe(true);
    expect(calls[1]!.at - calls[0]!.at).toBeGreaterThanOrEqual(250);
    expect(calls[2]!.at - calls[1]!.at).toBeGreaterThanOrEqual(550);
  });

  it('a durable consumer resumes after stop: messages published while stopped are delivered', async () => {
    const bus = await open();
    const got: string[] = [];
    const opts = { durable: 'resume', names: ['user.login', 'user.logout'], maxAttempts: 2, backoffMs: [100], handler: async (e: Envelope) => void got.push(e.name + ':' + e.id) };
    const first = newEnvelope('user.login', 'authn', {});
    let sub = await bus.consume(opts);
    await bus.publish(first);
    await until(() => got.length === 1);
    await sub.stop();
    const whileStopped = [newEnvelope('user.logout', 'authn', {}), newEnvelope('user.login', 'authn', {})];
    for (const e of whileStopped) await bus.publish(e);
    await new Promise((r) => setTimeout(r, 200));
    expect(got).toHaveLength(1);
    const bus2 = await open(); // a new process' connection, same durable
    sub = await bus2.consume(opts);
    await until(() => got.length === 3);
    await new Promise((r) => setTimeout(r, 300));
    await sub.stop();
    expect(got.sort()).toEqual([first, ...whileStopped].map((e) => e.name + ':' + e.id).sort());
  });

  it('rejects an invalid envelope with invalid_argument', async () => {
    const bus = await open();
    await expect(bus.publish({ id: 'x', name: 'Not Valid', source: 'a', occurredAt: 1, data: 1 })).rejects.toMatchObject({ code: 'invalid_argument' });
  });
});
