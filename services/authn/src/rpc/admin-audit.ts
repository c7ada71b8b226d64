/** @module @gatehouse/authn/rpc/admin-audit — the AdminAudit of one super-admin call (behaviour.md §5.7). */
import { SUPER_ADMIN_ACTOR, auditRecord } from '@gatehouse/auth';
import type { CallContext } from '@gatehouse/rpc';
import type { AdminAudit } from '../domain/admin-users.ts';

/** Emits `audit.recorded` for the call's super-admin on a `user` resource, through the transaction's outbox. */
export const adminAuditOf = (ctx: CallContext): AdminAudit => (events, action, o) => {
  events.emit('audit.recorded', auditRecord(ctx, action, { actor: SUPER_ADMIN_ACTOR, resourceType: 'user', resourceId: o.resourceId, ...(o.details ? { details: o.details } : {}) }));
};
