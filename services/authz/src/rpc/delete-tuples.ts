/** @module authz/rpc/delete-tuples: DeleteTuples (spec §4 `POST /v1/admin/fga/tuples/delete`, behaviour.md §7.1 Write / delete). */
import { type AuthzDeps, type AuthzHandler, admin, requireEngine } from './deps.ts';
import { toTuples } from './wire.ts';

/**
 * Deletes 1–100 tuples in `type:id` form, all or nothing (a missing tuple is a no-op; the model is not consulted).
 * @throws AppError `failed_precondition` (engine off); `unauthenticated` (not super-admin);
 *   `invalid_argument` (count, form); `unavailable`
 */
export const deleteTuples = (deps: AuthzDeps): AuthzHandler<'DeleteTuples'> => async (req, ctx) => {
  const engine = requireEngine(deps);
  await admin(deps, ctx);
  await engine.deleteTuples(toTuples(req));
  return { message: 'Tuples deleted successfully' };
};
