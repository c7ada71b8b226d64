/** @module authz/rpc/delete-tuples: DeleteTuples (spec §4 `POST /v1/admin/fga/tuples/delete`, behaviour.md §7.1 Write / delete). */
import { type AuthzDeps, type AuthzHandler, auditedEngineWrite, requireEngine } from './deps.ts';
import { toTuples, tupleResource } from './wire.ts';

/**
 * Deletes 1–100 tuples in `type:id` form, all or nothing (a missing tuple is a no-op; the model is not consulted).
 * @throws AppError `failed_precondition` (engine off);
 *   `invalid_argument` (count, form); `unavailable`
 */
export const deleteTuples = (deps: AuthzDeps): AuthzHandler<'DeleteTuples'> => async (req, ctx) => {
  const engine = requireEngine(deps);
  const tuples = toTuples(req);
  await auditedEngineWrite(deps, ctx, () => engine.deleteTuples(tuples), () => ({
    action: 'admin.fga_tuples_deleted', resourceType: 'fga_tuple', resourceId: tupleResource(tuples), details: { tuple_count: tuples.length },
  }));
  return { message: 'Tuples deleted successfully' };
};
