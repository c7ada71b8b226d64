/**
 * @module @gatehouse/admin/storage/mikro/retention.test
 * admin's retention rules (issue 32) on SQLite, PostgreSQL, MariaDB and MongoDB (FerretDB): audit log
 * rows older than `--audit-log-retention` and webhook log rows older than `--webhook-log-retention`
 * go, two sweepers (replicas) at once, each row once; younger rows stay; 0 keeps a table forever.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from '@jest/globals';
import { describeRetention } from '@gatehouse/db/retention-suite';
import { adminSchema } from './schema.ts';
import { adminRetention } from './retention.ts';

const AUDIT = 365 * 86_400;
const WEBHOOK = 30 * 86_400;
const audit = (createdAt: number): Record<string, unknown> => ({
  id: randomUUID(), actor_id: null, actor_type: 'super_admin', actor_email: null, action: 'admin.login_success', resource_type: 'admin_session',
  resource_id: null, ip_address: '127.0.0.1', user_agent: 'test', metadata: '{}', created_at: createdAt,
});
const log = (createdAt: number): Record<string, unknown> => ({
  id: randomUUID(), webhook_id: randomUUID(), delivery_id: randomUUID(), attempt: 1, http_status: 200, request: '{}', response: 'ok', created_at: createdAt, updated_at: createdAt,
});

describeRetention(adminSchema, adminRetention({ auditLogSeconds: AUDIT, webhookLogSeconds: WEBHOOK }), {
  admin_audit_logs: { expired: (i, now) => audit(now - AUDIT - 1 - i), live: (i, now) => audit(now - AUDIT + 1 + i) },
  admin_webhook_logs: { expired: (i, now) => log(now - WEBHOOK - 1 - i), live: (i, now) => log(now - WEBHOOK + 1 + i) },
});

describe('adminRetention', () => {
  it('0 keeps a table forever (no rule for it)', () => {
    expect(adminRetention({ auditLogSeconds: 0, webhookLogSeconds: WEBHOOK }).map((r) => r.table)).toEqual(['admin_webhook_logs']);
    expect(adminRetention({ auditLogSeconds: 0, webhookLogSeconds: 0 })).toEqual([]);
  });
});
