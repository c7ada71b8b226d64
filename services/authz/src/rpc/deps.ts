/**
 * @module authz/rpc/deps
 * What every authz RPC handler receives, and the two checks that run before it does anything: the
 * engine is on (spec §1, behaviour.md §7.1 "Engine off"), and, for the admin operations, the caller
 * holds a super-admin credential (spec §5 "Admin credentials").
 */
import { AppError } from '@gatehouse/errors';
import type { Authenticator } from '@gatehouse/auth';
import type { CallContext, HandlersOf } from '@gatehouse/rpc';
import type { authz } from '@gatehouse/contracts';
import type { Engine } from '../domain/index.ts';

export interface AuthzDeps {
  /** null when the engine is off (NoSQL main database without --fga-store) */
  engine: Engine | null;
  authenticator: Authenticator;
}

/** The handler of RPC `K` of `gatehouse.authz.v1.AuthzService`, typed by the generated contract. */
export type AuthzHandler<K extends keyof authz.AuthzService> = HandlersOf<authz.AuthzService>[K];

/**
 * The engine, checked first by every RPC (before credentials, as behaviour.md §7.1 answers any engine
 * call while it is off).
 * @throws AppError `failed_precondition` `authorization engine is not enabled`
 */
export function requireEngine(deps: AuthzDeps): Engine {
  if (!deps.engine) throw new AppError('failed_precondition', 'authorization engine is not enabled');
  return deps.engine;
}

/**
 * Refuses a caller without super-admin credentials (admin header or admin session cookie, spec §5).
 * Each admin RPC calls it on a line of its own, so that the check can move to one interceptor.
 * @throws AppError `unauthenticated` `unauthorized`
 */
export async function admin(deps: AuthzDeps, ctx: CallContext): Promise<void> {
  await deps.authenticator.requireAdmin(ctx);
}
