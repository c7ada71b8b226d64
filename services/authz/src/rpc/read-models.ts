/** @module authz/rpc/read-models: ReadModels (extension `POST /v1/admin/fga/models`, behaviour.md §7.1 Versions). */
import { AppError } from '@gatehouse/errors';
import { type AuthzDeps, type AuthzHandler, requireEngine } from './deps.ts';

/** The page size when the request names none. */
const DEFAULT_PAGE = 20;
const MAX_PAGE = 100;

/**
 * One page of the stored model versions, newest first: `{models: [{id, dsl}], continuation_token}`.
 * Every `WriteModel` appends an immutable version (ULID id), so the first model of the first page is
 * the active one. The token is the id of the page's oldest version; null on the last page.
 * @throws AppError `failed_precondition` (engine off, or a backend that keeps no history:
 *   `this authorization engine keeps no model history`); `invalid_argument`
 *   (`page_size must be between 1 and 100`); `unavailable`
 */
export const readModels = (deps: AuthzDeps): AuthzHandler<'ReadModels'> => async (req) => {
  const engine = requireEngine(deps);
  if (!engine.readModels) throw new AppError('failed_precondition', 'this authorization engine keeps no model history');
  const size = Number(req.page_size ?? 0) || DEFAULT_PAGE;
  if (!Number.isInteger(size) || size < 1 || size > MAX_PAGE) throw new AppError('invalid_argument', 'page_size must be between 1 and 100');
  const page = await engine.readModels({ beforeId: req.continuation_token || null, limit: size + 1 });
  const models = page.slice(0, size);
  return { models, continuation_token: page.length > size ? models[models.length - 1]!.id : null };
};
