/**
 * @module @gatehouse/admin/storage/ports.suite
 * Conformance suite every {@link AdminStore} implementation passes (STYLE §8): memory, SQLite (unit
 * run), PostgreSQL and MariaDB (integration run). Titles use behaviour.md §5.4, §5.5, §5.7 and §10.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Envelope } from '@gatehouse/bus';
import type { AdminStore, AuditLogRecord, EmailTemplateRecord, WebhookLogRecord, WebhookRecord } from './ports.ts';

export interface AdminStoreHandle {
  readonly store: AdminStore;
  /** every envelope committed so far, in commit order (the rows of `admin_outbox`) */
  outbox(): Promise<Envelope[]>;
  close(): Promise<void>;
}

/** `open` gets the clock (Unix seconds) the store must stamp on the envelopes it writes. */
export type OpenAdminStore = (clock: () => number) => Promise<AdminStoreHandle>;

/** A year-2100 time: past 2^31, so 32-bit columns would not hold it. */
const Y2100 = 4_102_444_800;

const webhook = (over: Partial<WebhookRecord> = {}): WebhookRecord => ({
  id: randomUUID(), eventName: 'user.signup', eventDescription: 'user signup', endpoint: 'https://hooks.example.com/in',
  enabled: true, headers: { 'x-api-key': 'k' }, signingSecret: 'whsec_x', createdAt: 1_700_000_000, updatedAt: 1_700_000_000, ...over,
});
const log = (webhookId: string, over: Partial<WebhookLogRecord> = {}): WebhookLogRecord => ({
  id: randomUUID(), webhookId, deliveryId: randomUUID(), attempt: 1, httpStatus: 200, request: '{"a":1}', response: 'ok',
  createdAt: 1_700_000_000, updatedAt: 1_700_000_000, ...over,
});
const template = (over: Partial<EmailTemplateRecord> = {}): EmailTemplateRecord => ({
  id: randomUUID(), eventName: 'forgot_password', subject: 'Reset', template: '<p>{{.verification_url}}</p>', design: '',
  createdAt: 1_700_000_000, updatedAt: 1_700_000_000, ...over,
});
const audit = (over: Partial<AuditLogRecord> = {}): AuditLogRecord => ({
  id: randomUUID(), actorId: null, actorType: 'admin', actorEmail: null, action: 'admin.webhook_created', resourceType: 'webhook',
  resourceId: randomUUID(), ipAddress: '127.0.0.1', userAgent: 'jest', metadata: '{"protocol":"rest"}', createdAt: 1_700_000_000, ...over,
});

/** Registers the suite for one implementation. `open` runs once in beforeAll; tests share the store. */
export function describeAdminStore(name: string, open: OpenAdminStore): void {
  describe(`AdminStore conformance: ${name}`, () => {
    let h: AdminStoreHandle;
    let s: AdminStore;
    beforeAll(async () => {
      h = await open(() => Y2100);
      s = h.store;
    });
    afterAll(async () => { await h?.close(); });

    describe('webhooks (behaviour.md §5.4)', () => {
      it('stores a webhook with its headers, secret and a year-2100 time, and reads it back', async () => {
        const w = webhook({ createdAt: Y2100, updatedAt: Y2100, headers: { 'x-a': '1', 'x-b': 'two' } });
        await s.transaction((tx) => tx.webhooks.insert(w));
        expect(await s.webhooks.get(w.id)).toEqual(w);
        expect(await s.webhooks.get(randomUUID())).toBeNull();
      });

      it('update replaces the row, and reports an unknown id', async () => {
        const w = webhook();
        await s.transaction((tx) => tx.webhooks.insert(w));
        const changed = { ...w, endpoint: 'https://b.example.com/', enabled: false, headers: {}, signingSecret: 'whsec_y', updatedAt: w.updatedAt + 5 };
        expect(await s.transaction((tx) => tx.webhooks.update(changed))).toBe(true);
        expect(await s.webhooks.get(w.id)).toEqual(changed);
        expect(await s.transaction((tx) => tx.webhooks.update(webhook()))).toBe(false);
      });

      it('enabledFor lists only the enabled webhooks of that event', async () => {
        const event = `user.login.${randomUUID()}`;
        const on = webhook({ eventName: event });
        const off = webhook({ eventName: event, enabled: false });
        await s.transaction(async (tx) => { await tx.webhooks.insert(on); await tx.webhooks.insert(off); });
        expect((await s.webhooks.enabledFor(event)).map((w) => w.id)).toEqual([on.id]);
      });

      it('delete removes the webhook and its logs', async () => {
        const w = webhook();
        await s.transaction((tx) => tx.webhooks.insert(w));
        await s.webhookLogs.insert(log(w.id));
        expect(await s.transaction((tx) => tx.webhooks.delete(w.id))).toBe(true);
        expect(await s.webhooks.get(w.id)).toBeNull();
        expect((await s.webhookLogs.list({ offset: 0, limit: 10 }, w.id)).total).toBe(0);
        expect(await s.transaction((tx) => tx.webhooks.delete(w.id))).toBe(false);
      });

      it('a transaction that throws writes nothing and emits nothing', async () => {
        const before = (await h.outbox()).length;
        const w = webhook();
        await expect(s.transaction(async (tx) => {
          await tx.webhooks.insert(w);
          tx.events.emit('audit.recorded', { action: 'x' });
          throw new Error('boom');
        })).rejects.toThrow('boom');
        expect(await s.webhooks.get(w.id)).toBeNull();
        expect(await h.outbox()).toHaveLength(before);
      });

      it('events emitted in a transaction are committed with it, stamped by the clock', async () => {
        const before = (await h.outbox()).length;
        await s.transaction(async (tx) => { tx.events.emit('webhook.deliver', { delivery_id: 'd' }); });
        const out = (await h.outbox()).slice(before);
        expect(out.map((e) => ({ name: e.name, source: e.source, occurredAt: e.occurredAt, data: e.data })))
          .toEqual([{ name: 'webhook.deliver', source: 'admin', occurredAt: Y2100, data: { delivery_id: 'd' } }]);
      });
    });

    describe('lists (behaviour.md §10)', () => {
      it('webhook logs: newest first, filtered by webhook, with the total and a page past the end', async () => {
        const w = webhook();
        await s.transaction((tx) => tx.webhooks.insert(w));
        const rows = [1, 2, 3].map((i) => log(w.id, { attempt: i, createdAt: 1_800_000_000 + i, updatedAt: 1_800_000_000 + i }));
        for (const r of rows) expect(await s.webhookLogs.insert(r)).toBe(true);
        expect(await s.webhookLogs.insert(rows[0]!)).toBe(false);
        const first = await s.webhookLogs.list({ offset: 0, limit: 2 }, w.id);
        expect(first.total).toBe(3);
        expect(first.rows.map((r) => r.attempt)).toEqual([3, 2]);
        expect(first.rows[0]).toEqual(rows[2]);
        const past = await s.webhookLogs.list({ offset: 10, limit: 2 }, w.id);
        expect(past).toEqual({ rows: [], total: 3 });
        expect((await s.webhookLogs.list({ offset: 0, limit: 1000 }, null)).total).toBeGreaterThanOrEqual(3);
      });

      it('webhooks: created_at desc, then id', async () => {
        const all = await s.webhooks.list({ offset: 0, limit: 1000 });
        const keys = all.rows.map((r) => [r.createdAt, r.id] as const);
        const sorted = [...keys].sort((a, b) => b[0] - a[0] || (a[1] < b[1] ? 1 : -1));
        expect(keys).toEqual(sorted);
        expect(all.total).toBe(all.rows.length);
      });
    });

    describe('email templates (behaviour.md §5.5)', () => {
      it('one template per event: a second insert for the event is refused', async () => {
        const t = template({ eventName: 'verify_otp' });
        expect(await s.transaction((tx) => tx.emailTemplates.insert(t))).toBe(true);
        expect(await s.transaction((tx) => tx.emailTemplates.insert(template({ eventName: 'verify_otp' })))).toBe(false);
        expect(await s.emailTemplates.findByEvent('verify_otp')).toEqual(t);
        expect(await s.emailTemplates.get(t.id)).toEqual(t);
      });

      it('update: updated, missing, and conflict when another template has the event', async () => {
        const a = template({ eventName: 'update_email' });
        const b = template({ eventName: 'invite_member' });
        await s.transaction(async (tx) => { await tx.emailTemplates.insert(a); await tx.emailTemplates.insert(b); });
        expect(await s.transaction((tx) => tx.emailTemplates.update({ ...a, subject: 'New', updatedAt: a.updatedAt + 1 }))).toBe('updated');
        expect((await s.emailTemplates.get(a.id))?.subject).toBe('New');
        expect(await s.transaction((tx) => tx.emailTemplates.update({ ...a, eventName: 'invite_member' }))).toBe('conflict');
        expect(await s.transaction((tx) => tx.emailTemplates.update(template({ eventName: 'magic_link_login' })))).toBe('missing');
        expect(await s.transaction((tx) => tx.emailTemplates.delete(b.id))).toBe(true);
        expect(await s.emailTemplates.findByEvent('invite_member')).toBeNull();
        const page = await s.emailTemplates.list({ offset: 0, limit: 10 });
        expect(page.rows.map((r) => r.id)).toContain(a.id);
      });
    });

    describe('audit log (behaviour.md §5.7)', () => {
      it('insert is idempotent on the id', async () => {
        const row = audit();
        expect(await s.auditLogs.insert(row)).toBe(true);
        expect(await s.auditLogs.insert(row)).toBe(false);
        expect((await s.auditLogs.list({ resourceId: row.resourceId }, { offset: 0, limit: 10 })).rows).toEqual([row]);
      });

      it('exact-match filters and an inclusive time range, newest first', async () => {
        const actor = randomUUID();
        const rows = [
          audit({ actorId: actor, actorType: 'user', action: 'user.login_success', resourceType: 'user', resourceId: actor, createdAt: 1_900_000_001 }),
          audit({ actorId: actor, actorType: 'user', action: 'user.logout', resourceType: 'session', resourceId: 's1', createdAt: 1_900_000_002 }),
          audit({ actorId: actor, actorType: 'user', action: 'user.login_success', resourceType: 'user', resourceId: actor, createdAt: 1_900_000_003 }),
        ];
        for (const r of rows) await s.auditLogs.insert(r);
        const w = { offset: 0, limit: 10 };
        expect((await s.auditLogs.list({ actorId: actor }, w)).rows.map((r) => r.createdAt)).toEqual([1_900_000_003, 1_900_000_002, 1_900_000_001]);
        expect((await s.auditLogs.list({ actorId: actor, action: 'user.login_success' }, w)).total).toBe(2);
        expect((await s.auditLogs.list({ actorId: actor, resourceType: 'session', resourceId: 's1' }, w)).rows).toEqual([rows[1]]);
        expect((await s.auditLogs.list({ actorId: actor, fromTimestamp: 1_900_000_002, toTimestamp: 1_900_000_003 }, w)).total).toBe(2);
        expect((await s.auditLogs.list({ actorId: actor, toTimestamp: 1_900_000_001 }, w)).rows).toEqual([rows[0]]);
        expect(await s.auditLogs.list({ actorId: actor }, { offset: 5, limit: 10 })).toEqual({ rows: [], total: 3 });
        expect((await s.auditLogs.list({ action: 'user.login_success', actorId: randomUUID() }, w)).total).toBe(0);
      });
    });
  });
}
