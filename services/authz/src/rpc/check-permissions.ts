/** @module authz/rpc/check-permissions: CheckPermissions (spec §4 `POST /v1/check_permissions`, behaviour.md §7.3). */
import { type AuthzDeps, type AuthzHandler, requireEngine } from './deps.ts';
import { pinSubject } from './subject.ts';

/**
 * Evaluates 1–100 checks for the pinned subject; results in input order, each echoing relation and object.
 * The hot path: the request's `checks` go to the engine as the codec normalised them (absent fields null;
 * the engine validates them), with no copy per call. `context` (extension) is the call's condition
 * context; each check may carry its own.
 * @throws AppError `failed_precondition` (engine off, no model); `unauthenticated`, `permission_denied`,
 *   `invalid_argument` (see pinSubject; check limits and forms; `resolution too complex`); `unavailable`
 */
export const checkPermissions = (deps: AuthzDeps): AuthzHandler<'CheckPermissions'> => async (req, ctx) => {
  const engine = requireEngine(deps);
  const subject = await pinSubject(deps.authenticator, ctx, req.user);
  return { results: await engine.check(subject, req.checks, req.context ? { context: req.context } : undefined) };
};
