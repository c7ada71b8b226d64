/** @module authz/rpc/write-tuples: WriteTuples (spec §4 `POST /v1/admin/fga/tuples`, behaviour.md §7.1 Write / delete). */
import { type AuthzDeps, type AuthzHandler, admin, requireEngine } from './deps.ts';
import { toTuples } from './wire.ts';

/**
 * Writes 1–100 tuples allowed by the active model, all or nothing (an existing tuple is a no-op).
 * @throws AppError `failed_precondition` (engine off, no model); `unauthenticated` (not super-admin);
 *   `invalid_argument` (count, form, `invalid tuple "…": …`); `unavailable`
 */
export const writeTuples = (deps: AuthzDeps): AuthzHandler<'WriteTuples'> => async (req, ctx) => {
  const engine = requireEngine(deps);
  await admin(deps, ctx);
  await engine.writeTuples(toTuples(req));
  return { message: 'Tuples written successfully' };
};
