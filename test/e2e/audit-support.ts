/**
 * @module test/e2e/audit-support
 * Reads the audit log (behaviour.md §5.7) the way an operator does, through `/v1/admin/audit_logs`,
 * waiting for admin's consumer: since issue 23 the outboxes delete every `audit.recorded` event once
 * the bus has it, so tests can no longer read the events from the outbox tables.
 */
import type { Deployment } from '@gatehouse/testing';
import { post, sleep } from './email-support.ts';

/** One audit log row as the admin API lists it. */
export interface AuditRow {
  action: string;
  actor_id: string | null;
  /** `user`, `admin`, `service_account` (behaviour.md §5.7) */
  actor_type: string;
  resource_id: string | null;
  metadata: Record<string, unknown>;
}

/**
 * The audit rows for which `keep` holds, once every action of `actions` is among them (oldest first;
 * rows of the same second in no fixed order).
 * @throws Error when they are not all there within `timeoutMs`
 */
export async function waitForAudits(d: Deployment, keep: (r: AuditRow) => boolean, actions: string[], timeoutMs = 30_000): Promise<AuditRow[]> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const res = await post(d.url, '/v1/admin/audit_logs', { pagination: { limit: 1000 } }, { 'x-service-admin-secret': d.adminSecret });
    if (res.status !== 200) throw new Error(`audit_logs answered ${res.status}`);
    const rows = (res.body.audit_logs as Array<Omit<AuditRow, 'metadata'> & { metadata: string }>)
      .map((r) => ({ action: r.action, actor_id: r.actor_id, actor_type: r.actor_type, resource_id: r.resource_id, metadata: JSON.parse(r.metadata) as Record<string, unknown> }))
      .filter(keep).reverse();
    if (actions.every((a) => rows.some((r) => r.action === a))) return rows;
    if (Date.now() > until) throw new Error(`audit rows ${JSON.stringify(rows.map((r) => r.action))} lack some of ${JSON.stringify(actions)}`);
    await sleep(250);
  }
}
