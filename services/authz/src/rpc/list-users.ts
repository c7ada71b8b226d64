/** @module authz/rpc/list-users: ListUsers (spec §4 `POST /v1/admin/fga/list_users`, behaviour.md §7.3 fga/list_users). */
import { type AuthzDeps, type AuthzHandler, admin, requireEngine } from './deps.ts';

/**
 * The concrete `type:id` users of `user_type` with `relation` on `object` (plus `type:*` when a wildcard
 * grants it): `{users (sorted), truncated}`, capped at 1000.
 * @throws AppError `failed_precondition` (engine off, no model); `unauthenticated` (not super-admin);
 *   `invalid_argument` (`object, relation and user_type are required`, object form, unknown type or
 *   relation); `unavailable`
 */
export const listUsers = (deps: AuthzDeps): AuthzHandler<'ListUsers'> => async (req, ctx) => {
  const engine = requireEngine(deps);
  await admin(deps, ctx);
  return engine.listUsers({ object: req.object, relation: req.relation, user_type: req.user_type });
};
