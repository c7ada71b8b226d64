import { describe, expect, it } from '@jest/globals';
import { AppError } from '@gatehouse/errors';
import { pageWindow, paginationOf } from './pagination.ts';

function refusal(input: Parameters<typeof pageWindow>[0]): { code: string; message: string } {
  try {
    pageWindow(input);
  } catch (err) {
    if (err instanceof AppError) return { code: err.code, message: err.message };
    throw err;
  }
  throw new Error('pageWindow accepted the input');
}

describe('pageWindow (behaviour.md §10)', () => {
  it('defaults an absent or zero page to 1 and limit to 10', () => {
    expect(pageWindow(undefined)).toEqual({ page: 1, limit: 10, offset: 0 });
    expect(pageWindow({ page: 0, limit: 0 })).toEqual({ page: 1, limit: 10, offset: 0 });
    expect(pageWindow({ page: null, limit: '' })).toEqual({ page: 1, limit: 10, offset: 0 });
  });

  it('computes offset = (page − 1) × limit, from numbers or strings of digits', () => {
    expect(pageWindow({ page: 3, limit: 25 })).toEqual({ page: 3, limit: 25, offset: 50 });
    expect(pageWindow({ page: ' 2 ', limit: '1000' })).toEqual({ page: 2, limit: 1000, offset: 1000 });
  });

  it('refuses a negative page, a limit outside 1–1000 and non-integers with the §10 messages', () => {
    expect(refusal({ page: -1 })).toEqual({ code: 'invalid_argument', message: 'page must be at least 1' });
    expect(refusal({ limit: 1001 })).toEqual({ code: 'invalid_argument', message: 'limit must be between 1 and 1000' });
    expect(refusal({ limit: -5 })).toEqual({ code: 'invalid_argument', message: 'limit must be between 1 and 1000' });
    expect(refusal({ page: 1.5 })).toEqual({ code: 'invalid_argument', message: 'page must be an integer' });
    expect(refusal({ limit: 'ten' })).toEqual({ code: 'invalid_argument', message: 'limit must be an integer' });
  });

  it('refuses a page whose offset is past the safe integers instead of returning a wrong window', () => {
    expect(refusal({ page: Number.MAX_SAFE_INTEGER, limit: 1000 })).toEqual({ code: 'invalid_argument', message: 'page must be at least 1' });
  });

  it('reports the window and the total as the response pagination object', () => {
    expect(paginationOf(pageWindow({ page: 2, limit: 5 }), 12)).toEqual({ page: 2, limit: 5, offset: 5, total: 12 });
  });
});
