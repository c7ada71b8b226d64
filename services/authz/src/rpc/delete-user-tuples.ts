/** @module authz/rpc/delete-user-tuples: DeleteUserTuples (internal; behaviour.md §7.1 User deletion, §5.3 delete_user). */
import { AppError } from '@gatehouse/errors';
import { type AuthzDeps, type AuthzHandler, admin, requireEngine } from './deps.ts';

/**
 * Deletes the tuples where `user:<user_id>` is the user or the object: `{deleted}`, how many.
 * @throws AppError `failed_precondition` (engine off); `unauthenticated` (not a super-admin credential);
 *   `invalid_argument` `user ID is missing`; `unavailable`
 */
export const deleteUserTuples = (deps: AuthzDeps): AuthzHandler<'DeleteUserTuples'> => async (req, ctx) => {
  const engine = requireEngine(deps);
  await admin(deps, ctx);
  if (!req.user_id) throw new AppError('invalid_argument', 'user ID is missing');
  return { deleted: await engine.deleteUserTuples(req.user_id) };
};
