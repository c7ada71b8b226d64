/**
 * @module @gatehouse/authn/domain/relations
 * `required_relations` on session, validate_jwt_token and validate_session (behaviour.md §7.4):
 * AND semantics, fail closed.
 */
import { AppError } from '@gatehouse/errors';
import type { AuthnContext } from './deps.ts';
import type { RequiredRelation } from './validation.ts';

/**
 * @throws AppError `failed_precondition` `authorization engine is not enabled` when no engine is wired;
 *   `permission_denied` `unauthorized` on any denial; `unavailable` when the engine fails
 */
export async function assertRelations(c: AuthnContext, userId: string, relations: readonly RequiredRelation[]): Promise<void> {
  if (relations.length === 0) return;
  if (!c.permissions) throw new AppError('failed_precondition', 'authorization engine is not enabled');
  let allowed: boolean;
  try {
    allowed = await c.permissions.checkAll(`user:${userId}`, relations);
  } catch (err) {
    if (err instanceof AppError) throw err;
    throw new AppError('unavailable', 'authorization engine is unavailable', { cause: err });
  }
  if (!allowed) throw new AppError('permission_denied', 'unauthorized');
}
