/** @module authz/rpc/expand: Expand (spec §4 `POST /v1/admin/fga/expand`, behaviour.md §7.3 fga/expand). */
import { type AuthzDeps, type AuthzHandler, requireEngine } from './deps.ts';

/**
 * One level of the OpenFGA userset tree of `relation` on `object`: `{tree}`, the tree as a JSON string.
 * @throws AppError `failed_precondition` (engine off, no model);
 *   `invalid_argument` (`relation and object are required`, unknown type or relation); `unavailable`
 */
export const expand = (deps: AuthzDeps): AuthzHandler<'Expand'> => async (req) => {
  const engine = requireEngine(deps);
  return engine.expand({ relation: req.relation, object: req.object });
};
