import { Writable } from 'node:stream';
import { describe, expect, it } from '@jest/globals';
import { createDevOutbox } from '@gatehouse/delivery';
import { createLogger, createMetricsRegistry } from '@gatehouse/observability';
import { createEmailSendHandler } from './consumers/email-send.ts';
import { createSmsSendHandler } from './consumers/sms-send.ts';
import { devOutboxMailer, devOutboxSmsSender } from './dev-outbox.ts';
import { emailJobEnvelope, type EmailJob } from './job.ts';
import { deliveryCounter } from './metrics.ts';
import { smsJobEnvelope } from './sms-job.ts';
import { createMemoryDeliveryStore } from './storage/memory.ts';

/** A JSON-lines logger whose lines the test reads. */
function capturedLogger() {
  const lines: Array<Record<string, unknown>> = [];
  const sink = new Writable({ write(chunk: Buffer, _enc, done) { for (const l of chunk.toString().split('\n')) if (l) lines.push(JSON.parse(l) as Record<string, unknown>); done(); } });
  return { logger: createLogger('info', sink), lines };
}

describe('development outbox transports (issue 33 §4)', () => {
  it('keeps the rendered signup verification mail and logs one info line with recipient, subject and link', async () => {
    const outbox = createDevOutbox();
    const { logger, lines } = capturedLogger();
    const store = createMemoryDeliveryStore();
    const handler = createEmailSendHandler({
      store, mailer: devOutboxMailer(outbox, logger), organizationName: 'Acme', organizationLogo: '', logger: createLogger('silent'),
      deliveries: deliveryCounter(createMetricsRegistry({ defaultMetrics: false })), now: () => 1_700_000_000,
    });
    const job: EmailJob = { event_name: 'basic_auth_signup', to: 'ada@example.com', user: { id: 'u1', email: 'ada@example.com' }, variables: { verification_url: 'http://localhost:8080/verify_email?token=tok123' } };
    const e = emailJobEnvelope(job, 'authn');
    await handler(e, { attempt: 1, isLastAttempt: false });
    const [kept] = outbox.list();
    expect(kept).toMatchObject({ channel: 'email', to: 'ada@example.com' });
    expect(kept?.text).toContain('http://localhost:8080/verify_email?token=tok123');
    expect(kept?.html).toContain('verify_email?token=tok123');
    expect(await store.findJob(e.id)).toMatchObject({ status: 'sent' });
    const line = lines.find((l) => l.msg === 'development outbox: email kept');
    expect(line).toMatchObject({ level: 'info', channel: 'email', to: 'ada@example.com', subject: kept?.subject, links: ['http://localhost:8080/verify_email?token=tok123'] });
  });

  it('keeps a text message with its one-time code and logs it', async () => {
    const outbox = createDevOutbox();
    const { logger, lines } = capturedLogger();
    const handler = createSmsSendHandler({
      store: createMemoryDeliveryStore(), sender: devOutboxSmsSender(outbox, logger), logger: createLogger('silent'),
      deliveries: deliveryCounter(createMetricsRegistry({ defaultMetrics: false })), now: () => 1_700_000_000,
    });
    await handler(smsJobEnvelope({ to: '+15551234567', otp: '482913', user_id: 'u1' }, 'mfa'), { attempt: 1, isLastAttempt: false });
    expect(outbox.list()).toEqual([expect.objectContaining({ channel: 'sms', to: '+15551234567', text: 'Your verification code is: 482913' })]);
    expect(lines.find((l) => l.msg === 'development outbox: sms kept')).toMatchObject({ to: '+15551234567', text: 'Your verification code is: 482913' });
  });
});
