/**
 * @module @gatehouse/admin/consumers/audit-recorded
 * The audit consumer (behaviour.md §5.7): one AuditLog row per `audit.recorded` event, written
 * after the request that emitted it has answered. A failing store throws, so the bus redelivers the
 * event later; the row id is the envelope id, so a redelivery writes nothing twice.
 */
import type { Envelope } from '@gatehouse/bus';
import type { Logger } from '@gatehouse/observability';
import { auditRowOf } from '../domain/audit-log.ts';
import type { AdminStore } from '../storage/ports.ts';

/** Durable consumer name. */
export const AUDIT_CONSUMER = 'admin-audit';

/** The handler given to `Bus.consume` for `audit.recorded`. */
export function auditRecordedHandler(store: AdminStore, logger: Logger) {
  return async (envelope: Envelope): Promise<void> => {
    const data = envelope.data;
    const row = data && typeof data === 'object' ? auditRowOf(envelope.id, envelope.occurredAt, data as Record<string, unknown>) : null;
    if (!row) {
      logger.error({ event_id: envelope.id, source: envelope.source }, 'audit event without an action dropped');
      return;
    }
    await store.auditLogs.insert(row);
  };
}
