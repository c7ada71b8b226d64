/**
 * @module @gatehouse/authn/domain/pagination
 * Admin list pagination (behaviour.md §10): `{page, limit}` in, `{page, limit, offset, total}` out.
 */
import { AppError } from '@gatehouse/errors';
import type { Opt } from './validation.ts';

export const MAX_PAGE_LIMIT = 1000;

/** A validated page: `offset = (page − 1) × limit`. */
export interface PageParams {
  page: number;
  limit: number;
  offset: number;
}

/**
 * `page` absent or 0 → 1; `limit` absent or 0 → 10; `limit` 1–1000.
 * @throws AppError `invalid_argument` `limit must be between 1 and 1000` / `page must be at least 1`
 */
export function pageParams(p: Opt<{ page?: Opt<number>; limit?: Opt<number> }>): PageParams {
  const page = p?.page || 1;
  const limit = p?.limit || 10;
  if (!Number.isSafeInteger(limit) || limit < 1 || limit > MAX_PAGE_LIMIT) throw new AppError('invalid_argument', 'limit must be between 1 and 1000');
  if (!Number.isSafeInteger(page) || page < 1) throw new AppError('invalid_argument', 'page must be at least 1');
  const offset = (page - 1) * limit;
  if (!Number.isSafeInteger(offset)) throw new AppError('invalid_argument', 'page must be at least 1');
  return { page, limit, offset };
}

/** The pagination output for `total` matching rows. */
export const paginationOf = (p: PageParams, total: number): { page: number; limit: number; offset: number; total: number } =>
  ({ page: p.page, limit: p.limit, offset: p.offset, total });
