/** @module authz/rpc/write-model: WriteModel (spec §4 `POST /v1/admin/fga/model`, behaviour.md §7.1). */
import { type AuthzDeps, type AuthzHandler, recordEngineAction, requireEngine } from './deps.ts';

/**
 * Appends a model version written in the OpenFGA DSL (schema 1.1, at most 256 KiB) and makes it active:
 * `{id (ULID), dsl (as submitted)}`. An absent `dsl` is '' (`dsl is required`).
 * @throws AppError `failed_precondition` (engine off);
 *   `invalid_argument` (invalid model); `unavailable`
 */
export const writeModel = (deps: AuthzDeps): AuthzHandler<'WriteModel'> => async (req, ctx) => {
  const engine = requireEngine(deps);
  const model = await engine.writeModel(req.dsl ?? '');
  await recordEngineAction(deps, ctx, 'admin.fga_model_written', 'fga_model', model.id);
  return model;
};
