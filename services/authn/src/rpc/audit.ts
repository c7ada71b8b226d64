/**
 * @module @gatehouse/authn/rpc/audit
 * The user actions of behaviour.md §5.7 that authn performs, recorded as `audit.recorded` events
 * through authn's outbox once the action has succeeded (or, for `user.login_failed`, been refused).
 * Recording is best effort at this point: a failure is logged and never changes the answer.
 */
import { auditRecord } from '@gatehouse/auth';
import type { CallContext } from '@gatehouse/rpc';
import type { RpcContext } from './deps.ts';

/** Who acted and on what: the user (id when known, else the email given), the resource, safe details. */
export interface UserAudit {
  userId?: string | null;
  email?: string | null;
  /** default `user` (the acting user's own record) */
  resourceType?: string;
  /** default the user's id */
  resourceId?: string | null;
  details?: Record<string, unknown>;
}

/** Emits one §5.7 user action of this call. Never throws. */
export async function recordUserAction(c: RpcContext, ctx: CallContext, action: string, o: UserAudit): Promise<void> {
  try {
    const email = o.email?.trim().toLowerCase() || null;
    let userId = o.userId ?? null;
    // an anonymous flow names the account by email; its id is looked up so filters by actor_id work
    if (!userId && email) userId = (await c.users.findByEmail(email))?.id ?? null;
    const record = auditRecord(ctx, action, {
      actor: { type: 'user', id: userId, email },
      resourceType: o.resourceType ?? 'user',
      ...((o.resourceId ?? userId) ? { resourceId: (o.resourceId ?? userId)! } : {}),
      details: o.details ?? {},
      at: c.now(),
    });
    await c.users.transaction(async (tx) => { tx.events.emit('audit.recorded', record); });
  } catch (err) {
    c.logger.warn({ err, action }, 'audit event not recorded');
  }
}
