/**
 * @module @gatehouse/admin/rpc/deps
 * What every admin RPC handler receives (the domain's dependencies, the credential resolution, the
 * `--client-secret` fallback key) and the handler types checked against the generated contract.
 */
import { actorOf, auditRecord, type Authenticator } from '@gatehouse/auth';
import type { admin } from '@gatehouse/contracts';
import { AppError } from '@gatehouse/errors';
import type { CallContext, HandlersOf } from '@gatehouse/rpc';
import type { AdminDomain } from '../domain/deps.ts';
import type { AuditOf } from '../domain/events.ts';
import type { WebhookLogRecord, WebhookRecord } from '../storage/ports.ts';

export interface RpcContext extends AdminDomain {
  /** null: every admin RPC answers 401 */
  authenticator: Authenticator | null;
  /** `--client-secret`: the signing key of a carried-over webhook without its own (§5.4) */
  clientSecret: string;
}

/** The handler of RPC `K` of `gatehouse.admin.v1.AdminService`. */
export type AdminHandler<K extends keyof admin.AdminService> = HandlersOf<admin.AdminService>[K];
/** The handler of RPC `K` of `gatehouse.admin.v1.AdminInternal`. */
export type AdminInternalHandler<K extends keyof admin.AdminInternal> = HandlersOf<admin.AdminInternal>[K];

/**
 * The audit builder of an admin call (behaviour.md §5.7): the super-admin (or org-admin user) who
 * called, the client IP, the user agent and the protocol.
 * @throws AppError `unauthenticated` `unauthorized` without admin credentials
 */
export async function adminAudit(c: RpcContext, ctx: CallContext): Promise<AuditOf> {
  if (!c.authenticator) throw new AppError('unauthenticated', 'unauthorized');
  const actor = actorOf(await c.authenticator.requireAdmin(ctx));
  return (action, o) => auditRecord(ctx, action, { actor, resourceType: o.resourceType, resourceId: o.resourceId, details: o.details ?? {} });
}

/** A webhook as the API shows it (the secret never leaves). */
export function webhookWire(w: WebhookRecord): admin.Webhook {
  return {
    id: w.id, event_name: w.eventName, event_description: w.eventDescription, endpoint: w.endpoint, enabled: w.enabled,
    headers: w.headers, created_at: w.createdAt, updated_at: w.updatedAt,
  };
}

/** A webhook log row as the API shows it. */
export function webhookLogWire(l: WebhookLogRecord): admin.WebhookLog {
  return {
    id: l.id, webhook_id: l.webhookId, delivery_id: l.deliveryId, attempt: l.attempt, http_status: l.httpStatus,
    request: l.request, response: l.response, created_at: l.createdAt, updated_at: l.updatedAt,
  };
}
