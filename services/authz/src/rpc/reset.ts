/** @module authz/rpc/reset: Reset (spec §4 `POST /v1/admin/fga/reset`, behaviour.md §7.1 Reset). */
import { type AuthzDeps, type AuthzHandler, auditedEngineWrite, requireEngine } from './deps.ts';

/**
 * Deletes every model version, refused while any tuple exists.
 * @throws AppError `failed_precondition` (engine off; `remove all relationship tuples before resetting the
 *   authorization model`); `unavailable`
 */
export const reset = (deps: AuthzDeps): AuthzHandler<'Reset'> => async (_req, ctx) => {
  const engine = requireEngine(deps);
  await auditedEngineWrite(deps, ctx, () => engine.reset(), () => ({ action: 'admin.fga_reset', resourceType: 'fga_model', resourceId: 'all' }));
  return { message: 'Authorization model reset successfully' };
};
