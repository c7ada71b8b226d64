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
import type { DelegatedPermissions, Engine } from '../domain/index.ts';

export interface AuthzDeps {
  /** null when the engine is off (NoSQL main database without --fga-store) */
  engine: Engine | null;
  authenticator: Authenticator;
  /**
   * `--delegated-permissions`: how check_permissions and list_permissions answer a delegated token (RFC 8693
   * `act`) when the model declares `type agent`: `intersection` (default) perms(agent) ∩ perms(user), or
   * `user` the user's alone (issue 34 §3)
   */
  delegatedPermissions?: DelegatedPermissions;
  /**
   * Records the `audit.recorded` event of an engine admin write (behaviour.md §5.7; issue 32): in the
   * write's own transaction when the store has an outbox (the SQL store), else in the outbox right after
   * it, or on the bus where authz has no database (memory or OpenFGA store). Absent: nothing is recorded.
   */
  audit?: EngineAudit;
}

/** What an audited write knows once it ran: the stored model's id (from the store, or the result). */
export interface WriteFacts<T> {
  modelId?: string;
  result?: T;
}

/** How authz records the audit event of an engine admin write (main.ts builds it). */
export interface EngineAudit {
  /** runs `write`, recording `record`'s event with it; throws what `write` throws (nothing recorded then) */
  around<T>(write: () => Promise<T>, record: (facts: WriteFacts<T>) => BusEvents['audit.recorded']): Promise<T>;
}

/** The audited facts of an engine admin action (behaviour.md §5.7: `admin.fga_*`, resource `fga_model` or `fga_tuple`). */
export interface EngineAction {
  action: string;
  resourceType: string;
  resourceId: string;
  details?: Record<string, unknown>;
}

/**
 * Runs an engine admin write of `ctx` and records its audit event with it, by the caller the guard
 * already resolved; `describe` names the action once the write's facts are known.
 * @throws what `write` throws
 */
export async function auditedEngineWrite<T>(deps: AuthzDeps, ctx: CallContext, write: () => Promise<T>, describe: (facts: WriteFacts<T>) => EngineAction): Promise<T> {
  if (!deps.audit) return write();
  const actor = actorOf(await deps.authenticator.resolveCaller(ctx));
  return deps.audit.around(write, (facts) => {
    const a = describe(facts);
    return auditRecord(ctx, a.action, { actor, resourceType: a.resourceType, resourceId: a.resourceId, details: a.details ?? {} });
  });
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
