/** @module authz/rpc/list-permissions: ListPermissions (spec §4 `POST /v1/list_permissions`, behaviour.md §7.3). */
import { type AuthzDeps, type AuthzHandler, requireEngine } from './deps.ts';
import { intersectPermissions } from '../domain/index.ts';
import { pinPermissionSubjects } from './subject.ts';
import { toTuple } from './wire.ts';

/**
 * Every permission the pinned subject holds, optionally filtered by `relation` and `object_type`:
 * `{objects, permissions: [{object, relation}], truncated}`, capped at 1000 entries. Extensions:
 * `contextual_tuples` (at most 100, validated like written tuples) and a condition `context`. For a
 * delegated token (RFC 8693 `act`) under a model declaring `type agent`, the entries both the user and
 * `agent:<client id>` hold (issue 34 §3).
 * @throws AppError `failed_precondition` (engine off, no model); `unauthenticated`, `permission_denied`,
 *   `invalid_argument` (see pinSubject; unknown type or relation); `unavailable`
 */
export const listPermissions = (deps: AuthzDeps): AuthzHandler<'ListPermissions'> => async (req, ctx) => {
  const engine = requireEngine(deps);
  const { subject, agent } = await pinPermissionSubjects(deps.authenticator, engine, deps.delegatedPermissions ?? 'intersection', ctx, req.user);
  const filter = {
    relation: req.relation, object_type: req.object_type,
    contextual_tuples: (req.contextual_tuples ?? []).map(toTuple), context: req.context,
  };
  const mine = await engine.listPermissions(subject, filter);
  return agent === null ? mine : intersectPermissions(mine, await engine.listPermissions(agent, filter));
};
