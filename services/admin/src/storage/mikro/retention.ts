/**
 * @module @gatehouse/admin/storage/mikro/retention
 * admin's retention rules (issue 32), run by the libs/db sweeper (`startSweeper`); the README's
 * "Retention" table documents each. Times are Unix seconds.
 */
import type { RetentionRule } from '@gatehouse/db';

/** The two retention flags, in seconds; 0 keeps that table's rows forever. */
export interface AdminRetention {
  /** `--audit-log-retention` */
  auditLogSeconds: number;
  /** `--webhook-log-retention` */
  webhookLogSeconds: number;
}

/**
 * The tables admin sweeps: audit log rows older than `--audit-log-retention` and webhook delivery log
 * rows older than `--webhook-log-retention`, by `created_at` (indexed by `(created_at, id)` in both).
 * Not swept: webhooks and email templates (configuration, deleted by the admin).
 */
export function adminRetention(r: AdminRetention): RetentionRule[] {
  return [
    ...(r.auditLogSeconds > 0 ? [{ table: 'admin_audit_logs', key: 'id', expired: { column: 'created_at', before: (now: number) => now - r.auditLogSeconds } }] : []),
    ...(r.webhookLogSeconds > 0 ? [{ table: 'admin_webhook_logs', key: 'id', expired: { column: 'created_at', before: (now: number) => now - r.webhookLogSeconds } }] : []),
  ];
}
