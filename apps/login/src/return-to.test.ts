import { describe, expect, it } from '@jest/globals';
import { safeReturnTo } from './return-to.ts';

const O = 'http://localhost:8080';

describe('safeReturnTo (the /authorize contract)', () => {
  it('accepts a same-origin /authorize path with its query', () => {
    expect(safeReturnTo('/authorize?client_id=a&redirect_uri=https%3A%2F%2Frp.example%2Fcb', O, '')).toBe('/authorize?client_id=a&redirect_uri=https%3A%2F%2Frp.example%2Fcb');
    expect(safeReturnTo('/auth/authorize?x=1', O, '/auth')).toBe('/auth/authorize?x=1');
  });

  it('refuses other paths, other origins and redirect tricks', () => {
    for (const bad of [
      null, '', '/app', '/authorizex', '/v1/logout', '/auth/authorize', 'https://evil.example/authorize', '//evil.example/authorize',
      '/\\evil.example/authorize', '\\\\evil.example/authorize', 'javascript:alert(1)', '/authorize\n', '/%2e%2e/authorize/../v1/profile',
    ]) {
      expect(safeReturnTo(bad, O, '')).toBeNull();
    }
    expect(safeReturnTo('/authorize', O, '/auth')).toBeNull();
    expect(safeReturnTo('/authorize/../app', O, '')).toBeNull();
  });
});
