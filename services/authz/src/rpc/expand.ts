/** @module authz/rpc/expand: Expand (spec §4 `POST /v1/admin/fga/expand`, behaviour.md §7.3 fga/expand). */
import { type AuthzDeps, type AuthzHandler, requireEngine } from './deps.ts';
import { toTuple } from './wire.ts';

/**
 * One level of the OpenFGA userset tree of `relation` on `object`: `{tree}`, the tree as a JSON string.
 * Extension: `contextual_tuples` (at most 100) count as stored for this expansion and are not written
 * (OpenFGA `ExpandRequest.contextual_tuples`, openfga/api v1 `openfga.proto`).
 * @throws AppError `failed_precondition` (engine off, no model);
 *   `invalid_argument` (`relation and object are required`, unknown type or relation, a contextual
 *   tuple the model does not allow, more than 100 of them); `unavailable`
 */
export const expand = (deps: AuthzDeps): AuthzHandler<'Expand'> => async (req) => {
  const engine = requireEngine(deps);
  return engine.expand({ relation: req.relation, object: req.object, contextual_tuples: (req.contextual_tuples ?? []).map(toTuple) });
};
