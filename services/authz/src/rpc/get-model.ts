/** @module authz/rpc/get-model: GetModel (spec §4 `GET /v1/admin/fga/model`, behaviour.md §7.1 Versions). */
import { type AuthzDeps, type AuthzHandler, admin, requireEngine } from './deps.ts';

/**
 * The active authorization model `{id, dsl}`; `{id: '', dsl: ''}` on an empty store.
 * @throws AppError `failed_precondition` (engine off); `unauthenticated` (not super-admin); `unavailable`
 */
export const getModel = (deps: AuthzDeps): AuthzHandler<'GetModel'> => async (_req, ctx) => {
  const engine = requireEngine(deps);
  await admin(deps, ctx);
  return engine.getModel();
};
