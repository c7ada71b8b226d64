/**
 * @module @gatehouse/admin/rpc/deps
 * What the admin service's handlers are built from: `AdminRpcDeps` for the admin session and AdminMeta
 * (the shared admin store, the secret, authn's internal API, the audit publisher), `RpcContext` for
 * webhooks, email templates and the audit log (the domain's dependencies, the credential resolution,
 * the `--client-secret` fallback key); and the handler types checked against the generated contract.
 */
import { actorOf, auditRecord, type AdminAccessStore, type Authenticator } from '@gatehouse/auth';
import type { admin, BusEventName, BusEvents, ProtoServices } from '@gatehouse/contracts';
import type { DevOutbox } from '@gatehouse/delivery';
import { AppError } from '@gatehouse/errors';
import type { CallContext, ClientOf, HandlersOf } from '@gatehouse/rpc';
import type { AdminMetaOptions } from '../domain/admin-meta.ts';
import type { AdminDomain } from '../domain/deps.ts';
import type { AuditOf } from '../domain/events.ts';
import type { WebhookLogRecord, WebhookRecord } from '../storage/ports.ts';

/** authn's internal API, for the Meta half of AdminMeta. */
export type AuthnMetaClient = Pick<ClientOf<ProtoServices['gatehouse.authn.v1.AuthnInternal']>, 'GetMeta'>;

/** The admin session and AdminMeta handlers' dependencies (behaviour.md §5.1, §5.2). */
export interface AdminRpcDeps {
  /** the deployment's credential resolution (null: every admin RPC answers 401) */
  authenticator: Authenticator | null;
  /** admin sessions and the admin-secret failure log, shared with every service (libs/auth) */
  store: AdminAccessStore;
  /** `--admin-secret` */
  adminSecret: string;
  /** `--admin-cookie-secure` */
  adminCookieSecure: boolean;
  /** the flags AdminMeta reports */
  meta: AdminMetaOptions;
  /** null (split mode without --authn-address): AdminMeta answers `unavailable` */
  authn: AuthnMetaClient | null;
  /**
   * Records one event durably before the caller answers (audit rows of the admin session, behaviour.md
   * §5.7; issue 32): the admin session lives in the session store, not in a database transaction, so
   * the event is written to admin's outbox in a transaction of its own, and the relay takes it to the bus.
   * @throws whatever the database throws (the event is not recorded)
   */
  record<N extends BusEventName>(name: N, data: BusEvents[N]): Promise<void>;
  /** Unix seconds */
  now(): number;
  /**
   * issue 33 §4: whether `--env=development` turned the development outbox on (Config's `devOutbox`), and
   * the outbox itself when the notifications worker runs in this process (all-in-one); null in split mode
   */
  devOutbox?: { enabled: boolean; outbox: DevOutbox | null };
}

/** The webhook, email template and audit log handlers' dependencies (behaviour.md §5.4–§5.7). */
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
