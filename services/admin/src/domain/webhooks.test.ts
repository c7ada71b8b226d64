/** @module webhooks.test: webhook administration, fan-out and templates on the memory store (behaviour.md §5.4, §5.5, §5.7, §8). */
import { describe, expect, it } from '@jest/globals';
import { AppError } from '@gatehouse/errors';
import { createLogger } from '@gatehouse/observability';
import { createMemoryAdminStore } from '../storage/memory.ts';
import type { AdminDomain, Outbound } from './deps.ts';
import { addEmailTemplate, updateEmailTemplate } from './email-templates.ts';
import type { AuditOf } from './events.ts';
import { fanOutEvent } from './fanout.ts';
import { addWebhook, deleteWebhook, getWebhook, listWebhookLogs, listWebhooks, updateWebhook } from './webhooks.ts';

const audit: AuditOf = (action, o) => ({ action, resource_type: o.resourceType, resource_id: o.resourceId, details: o.details });
const outbound: Outbound = {
  async checkEndpoint(e) { if (e.includes('127.0.0.1')) throw new AppError('invalid_argument', 'invalid endpoint: requests to private/internal networks are not allowed'); },
  async post() { return { status: 200, body: 'ok' }; },
};

function domain(): AdminDomain & { store: ReturnType<typeof createMemoryAdminStore> } {
  let t = 1_800_000_000;
  return { store: createMemoryAdminStore(() => t), outbound, logger: createLogger('silent'), now: () => ++t };
}

describe('webhooks (behaviour.md §5.4)', () => {
  it('adds with a whsec_ secret, the default description and an admin.webhook_created audit event in the same transaction', async () => {
    const d = domain();
    const { id, signingSecret } = await addWebhook(d, audit, { eventName: 'user.login', endpoint: 'https://hooks.example.com/a' });
    expect(signingSecret).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);
    expect(await getWebhook(d, id)).toMatchObject({ eventName: 'user.login', eventDescription: 'user login', enabled: true, headers: {}, signingSecret });
    expect(d.store.published.map((e) => [e.name, (e.data as { action: string }).action])).toEqual([['audit.recorded', 'admin.webhook_created']]);
  });

  it('refuses a private endpoint at save and writes nothing', async () => {
    const d = domain();
    await expect(addWebhook(d, audit, { eventName: 'user.login', endpoint: 'http://127.0.0.1/' })).rejects.toMatchObject({ code: 'invalid_argument' });
    expect((await listWebhooks(d, {})).pagination.total).toBe(0);
    expect(d.store.published).toEqual([]);
  });

  it('rotates the secret only when asked, replaces headers, and names the changed fields in the audit event', async () => {
    const d = domain();
    const { id, signingSecret } = await addWebhook(d, audit, { eventName: 'user.login', endpoint: 'https://a.example.com', headers: { 'x-a': '1' } });
    expect(await updateWebhook(d, audit, { id, enabled: false })).toEqual({ signingSecret: null });
    const r = await updateWebhook(d, audit, { id, rotateSigningSecret: true, headers: {} });
    expect(r.signingSecret).toMatch(/^whsec_/);
    expect(r.signingSecret).not.toBe(signingSecret);
    expect(await getWebhook(d, id)).toMatchObject({ enabled: false, headers: {}, signingSecret: r.signingSecret });
    expect(d.store.published.slice(1).map((e) => (e.data as { details: unknown }).details)).toEqual([
      { changed_fields: ['enabled'] }, { changed_fields: ['headers', 'signing_secret'] },
    ]);
  });

  it('delete removes the webhook; unknown and blank ids answer 404 and 400', async () => {
    const d = domain();
    const { id } = await addWebhook(d, audit, { eventName: 'user.login', endpoint: 'https://a.example.com' });
    await deleteWebhook(d, audit, id);
    await expect(getWebhook(d, id)).rejects.toMatchObject({ code: 'not_found', message: 'webhook not found' });
    await expect(deleteWebhook(d, audit, ' ')).rejects.toMatchObject({ code: 'invalid_argument', message: 'webhook ID required' });
    await expect(listWebhookLogs(d, {}, id)).rejects.toMatchObject({ code: 'not_found' });
  });
});

describe('fan-out (behaviour.md §5.4 trigger, §8)', () => {
  it('queues one webhook.deliver job per enabled webhook of the event, with a delivery id stable for the event and webhook', async () => {
    const d = domain();
    const a = await addWebhook(d, audit, { eventName: 'user.signup', endpoint: 'https://a.example.com' });
    await addWebhook(d, audit, { eventName: 'user.signup', endpoint: 'https://b.example.com', enabled: false });
    await addWebhook(d, audit, { eventName: 'user.login', endpoint: 'https://c.example.com' });
    const before = d.store.published.length;
    const event = { id: 'evt-1', name: 'user.signup', occurredAt: 1_700_000_123, data: { user: { id: 'u1', email: 'x@example.com' }, signup_method: 'basic_auth' } };
    expect(await fanOutEvent(d, event)).toBe(1);
    expect(await fanOutEvent(d, event)).toBe(1);
    const jobs = d.store.published.slice(before).map((e) => e.data as { delivery_id: string; webhook_id: string; body: string });
    expect(jobs).toHaveLength(2);
    expect(jobs[0]!.delivery_id).toBe(jobs[1]!.delivery_id);
    expect(jobs[0]!.webhook_id).toBe(a.id);
    expect(JSON.parse(jobs[0]!.body)).toEqual({
      delivery_id: jobs[0]!.delivery_id, webhook_id: a.id, event_name: 'user.signup', event_description: 'user signup', created_at: 1_700_000_123,
      user: { id: 'u1', email: 'x@example.com' }, auth_recipe: 'basic_auth',
    });
    expect(await fanOutEvent(d, { ...event, name: 'email.send' })).toBe(0);
  });
});

describe('email templates (behaviour.md §5.5)', () => {
  it('refuses unsupported syntax, a second template for the event, and renames onto a taken event', async () => {
    const d = domain();
    await expect(addEmailTemplate(d, audit, { eventName: 'verify_otp', subject: 'x', template: '{{template "a"}}' }))
      .rejects.toMatchObject({ code: 'invalid_argument', message: 'unsupported template syntax: {{template "a"}}' });
    await addEmailTemplate(d, audit, { eventName: 'verify_otp', subject: 'Code', template: '<b>{{ .otp }}</b>' });
    await addEmailTemplate(d, audit, { eventName: 'forgot_password', subject: 'Reset', template: '<a href="{{.verification_url}}">x</a>' });
    await expect(addEmailTemplate(d, audit, { eventName: 'verify_otp', subject: 'x', template: 'y' }))
      .rejects.toMatchObject({ code: 'already_exists', message: 'an email template for this event already exists' });
    const t = await d.store.emailTemplates.findByEvent('forgot_password');
    await expect(updateEmailTemplate(d, audit, { id: t!.id, eventName: 'verify_otp' })).rejects.toMatchObject({ code: 'already_exists' });
  });
});

describe('audit rows (behaviour.md §5.7)', () => {
  it('an audit.recorded event becomes one row keyed by the envelope id; over-long values are cut to their columns', async () => {
    const { auditRowOf } = await import('./audit-log.ts');
    const row = auditRowOf('11111111-1111-4111-8111-111111111111', 1_700_000_000, {
      action: 'admin.fga_tuples_written', actor_type: 'admin', resource_type: 'fga_tuple', resource_id: `doc:${'x'.repeat(400)}`,
      ip_address: '127.0.0.1', user_agent: 'jest', metadata: '{"protocol":"rest","tuple_count":1}', created_at: 1_700_000_005,
    });
    expect(row).toMatchObject({ id: '11111111-1111-4111-8111-111111111111', actorId: null, actorType: 'admin', createdAt: 1_700_000_005 });
    expect(row!.resourceId).toHaveLength(255);
    expect(auditRowOf('x', 1, { metadata: '{}' })).toBeNull();
    expect(auditRowOf('y', 7, { action: 'user.logout', metadata: 'not json' })).toMatchObject({ metadata: '{}', createdAt: 7 });
  });
});
