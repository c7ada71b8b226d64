/** @module authz/rpc/expand: Expand (spec §4 `POST /v1/admin/fga/expand`, behaviour.md §7.3 fga/expand). */
import { type AuthzDeps, type AuthzHandler, admin, requireEngine } from './deps.ts';

/**
 * One level of the OpenFGA userset tree of `relation` on `object`: `{tree}`, the tree as a JSON string.
 * @throws AppError `failed_precondition` (engine off, no model); `unauthenticated` (not super-admin);
 *   `invalid_argument` (`relation and object are required`, unknown type or relation); `unavailable`
 */
export const expand = (deps: AuthzDeps): AuthzHandler<'Expand'> => async (req, ctx) => {
  const engine = requireEngine(deps);
  await admin(deps, ctx);
  return engine.expand({ relation: req.relation, object: req.object });
};
