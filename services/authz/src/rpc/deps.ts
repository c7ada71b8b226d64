/**
 * @module authz/rpc/deps
 * What every authz RPC handler receives, and the check each runs first: the engine is on (spec §1,
 * behaviour.md §7.1 "Engine off"). Who may call (super-admins for the admin operations, spec §5) is
 * the RPC's auth class, checked before any handler by the guard `service.ts` passes to defineService.
 */
import { AppError } from '@gatehouse/errors';
import type { Authenticator } from '@gatehouse/auth';
import type { HandlersOf } from '@gatehouse/rpc';
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
 * The engine, checked first by every RPC, once the caller's credentials have passed the guard.
 * @throws AppError `failed_precondition` `authorization engine is not enabled`
 */
export function requireEngine(deps: AuthzDeps): Engine {
  if (!deps.engine) throw new AppError('failed_precondition', 'authorization engine is not enabled');
  return deps.engine;
}
