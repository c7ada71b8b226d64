/** @module @gatehouse/bus/in-process.test — the all-in-one bus: delivery, retries, durables, dedup. */
import { describe, it, expect, afterEach } from '@jest/globals';
import { createLogger } from '@gatehouse/observability';
import { createInProcessBus, newEnvelope } from './index.ts';
import type { Bus, Delivery, Envelope } from './index.ts';

const logger = createLogger('silent');
const until = async (cond: () => boolean, ms = 3000): Promise<void> => {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 5));
  }
};

describe('createInProcessBus', () => {
  let bus: Bus;
  afterEach(async () => bus?.close());

  it('delivers a published envelope to consumers of its name only', async () => {
    bus = createInProcessBus({ logger });
    const got: Envelope[] = [];
    const other: Envelope[] = [];
    await bus.consume({ durable: 'a', names: ['user.signup'], maxAttempts: 1, backoffMs: [], handler: async (e) => void got.push(e) });
    await bus.consume({ durable: 'b', names: ['email.send'], maxAttempts: 1, backoffMs: [], handler: async (e) => void other.push(e) });
    const env = newEnvelope('user.signup', 'authn', { user_id: 'u1' });
    await bus.publish(env);
    await until(() => got.length === 1);
    expect(got[0]).toEqual(env);
    expect(other).toHaveLength(0);
  });

  it('retries after the backoff and flags the last attempt, then stops', async () => {
    bus = createInProcessBus({ logger });
    const calls: { d: Delivery; at: number; id: string }[] = [];
    await bus.consume({
      durable: 'retry',
      names: ['email.send'],
      maxAttempts: 3,
      backoffMs: [40, 80],
      handler: async (e, d) => {
        calls.push({ d, at: Date.now(), id: e.id });
        throw new Error('smtp down');
      },
    });
    const env = newEnvelope('email.send', 'notifications', {});
    await bus.publish(env);
    await until(() => calls.length === 3);
    await new Promise((r) => setTimeout(r, 200));
    expect(calls.map((c) => c.d)).toEqual([
      { attempt: 1, isLastAttempt: false },
      { attempt: 2, isLastAttempt: false },
      { attempt: 3, isLastAttempt: true },
    ]);
    expect(new Set(calls.map((c) => c.id))).toEqual(new Set([env.id]));
    expect(calls[1]!.at - calls[0]!.at).toBeGreaterThanOrEqual(35);
    expect(calls[2]!.at - calls[1]!.at).toBeGreaterThanOrEqual(75);
  });

  it('a durable consumer gets what was published while it was stopped', async () => {
    bus = createInProcessBus({ logger });
    const got: string[] = [];
    const handler = async (e: Envelope): Promise<void> => void got.push(e.id);
    const sub = await bus.consume({ durable: 'd', names: ['user.login'], maxAttempts: 1, backoffMs: [], handler });
    await sub.stop();
    const env = newEnvelope('user.login', 'authn', {});
    await bus.publish(env);
    await new Promise((r) => setTimeout(r, 30));
    expect(got).toEqual([]);
    await bus.consume({ durable: 'd', names: ['user.login'], maxAttempts: 1, backoffMs: [], handler });
    await until(() => got.length === 1);
    expect(got).toEqual([env.id]);
  });

  it('drops a duplicate envelope id (as the JetStream duplicate window does)', async () => {
    bus = createInProcessBus({ logger });
    const got: string[] = [];
    await bus.consume({ durable: 'x', names: ['user.signup'], maxAttempts: 1, backoffMs: [], handler: async (e) => void got.push(e.id) });
    const env = newEnvelope('user.signup', 'authn', {});
    await bus.publish(env);
    await bus.publish(env);
    await new Promise((r) => setTimeout(r, 50));
    expect(got).toEqual([env.id]);
  });

  it('rejects bad input with invalid_argument and use after close with unavailable', async () => {
    bus = createInProcessBus({ logger });
    expect(() => newEnvelope('Bad Name', 'authn', {})).toThrow(expect.objectContaining({ code: 'invalid_argument' }));
    await expect(bus.publish({ id: '', name: 'a.b', source: 's', occurredAt: 1, data: null })).rejects.toMatchObject({ code: 'invalid_argument' });
    await expect(bus.consume({ durable: 'has.dot', names: ['a.b'], maxAttempts: 1, backoffMs: [], handler: async () => {} })).rejects.toMatchObject({ code: 'invalid_argument' });
    await expect(bus.consume({ durable: 'ok', names: ['a.b'], maxAttempts: 0, backoffMs: [], handler: async () => {} })).rejects.toMatchObject({ code: 'invalid_argument' });
    await bus.close();
    await expect(bus.publish(newEnvelope('a.b', 's', {}))).rejects.toMatchObject({ code: 'unavailable' });
  });

  it('newEnvelope sets a UUIDv4 id and occurredAt in Unix seconds', () => {
    const e = newEnvelope('user.signup', 'authn', { a: 1 });
    expect(e.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(Math.abs(e.occurredAt - Date.now() / 1000)).toBeLessThan(2);
    expect(Number.isInteger(e.occurredAt)).toBe(true);
  });
});
