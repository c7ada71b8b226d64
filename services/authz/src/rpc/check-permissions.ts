/** @module authz/rpc/check-permissions: CheckPermissions (spec §4 `POST /v1/check_permissions`, behaviour.md §7.3). */
import { type AuthzDeps, type AuthzHandler, requireEngine } from './deps.ts';
import { intersectChecks } from '../domain/index.ts';
import { pinPermissionSubjects } from './subject.ts';

/**
 * Evaluates 1–100 checks for the pinned subject; results in input order, each echoing relation and object.
 * The hot path: the request's `checks` go to the engine as the codec normalised them (absent fields null;
 * the engine validates them), with no copy per call. `context` (extension) is the call's condition
 * context; each check may carry its own. For a delegated token (RFC 8693 `act`) under a model declaring
 * `type agent`, each check is allowed only when both the user and `agent:<client id>` are (issue 34 §3).
 * @throws AppError `failed_precondition` (engine off, no model); `unauthenticated`, `permission_denied`,
 *   `invalid_argument` (see pinSubject; check limits and forms; `resolution too complex`); `unavailable`
 */
export const checkPermissions = (deps: AuthzDeps): AuthzHandler<'CheckPermissions'> => async (req, ctx) => {
  const engine = requireEngine(deps);
  const { subject, agent } = await pinPermissionSubjects(deps.authenticator, engine, deps.delegatedPermissions ?? 'intersection', ctx, req.user);
  const options = req.context ? { context: req.context } : undefined;
  const results = await engine.check(subject, req.checks, options);
  return { results: agent === null ? results : intersectChecks(results, await engine.check(agent, req.checks, options)) };
};
