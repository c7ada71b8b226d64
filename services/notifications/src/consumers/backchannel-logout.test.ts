/** @module backchannel-logout.test: the logout token as a form POST (OIDC Back-Channel Logout 1.0 §2.5) with the webhook retry rules. */
import { describe, expect, it } from '@jest/globals';
import { OutboundError } from '@gatehouse/delivery';
import { createLogger, createMetricsRegistry } from '@gatehouse/observability';
import { deliveryCounter } from '../metrics.ts';
import { createBackchannelLogoutHandler } from './backchannel-logout.ts';

const JOB = { delivery_id: '6f0c3c1e-1111-4111-8111-111111111111', client_id: 'rp-1', backchannel_logout_uri: 'https://rp.example.com/backchannel?tenant=a', logout_token: 'eyJ.a.b' };

function harness(answer: () => Promise<{ status: number; body: string }>, job: Record<string, unknown> = JOB) {
  const sent: Array<{ url: string; headers: Record<string, string>; body: string }> = [];
  const handler = createBackchannelLogoutHandler({
    post: async (p) => { sent.push(p); return answer(); },
    logger: createLogger('silent'),
    deliveries: deliveryCounter(createMetricsRegistry({ defaultMetrics: false })),
  });
  const run = (attempt: number, isLastAttempt = false) =>
    handler({ id: JOB.delivery_id, name: 'oauth.backchannel_logout', source: 'authn', occurredAt: 1, data: job }, { attempt, isLastAttempt });
  return { sent, run };
}

describe('oauth.backchannel_logout (OIDC Back-Channel Logout 1.0 §2.5)', () => {
  it('POSTs logout_token as application/x-www-form-urlencoded to the backchannel_logout_uri, query kept', async () => {
    const h = harness(async () => ({ status: 200, body: '' }));
    await h.run(1);
    expect(h.sent).toEqual([{
      url: 'https://rp.example.com/backchannel?tenant=a',
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'user-agent': 'Gatehouse-Webhook/1' },
      body: 'logout_token=eyJ.a.b',
    }]);
  });

  it.each([408, 429, 500, 503])('retries %i (the bus waits 1, 2, 4, 8 s)', async (status) => {
    await expect(harness(async () => ({ status, body: '' })).run(2)).rejects.toThrow('back-channel logout attempt 2 failed');
  });

  it.each([400, 401, 404])('does not retry %i (§2.8: the RP refused the token)', async (status) => {
    await expect(harness(async () => ({ status, body: '' })).run(1)).resolves.toBeUndefined();
  });

  it('retries a transport error but not an outbound guard refusal, and gives up after the last attempt', async () => {
    await expect(harness(async () => { throw new OutboundError('transport', 'connect ECONNREFUSED'); }).run(1)).rejects.toThrow();
    await expect(harness(async () => { throw new OutboundError('ssrf', 'SSRF validation failed'); }).run(1)).resolves.toBeUndefined();
    await expect(harness(async () => ({ status: 503, body: '' })).run(5, true)).resolves.toBeUndefined();
  });

  it('drops a malformed job without posting', async () => {
    const h = harness(async () => ({ status: 200, body: '' }), { client_id: 'rp-1' });
    await h.run(1);
    expect(h.sent).toEqual([]);
  });
});
