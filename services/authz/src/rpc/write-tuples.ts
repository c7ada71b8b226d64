/** @module authz/rpc/write-tuples: WriteTuples (spec §4 `POST /v1/admin/fga/tuples`, behaviour.md §7.1 Write / delete). */
import { type AuthzDeps, type AuthzHandler, auditedEngineWrite, requireEngine } from './deps.ts';
import { toTuples, tupleResource } from './wire.ts';

/**
 * Writes 1–100 tuples allowed by the active model, all or nothing (an existing tuple is a no-op).
 * @throws AppError `failed_precondition` (engine off, no model);
 *   `invalid_argument` (count, form, `invalid tuple "…": …`); `unavailable`
 */
export const writeTuples = (deps: AuthzDeps): AuthzHandler<'WriteTuples'> => async (req, ctx) => {
  const engine = requireEngine(deps);
  const tuples = toTuples(req);
  await auditedEngineWrite(deps, ctx, () => engine.writeTuples(tuples), () => ({
    action: 'admin.fga_tuples_written', resourceType: 'fga_tuple', resourceId: tupleResource(tuples), details: { tuple_count: tuples.length },
  }));
  return { message: 'Tuples written successfully' };
};
