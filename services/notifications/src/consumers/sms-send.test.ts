/**
 * @module sms-send.test: the sms.send handler and worker with the real `twilio` client pointed at the
 * Twilio stand-in of libs/testing, on the memory store (behaviour.md §4.4 delivery; ARCHITECTURE §4
 * retries, idempotency and attempt records).
 */
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { createInProcessBus } from '@gatehouse/bus';
import { createLogger, createMetricsRegistry } from '@gatehouse/observability';
import { startTwilioSink, TWILIO_TEST_CREDENTIALS, type TwilioSink } from '@gatehouse/testing';
import { deliveryCounter } from '../metrics.ts';
import { createNotificationsService } from '../service.ts';
import { smsJobEnvelope, type SmsJob } from '../sms-job.ts';
import { createMemoryDeliveryStore } from '../storage/memory.ts';
import { createTwilioSender, isPermanentTwilioFailure } from '../twilio/sender.ts';
import { createSmsSendHandler } from './sms-send.ts';

const job: SmsJob = { to: '+15551234567', otp: 'AB3XK9', user_id: 'u-1' };
const quiet = createLogger('silent');
let sink: TwilioSink;

beforeEach(async () => {
  sink = await startTwilioSink();
});
afterEach(async () => {
  await sink.close();
});

function setup(sender: string = TWILIO_TEST_CREDENTIALS.sender) {
  const store = createMemoryDeliveryStore();
  const registry = createMetricsRegistry({ defaultMetrics: false });
  const twilio = createTwilioSender({ ...TWILIO_TEST_CREDENTIALS, sender, apiUrl: sink.url, timeoutMs: 3000 });
  const handler = createSmsSendHandler({ store, sender: twilio, logger: quiet, deliveries: deliveryCounter(registry), now: () => 1_700_000_000 });
  return { store, registry, handler };
}

describe('sms.send handler (real twilio client → stand-in)', () => {
  it('sends `Your verification code is: <code>` from --twilio-sender to the job\'s number and records it as sent', async () => {
    const { store, registry, handler } = setup();
    const e = smsJobEnvelope(job, 'mfa');
    await handler(e, { attempt: 1, isLastAttempt: false });
    expect(sink.messages).toEqual([expect.objectContaining({
      to: '+15551234567', from: TWILIO_TEST_CREDENTIALS.sender, body: 'Your verification code is: AB3XK9', accountSid: TWILIO_TEST_CREDENTIALS.accountSid,
    })]);
    expect(sink.otpOf(sink.messages[0]!)).toBe('AB3XK9');
    expect(await store.findJob(e.id)).toMatchObject({ channel: 'sms', status: 'sent', eventName: 'verify_otp' });
    const attempts = await store.listAttempts(e.id);
    expect(attempts.map((a) => [a.attempt, a.outcome, a.channel, a.recipient, a.error])).toEqual([[1, 'sent', 'sms', '+15551234567', null]]);
    // the code never reaches the attempt records
    expect(JSON.stringify(attempts)).not.toContain('AB3XK9');
    expect(await registry.metrics()).toContain('gatehouse_notification_deliveries_total{event="verify_otp",outcome="sent"} 1');
  });

  it('a Messaging Service SID as --twilio-sender goes as MessagingServiceSid, not From', async () => {
    const { handler } = setup('MG00000000000000000000000000000001');
    await handler(smsJobEnvelope(job, 'mfa'), { attempt: 1, isLastAttempt: false });
    expect(sink.messages[0]).toMatchObject({ from: null, messagingServiceSid: 'MG00000000000000000000000000000001' });
  });

  it('throws a 503 back to the bus for a retry; the next attempt delivers once; attempts failed, failed, sent', async () => {
    const { store, handler } = setup();
    sink.failNext(2);
    const e = smsJobEnvelope(job, 'mfa');
    await expect(handler(e, { attempt: 1, isLastAttempt: false })).rejects.toMatchObject({ status: 503 });
    await expect(handler(e, { attempt: 2, isLastAttempt: false })).rejects.toMatchObject({ status: 503 });
    expect(await store.findJob(e.id)).toBeNull();
    await handler(e, { attempt: 3, isLastAttempt: false });
    expect(sink.requests()).toBe(3);
    expect(sink.messages).toHaveLength(1);
    expect((await store.listAttempts(e.id)).map((a) => [a.attempt, a.outcome])).toEqual([[1, 'failed'], [2, 'failed'], [3, 'sent']]);
    // a redelivery of a sent job sends nothing
    await handler(e, { attempt: 4, isLastAttempt: false });
    expect(sink.requests()).toBe(3);
  });

  it('dead-letters on the last attempt, and at once on a permanent 4xx refusal', async () => {
    const { store, handler } = setup();
    sink.failNext(1);
    const last = smsJobEnvelope(job, 'mfa');
    await handler(last, { attempt: 5, isLastAttempt: true });
    expect(await store.findJob(last.id)).toMatchObject({ status: 'dead', error: 'Internal Server Error' });
    sink.failNext(1, 400);
    const refused = smsJobEnvelope(job, 'mfa');
    await expect(handler(refused, { attempt: 1, isLastAttempt: false })).resolves.toBeUndefined();
    expect((await store.listAttempts(refused.id)).map((a) => a.outcome)).toEqual(['dead']);
    expect(sink.messages).toHaveLength(0);
  });

  it('dead-letters a malformed job without calling Twilio', async () => {
    const { store, handler } = setup();
    for (const data of [{ ...job, to: '555' }, { ...job, otp: 'not a code' }, { ...job, user_id: '' }, 'text']) {
      const e = smsJobEnvelope(data as SmsJob, 'mfa');
      await handler(e, { attempt: 1, isLastAttempt: false });
      expect(await store.findJob(e.id)).toMatchObject({ status: 'dead' });
    }
    expect(sink.requests()).toBe(0);
  });

  it('sends once when the same envelope is delivered twice at the same time', async () => {
    const { store, handler } = setup();
    const e = smsJobEnvelope(job, 'mfa');
    await Promise.all([handler(e, { attempt: 1, isLastAttempt: false }), handler(e, { attempt: 2, isLastAttempt: false })]);
    expect(sink.messages).toHaveLength(1);
    expect((await store.listAttempts(e.id)).map((a) => a.outcome)).toEqual(['sent']);
  });

  it('refuses bad credentials as permanent (401), retries 429 and network errors', async () => {
    const bad = createTwilioSender({ ...TWILIO_TEST_CREDENTIALS, apiSecret: 'wrong', apiUrl: sink.url, timeoutMs: 3000 });
    const err = await bad.send({ to: job.to, body: 'x' }).catch((e: unknown) => e);
    expect(err).toMatchObject({ status: 401 });
    expect(isPermanentTwilioFailure(err)).toBe(true);
    expect(isPermanentTwilioFailure({ status: 429 })).toBe(false);
    expect(isPermanentTwilioFailure(new Error('connect ECONNREFUSED'))).toBe(false);
  });
});

describe('notifications worker: sms.send on the in-process bus', () => {
  it('consumes sms.send with the sms consumer and retries after the stand-in failed the first attempt', async () => {
    const bus = createInProcessBus({ logger: quiet });
    const store = createMemoryDeliveryStore();
    const service = createNotificationsService({
      bus, store, logger: quiet, registry: createMetricsRegistry({ defaultMetrics: false }),
      smsSender: createTwilioSender({ ...TWILIO_TEST_CREDENTIALS, apiUrl: sink.url, timeoutMs: 3000 }),
      options: { organizationName: 'Acme', organizationLogo: '', backoffMs: [50] },
    });
    await service.start();
    try {
      sink.failNext(1);
      const e = smsJobEnvelope(job, 'mfa');
      await bus.publish(e);
      expect(sink.otpOf(await sink.waitForSms(job.to))).toBe('AB3XK9');
      const deadline = Date.now() + 5000;
      while ((await store.findJob(e.id))?.status !== 'sent' && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      expect((await store.listAttempts(e.id)).map((a) => [a.attempt, a.outcome])).toEqual([[1, 'failed'], [2, 'sent']]);
      expect(sink.messages).toHaveLength(1);
    } finally {
      await service.stop();
      await bus.close();
    }
  });
});
