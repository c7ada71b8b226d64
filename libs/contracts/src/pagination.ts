/**
 * @module @gatehouse/contracts/pagination
 * The pagination of every admin and organization list (behaviour.md §10): `{page, limit}` in,
 * `{page, limit, offset, total}` out; page 0/absent → 1, limit 0/absent → 10, limit 1–1000.
 * One module for every service, so the same input gets the same window and the same message.
 */
import { AppError } from '@gatehouse/errors';

/** The largest `limit` a list accepts (behaviour.md §10). */
export const MAX_PAGE_LIMIT = 1000;

/** A §10 pagination request as it arrives (numbers, or strings of digits for compatibility). */
export interface PaginationInput {
  page?: number | string | null;
  limit?: number | string | null;
}

/** The rows a store returns for one page: `offset = (page − 1) × limit`, at most `limit` rows. */
export interface PageWindow {
  offset: number;
  limit: number;
}

/** The §10 window with its page and limit. */
export interface Window extends PageWindow {
  page: number;
}

/** One page of rows and the number of rows matching the filter. */
export interface PageOf<T> {
  rows: T[];
  total: number;
}

/** The §10 `pagination` object of a list response. */
export interface Pagination {
  page: number;
  limit: number;
  offset: number;
  total: number;
}

function integer(name: 'page' | 'limit', v: number | string | null | undefined): number {
  if (v === null || v === undefined || v === '') return 0;
  const n = typeof v === 'number' ? v : /^-?\d+$/.test(v.trim()) ? Number(v.trim()) : NaN;
  if (!Number.isSafeInteger(n)) throw new AppError('invalid_argument', `${name} must be an integer`);
  return n;
}

/**
 * The window of a §10 pagination request.
 * @throws AppError `invalid_argument` `page must be an integer` / `limit must be an integer` (not an
 *   integer), `page must be at least 1` (negative, or so large the offset is not a safe integer),
 *   `limit must be between 1 and 1000` (negative or over 1000)
 */
export function pageWindow(input: PaginationInput | null | undefined): Window {
  const page = integer('page', input?.page);
  const limit = integer('limit', input?.limit);
  if (page < 0) throw new AppError('invalid_argument', 'page must be at least 1');
  if (limit < 0 || limit > MAX_PAGE_LIMIT) throw new AppError('invalid_argument', 'limit must be between 1 and 1000');
  const p = page === 0 ? 1 : page;
  const l = limit === 0 ? 10 : limit;
  const offset = (p - 1) * l;
  if (!Number.isSafeInteger(offset)) throw new AppError('invalid_argument', 'page must be at least 1');
  return { page: p, limit: l, offset };
}

/** The §10 `pagination` output of a window and the number of matching rows. */
export function paginationOf(w: Window, total: number): Pagination {
  return { page: w.page, limit: w.limit, offset: w.offset, total };
}
