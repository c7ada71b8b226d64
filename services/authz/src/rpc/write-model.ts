/** @module authz/rpc/write-model: WriteModel (spec §4 `POST /v1/admin/fga/model`, behaviour.md §7.1). */
import { type AuthzDeps, type AuthzHandler, auditedEngineWrite, requireEngine } from './deps.ts';

/**
 * Appends a model version written in the OpenFGA DSL (schema 1.1, at most 256 KiB) and makes it active:
 * `{id (ULID), dsl (as submitted)}`. An absent `dsl` is '' (`dsl is required`).
 * @throws AppError `failed_precondition` (engine off);
 *   `invalid_argument` (invalid model); `unavailable`
 */
export const writeModel = (deps: AuthzDeps): AuthzHandler<'WriteModel'> => async (req, ctx) => {
  const engine = requireEngine(deps);
  const model = await auditedEngineWrite(deps, ctx, () => engine.writeModel(req.dsl ?? ''),
    (facts) => ({ action: 'admin.fga_model_written', resourceType: 'fga_model', resourceId: facts.modelId ?? facts.result?.id ?? '' }));
  return model;
};
