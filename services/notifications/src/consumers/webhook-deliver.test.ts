/** @module webhook-deliver.test: one attempt per delivery, the §5.4 retry rules, the signature, one attempt record each. */
import { createHmac } from 'node:crypto';
import { describe, expect, it } from '@jest/globals';
import type { BusEvents } from '@gatehouse/contracts';
import { OutboundError } from '@gatehouse/delivery';
import { createLogger, createMetricsRegistry } from '@gatehouse/observability';
import { deliveryCounter } from '../metrics.ts';
import { createWebhookDeliverHandler, type WebhookTarget } from './webhook-deliver.ts';

const BODY = '{"delivery_id":"d1","event_name":"user.signup"}';
const JOB = { delivery_id: '6f0c3c1e-1111-4111-8111-111111111111', webhook_id: '6f0c3c1e-2222-4222-8222-222222222222', event_name: 'user.signup', body: BODY };
const TARGET: WebhookTarget = { found: true, enabled: true, endpoint: 'https://hooks.example.com/in', headers: { 'x-api-key': 'k' }, signingSecret: 'whsec_test' };

function harness(answer: () => Promise<{ status: number; body: string }>, target: WebhookTarget = TARGET) {
  const attempts: Array<BusEvents['webhook.attempted']> = [];
  const sent: Array<{ url: string; headers: Record<string, string>; body: string }> = [];
  const handler = createWebhookDeliverHandler({
    targetOf: async () => target,
    post: async (p) => { sent.push(p); return answer(); },
    recordAttempt: async (a) => { attempts.push(a); },
    logger: createLogger('silent'),
    deliveries: deliveryCounter(createMetricsRegistry({ defaultMetrics: false })),
    now: () => 1_800_000_000,
  });
  const run = (attempt: number, isLastAttempt = false) =>
    handler({ id: JOB.delivery_id, name: 'webhook.deliver', source: 'admin', occurredAt: 1, data: JOB }, { attempt, isLastAttempt });
  return { attempts, sent, run };
}

describe('webhook.deliver (behaviour.md §5.4)', () => {
  it('signs the exact body with the webhook\'s own secret and records the attempt', async () => {
    const h = harness(async () => ({ status: 200, body: 'ok' }));
    await h.run(1);
    expect(h.sent).toHaveLength(1);
    expect(h.sent[0]!.body).toBe(BODY);
    expect(h.sent[0]!.headers).toEqual({
      'x-api-key': 'k', 'user-agent': 'Gatehouse-Webhook/1', 'content-type': 'application/json',
      'x-service-signature': `sha256=${createHmac('sha256', 'whsec_test').update(BODY).digest('hex')}`,
    });
    expect(h.attempts).toEqual([{
      id: expect.any(String), webhook_id: JOB.webhook_id, delivery_id: JOB.delivery_id, attempt: 1, http_status: 200, request: BODY, response: 'ok', created_at: 1_800_000_000,
    }]);
  });

  it.each([408, 429, 500, 503])('retries %i: the handler throws after recording the attempt', async (status) => {
    const h = harness(async () => ({ status, body: 'no' }));
    await expect(h.run(2)).rejects.toThrow('webhook attempt 2 failed');
    expect(h.attempts.map((a) => [a.attempt, a.http_status])).toEqual([[2, status]]);
  });

  it.each([301, 302, 400, 401, 404, 410])('does not retry %i', async (status) => {
    const h = harness(async () => ({ status, body: 'final' }));
    await h.run(1);
    expect(h.attempts.map((a) => [a.http_status, a.response])).toEqual([[status, 'final']]);
  });

  it('retries a transport error with http_status 0 and the error text; not an SSRF refusal', async () => {
    const down = harness(async () => { throw new OutboundError('transport', 'connect ECONNREFUSED 10.0.0.1:443'); });
    await expect(down.run(1)).rejects.toThrow();
    expect(down.attempts.map((a) => [a.http_status, a.response])).toEqual([[0, 'connect ECONNREFUSED 10.0.0.1:443']]);
    const ssrf = harness(async () => { throw new OutboundError('ssrf', 'SSRF validation failed: requests to private/internal networks are not allowed'); });
    await ssrf.run(1);
    expect(ssrf.attempts.map((a) => [a.http_status, a.response])).toEqual([[0, 'SSRF validation failed: requests to private/internal networks are not allowed']]);
  });

  it('an attempt while admin cannot be reached is logged with http_status 0 and retried, nothing sent', async () => {
    const attempts: Array<BusEvents['webhook.attempted']> = [];
    const handler = createWebhookDeliverHandler({
      targetOf: async () => { throw new Error('admin is unavailable'); },
      post: async () => { throw new Error('must not post'); },
      recordAttempt: async (a) => { attempts.push(a); },
      logger: createLogger('silent'),
      deliveries: deliveryCounter(createMetricsRegistry({ defaultMetrics: false })),
    });
    await expect(handler({ id: 'e', name: 'webhook.deliver', source: 'admin', occurredAt: 1, data: JOB }, { attempt: 1, isLastAttempt: false })).rejects.toThrow();
    expect(attempts.map((a) => [a.attempt, a.http_status, a.response])).toEqual([[1, 0, 'webhook target unavailable: admin is unavailable']]);
  });

  it('gives up after the last attempt without throwing', async () => {
    const h = harness(async () => ({ status: 503, body: 'still down' }));
    await h.run(5, true);
    expect(h.attempts.map((a) => a.attempt)).toEqual([5]);
  });

  it('cancels a delivery of a deleted or disabled webhook: nothing sent, nothing recorded', async () => {
    for (const target of [{ ...TARGET, found: false }, { ...TARGET, enabled: false }]) {
      const h = harness(async () => ({ status: 200, body: '' }), target);
      await h.run(1);
      expect({ sent: h.sent.length, attempts: h.attempts.length }).toEqual({ sent: 0, attempts: 0 });
    }
  });
});
