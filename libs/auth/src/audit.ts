/**
 * @module @gatehouse/auth/audit
 * Builds the `audit.recorded` bus event (behaviour.md §5.7) from a call: who acted (the resolved
 * caller), from where (client IP, user agent) and on which surface (`protocol`, always in
 * `metadata`). Services emit it through their outbox with the state change it records, and the audit
 * consumer writes the AuditLog row, so recording never blocks or fails the request.
 */
import type { BusEvents } from '@gatehouse/contracts';
import type { CallContext } from '@gatehouse/rpc';
import type { AdminCaller, ServiceAccountCaller, UserCaller } from './authenticator.ts';
import { delegationOfCall } from './delegation.ts';

/** behaviour.md §5.7 `actor_type`, `actor_id`, `actor_email`. */
export interface AuditActor {
  type: 'user' | 'admin' | 'service_account';
  /** null for a super-admin */
  id: string | null;
  email?: string | null;
}

/** A super-admin: `actor_type: admin`, `actor_id: null` (behaviour.md §5.7). */
export const SUPER_ADMIN_ACTOR: AuditActor = Object.freeze({ type: 'admin', id: null });

/** The actor of a resolved caller: a super-admin, or the user (org admins are users, §5.7). */
export function actorOf(caller: UserCaller | AdminCaller | ServiceAccountCaller, email?: string | null): AuditActor {
  if (caller.kind === 'service_account') return { type: 'service_account', id: caller.clientId, email: null };
  return caller.kind === 'admin' ? SUPER_ADMIN_ACTOR : { type: 'user', id: caller.userId, email: email ?? null };
}

export interface AuditDetails {
  actor: AuditActor;
  /** a §5.7 resource type (`user`, `session`, `webhook`, ...) */
  resourceType?: string;
  resourceId?: string;
  /**
   * action details for `metadata` (changed field names, a tuple count, a failure reason); never a
   * secret value. `protocol` is added from the call and cannot be overridden.
   */
  details?: Record<string, unknown>;
  /** Unix seconds; default now */
  at?: number;
}

/**
 * The `audit.recorded` event for `action` performed in the call `ctx` (behaviour.md §5.7).
 * When the call was made with a delegated token (RFC 8693 `act`, issue 34 §3) and the actor is the user
 * it acts for, the row names the agent instead: `actor_type: service_account`, `actor_id` the agent's
 * client id, and `metadata.user_id` (and `user_email` when known) the user, `metadata.act` the chain of
 * actors, current first (as the `token.exchanged` row does).
 * @param action a §5.7 action name, e.g. `user.login_success`, `admin.user_updated`
 * @returns the event data, to be emitted through the service's outbox (`events.emit('audit.recorded', …)`)
 */
export function auditRecord(ctx: CallContext, action: string, o: AuditDetails): BusEvents['audit.recorded'] {
  const delegation = o.actor.type === 'user' ? delegationOfCall(ctx) : null;
  if (delegation !== null && o.actor.id === delegation.userId) {
    const user = { user_id: delegation.userId, ...(o.actor.email ? { user_email: o.actor.email } : {}), act: [...delegation.chain] };
    return auditRecord(ctx, action, { ...o, actor: { type: 'service_account', id: delegation.clientId, email: null }, details: { ...o.details, ...user } });
  }
  return {
    action,
    actor_id: o.actor.id ?? undefined,
    actor_type: o.actor.type,
    actor_email: o.actor.email ?? undefined,
    resource_type: o.resourceType,
    resource_id: o.resourceId,
    ip_address: ctx.clientIp,
    user_agent: ctx.headers['user-agent'] ?? '',
    metadata: JSON.stringify({ ...o.details, protocol: ctx.protocol }),
    created_at: o.at ?? Math.floor(Date.now() / 1000),
  };
}
