/**
 * @module @gatehouse/admin/domain/audit-log
 * The audit log (behaviour.md §5.7): the consumer side that turns an `audit.recorded` event into one
 * AuditLog row, and the `audit_logs` query (exact-match filters, time range, newest first, §10).
 */
import { AppError } from '@gatehouse/errors';
import type { AuditFilter, AuditLogRecord } from '../storage/ports.ts';
import type { AdminDomain } from './deps.ts';
import { pageWindow, paginationOf, type PaginationInput } from '@gatehouse/contracts/pagination';

const str = (v: unknown): string | null => (typeof v === 'string' && v !== '' ? v : null);
/** Cut to the column's size, so an over-long value is stored shortened rather than retried forever. */
const cut = (v: string | null, max: number): string | null => (v === null ? null : v.slice(0, max));

/**
 * The row of one `audit.recorded` event; its id is the envelope id, so a redelivery inserts nothing.
 * @returns null when the event carries no action (malformed: logged and dropped by the consumer)
 */
export function auditRowOf(eventId: string, occurredAt: number, data: Record<string, unknown>): AuditLogRecord | null {
  const action = str(data['action']);
  if (!action) return null;
  const created = Number(data['created_at']);
  let metadata = typeof data['metadata'] === 'string' ? data['metadata'] : '{}';
  try {
    if (typeof JSON.parse(metadata) !== 'object') metadata = '{}';
  } catch {
    metadata = '{}';
  }
  return {
    id: eventId,
    actorId: cut(str(data['actor_id']), 64),
    actorType: cut(str(data['actor_type']), 32) ?? 'user',
    actorEmail: cut(str(data['actor_email']), 320),
    action: action.slice(0, 128),
    resourceType: cut(str(data['resource_type']), 64),
    resourceId: cut(str(data['resource_id']), 255),
    ipAddress: (str(data['ip_address']) ?? '').slice(0, 64),
    userAgent: (str(data['user_agent']) ?? '').slice(0, 1024),
    metadata,
    createdAt: Number.isSafeInteger(created) && created > 0 ? created : occurredAt,
  };
}

export interface AuditQuery extends AuditFilter {
  pagination?: PaginationInput | null;
}

function timestamp(name: string, v: unknown): number | null {
  if (v === null || v === undefined || v === '') return null;
  const n = Number(v);
  if (!Number.isSafeInteger(n) || n < 0) throw new AppError('invalid_argument', `${name} must be a Unix timestamp in seconds`);
  return n;
}

/** @throws AppError `invalid_argument` (pagination, a negative or non-integer timestamp) */
export async function listAuditLogs(d: AdminDomain, q: AuditQuery) {
  const w = pageWindow(q.pagination);
  const blankToNull = (s: string | null | undefined): string | null => (s && s.trim() !== '' ? s.trim() : null);
  const page = await d.store.auditLogs.list({
    action: blankToNull(q.action), actorId: blankToNull(q.actorId), resourceType: blankToNull(q.resourceType), resourceId: blankToNull(q.resourceId),
    fromTimestamp: timestamp('from_timestamp', q.fromTimestamp), toTimestamp: timestamp('to_timestamp', q.toTimestamp),
  }, w);
  return { auditLogs: page.rows, pagination: paginationOf(w, page.total) };
}
