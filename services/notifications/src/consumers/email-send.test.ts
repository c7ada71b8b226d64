/** @module email-send.test: the email.send handler with the memory store and a swappable Mailer. */
import { describe, it, expect } from '@jest/globals';
import { createLogger, createMetricsRegistry } from '@gatehouse/observability';
import { emailJobEnvelope, type EmailJob } from '../job.ts';
import type { Mailer, OutgoingEmail } from '../smtp/mailer.ts';
import { deliveryCounter } from '../metrics.ts';
import { createMemoryDeliveryStore } from '../storage/memory.ts';
import { createEmailSendHandler, type EmailSendDeps } from './email-send.ts';

const job: EmailJob = { event_name: 'update_email', to: 'ann@acme.test', user: { id: 'u1', given_name: 'Ann' }, variables: { verification_url: 'https://a.test/verify_email?token=t' } };

function setup(mailer: Mailer, extra: Partial<EmailSendDeps> = {}) {
  const store = createMemoryDeliveryStore();
  const registry = createMetricsRegistry({ defaultMetrics: false });
  const handler = createEmailSendHandler({
    store, mailer, organizationName: 'Acme', organizationLogo: '', logger: createLogger('silent'),
    deliveries: deliveryCounter(registry), now: () => 1_700_000_000, ...extra,
  });
  return { store, registry, handler };
}

class RecordingMailer implements Mailer {
  sent: OutgoingEmail[] = [];
  failures: Error[] = [];
  delayMs = 0;
  async send(msg: OutgoingEmail) {
    if (this.delayMs) await new Promise((r) => setTimeout(r, this.delayMs));
    const failure = this.failures.shift();
    if (failure) throw failure;
    this.sent.push(msg);
    return { messageId: `<${this.sent.length}@test>` };
  }
}

describe('email.send handler', () => {
  it('renders and sends the job through the Mailer, then records the attempt as sent', async () => {
    const mailer = new RecordingMailer();
    const { store, handler } = setup(mailer);
    const e = emailJobEnvelope(job, 'authn');
    await handler(e, { attempt: 1, isLastAttempt: false });
    expect(mailer.sent).toHaveLength(1);
    expect(mailer.sent[0]).toMatchObject({ to: 'ann@acme.test', subject: 'Please verify your email' });
    expect(mailer.sent[0]!.html).toContain('href="https://a.test/verify_email?token=t"');
    expect(await store.findJob(e.id)).toMatchObject({ status: 'sent', updatedAt: 1_700_000_000 });
  });

  it('throws a failed send back to the bus for a retry, and dead-letters it on the last attempt', async () => {
    const mailer = new RecordingMailer();
    mailer.failures.push(new Error('connect ECONNREFUSED'), new Error('connect ECONNREFUSED'));
    const { store, registry, handler } = setup(mailer);
    const e = emailJobEnvelope(job, 'authn');
    await expect(handler(e, { attempt: 1, isLastAttempt: false })).rejects.toThrow('ECONNREFUSED');
    expect(await store.findJob(e.id)).toBeNull();
    await expect(handler(e, { attempt: 2, isLastAttempt: true })).resolves.toBeUndefined();
    expect(await store.findJob(e.id)).toMatchObject({ status: 'dead', error: 'connect ECONNREFUSED' });
    expect((await store.listAttempts(e.id)).map((a) => a.outcome)).toEqual(['failed', 'dead']);
    expect(await registry.metrics()).toContain('gatehouse_notification_deliveries_total{event="update_email",outcome="dead"} 1');
    // a dead job is final too: a later redelivery sends nothing
    await handler(e, { attempt: 1, isLastAttempt: false });
    expect(mailer.sent).toHaveLength(0);
  });

  it('sends once when the same envelope is delivered twice at the same time', async () => {
    const mailer = new RecordingMailer();
    mailer.delayMs = 50;
    const { store, handler } = setup(mailer);
    const e = emailJobEnvelope(job, 'authn');
    await Promise.all([handler(e, { attempt: 1, isLastAttempt: false }), handler(e, { attempt: 2, isLastAttempt: false })]);
    expect(mailer.sent).toHaveLength(1);
    expect((await store.listAttempts(e.id)).map((a) => a.outcome)).toEqual(['sent']);
  });

  it('renders with the stored template the lookup returns for the event', async () => {
    const mailer = new RecordingMailer();
    const { handler } = setup(mailer, {
      templateFor: async (event) => (event === 'update_email' ? { subject: 'Confirm, {{.user.given_name}}', template: '<a href="{{.verification_url}}">go</a>' } : undefined),
    });
    await handler(emailJobEnvelope(job, 'authn'), { attempt: 1, isLastAttempt: false });
    expect(mailer.sent[0]).toMatchObject({ subject: 'Confirm, Ann', html: '<a href="https://a.test/verify_email?token=t">go</a>', text: 'go (https://a.test/verify_email?token=t)' });
  });

  it('retries when the template lookup fails (a storage outage is not the job\'s fault)', async () => {
    const mailer = new RecordingMailer();
    const { store, handler } = setup(mailer, { templateFor: async () => { throw new Error('db down'); } });
    const e = emailJobEnvelope(job, 'authn');
    await expect(handler(e, { attempt: 1, isLastAttempt: false })).rejects.toThrow('db down');
    expect((await store.listAttempts(e.id)).map((a) => [a.outcome, a.error])).toEqual([['failed', 'db down']]);
  });
});
