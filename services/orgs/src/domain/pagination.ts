/**
 * @module @gatehouse/orgs/domain/pagination
 * The pagination of every orgs list (behaviour.md §10): `{page, limit}` in, `{page, limit, offset,
 * total}` out; page 0/absent → 1, limit 0/absent → 10, limit 1–1000.
 */
import { AppError } from '@gatehouse/errors';
import type { PageWindow } from '../storage/ports.ts';

/** A §10 pagination request as it arrives (numbers, or strings of digits for compatibility). */
export interface PaginationInput {
  page?: number | string | null;
  limit?: number | string | null;
}

/** The §10 window with its page and limit. */
export interface Window extends PageWindow {
  page: number;
}

function integer(name: 'page' | 'limit', v: number | string | null | undefined): number {
  if (v === null || v === undefined || v === '') return 0;
  const n = typeof v === 'number' ? v : /^-?\d+$/.test(v.trim()) ? Number(v.trim()) : NaN;
  if (!Number.isSafeInteger(n)) throw new AppError('invalid_argument', `${name} must be an integer`);
  return n;
}

/**
 * @throws AppError `invalid_argument` `page must be at least 1` (negative) /
 *   `limit must be between 1 and 1000` (negative or over 1000)
 */
export function pageWindow(input: PaginationInput | null | undefined): Window {
  const page = integer('page', input?.page);
  const limit = integer('limit', input?.limit);
  if (page < 0) throw new AppError('invalid_argument', 'page must be at least 1');
  if (limit < 0 || limit > 1000) throw new AppError('invalid_argument', 'limit must be between 1 and 1000');
  const p = page === 0 ? 1 : page;
  const l = limit === 0 ? 10 : limit;
  return { page: p, limit: l, offset: (p - 1) * l };
}

/** The §10 `pagination` output of a window and the number of matching rows. */
export function paginationOf(w: Window, total: number): { page: number; limit: number; offset: number; total: number } {
  return { page: w.page, limit: w.limit, offset: w.offset, total };
}
