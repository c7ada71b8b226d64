/**
 * @module authz/rpc/deps
 * What every authz RPC handler receives, and the check each runs first: the engine is on (spec §1,
 * behaviour.md §7.1 "Engine off"). Who may call (super-admins for the admin operations, spec §5) is
 * the RPC's auth class, checked before any handler by the guard `service.ts` passes to defineService.
 */
import { AppError } from '@gatehouse/errors';
import { actorOf, auditRecord, type Authenticator } from '@gatehouse/auth';
import type { CallContext, HandlersOf } from '@gatehouse/rpc';
import type { authz, BusEvents } from '@gatehouse/contracts';
import type { Engine } from '../domain/index.ts';

export interface AuthzDeps {
  /** null when the engine is off (NoSQL main database without --fga-store) */
  engine: Engine | null;
  authenticator: Authenticator;
  /**
   * Publishes an `audit.recorded` event (behaviour.md §5.7) after an admin write has committed; never
   * throws (the engine's store has no outbox of ours, so the event goes to the bus directly and a
   * failure is logged). Absent: nothing is recorded.
   */
  audit?: (record: BusEvents['audit.recorded']) => void;
}

/**
 * Records an engine admin action of `ctx` (behaviour.md §5.7: `admin.fga_*`, resource `fga_model`
 * or `fga_tuple`) by the caller the guard already resolved.
 */
export async function recordEngineAction(deps: AuthzDeps, ctx: CallContext, action: string, resourceType: string, resourceId: string, details: Record<string, unknown> = {}): Promise<void> {
  if (!deps.audit) return;
  const actor = actorOf(await deps.authenticator.resolveCaller(ctx));
  deps.audit(auditRecord(ctx, action, { actor, resourceType, resourceId, details }));
}

/** The handler of RPC `K` of `gatehouse.authz.v1.AuthzService`, typed by the generated contract. */
export type AuthzHandler<K extends keyof authz.AuthzService> = HandlersOf<authz.AuthzService>[K];

/**
 * The engine, checked first by every RPC, once the caller's credentials have passed the guard.
 * @throws AppError `failed_precondition` `authorization engine is not enabled`
 */
export function requireEngine(deps: AuthzDeps): Engine {
  if (!deps.engine) throw new AppError('failed_precondition', 'authorization engine is not enabled');
  return deps.engine;
}
