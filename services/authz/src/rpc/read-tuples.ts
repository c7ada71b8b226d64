/** @module authz/rpc/read-tuples: ReadTuples (spec §4 `POST /v1/admin/fga/tuples/read`, behaviour.md §7.1 Read). */
import { type AuthzDeps, type AuthzHandler, requireEngine } from './deps.ts';

/**
 * One page of tuples matching the exact filters `user`, `relation`, `object` (`type:` matches a whole
 * type): `{tuples, continuation_token}`; `page_size` absent or 0 → 50, else 1–100; the token is null on
 * the last page.
 * @throws AppError `failed_precondition` (engine off);
 *   `invalid_argument` (`page_size must be between 1 and 100`, `invalid continuation token`); `unavailable`
 */
export const readTuples = (deps: AuthzDeps): AuthzHandler<'ReadTuples'> => async (req) => {
  const engine = requireEngine(deps);
  const page = await engine.readTuples({
    user: req.user, relation: req.relation, object: req.object,
    page_size: req.page_size, continuation_token: req.continuation_token,
  });
  // the spec's answer: tuples and token only (the write times are the OpenFGA API's)
  return { tuples: page.tuples, continuation_token: page.continuation_token };
};
