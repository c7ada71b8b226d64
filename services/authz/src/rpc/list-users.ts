/** @module authz/rpc/list-users: ListUsers (spec §4 `POST /v1/admin/fga/list_users`, behaviour.md §7.3 fga/list_users). */
import { type AuthzDeps, type AuthzHandler, requireEngine } from './deps.ts';
import { toTuple } from './wire.ts';

/**
 * The concrete `type:id` users of `user_type` with `relation` on `object` (plus `type:*` when a wildcard
 * grants it): `{users (sorted), truncated}`, capped at 1000. Extensions: a userset filter
 * (`user_type: "group#member"` answers `group:x#member` usersets), `contextual_tuples` and a condition `context`.
 * @throws AppError `failed_precondition` (engine off, no model);
 *   `invalid_argument` (`object, relation and user_type are required`, object form, unknown type or
 *   relation; `resolution too complex`; a condition that cannot be evaluated); `unavailable`
 */
export const listUsers = (deps: AuthzDeps): AuthzHandler<'ListUsers'> => async (req) => {
  const engine = requireEngine(deps);
  return engine.listUsers({
    object: req.object, relation: req.relation, user_type: req.user_type,
    contextual_tuples: (req.contextual_tuples ?? []).map(toTuple), context: req.context,
  });
};
