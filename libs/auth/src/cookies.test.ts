import { describe, it, expect } from '@jest/globals';
import {
  adminCookie, clearAdminCookie, clearMfaCookie, clearSessionCookies, mfaCookie, ownCookie, ownCookieName, parseCookies, pathUnder, registrableDomain, sessionCookies,
} from './cookies.ts';

describe('parseCookies', () => {
  it('parses pairs, trims, decodes and keeps the first occurrence', () => {
    expect(parseCookies('a=1; b = two ; c="q"; a=2; bad; d=%41%20b')).toEqual({ a: '1', b: 'two', c: 'q', d: 'A b' });
    expect(parseCookies(undefined)).toEqual({});
    expect(parseCookies('x=%E0%A4%A')).toEqual({ x: '%E0%A4%A' });
  });
});

describe('registrableDomain', () => {
  it.each([
    ['auth.example.com', 'example.com'],
    ['a.b.example.com', 'example.com'],
    ['example.com', 'example.com'],
    ['auth.example.co.uk', 'example.co.uk'],
    ['example.co.uk', 'example.co.uk'],
    ['x.shop.com.au', 'shop.com.au'],
    ['co.uk', null],
    ['localhost', null],
    ['127.0.0.1', null],
    ['[::1]', null],
    ['Auth.Example.COM.', 'example.com'],
  ])('%s → %s', (host, want) => {
    expect(registrableDomain(host)).toBe(want);
  });
});

describe('session cookies (behaviour.md §2.4)', () => {
  const o = { url: 'https://auth.example.co.uk', secure: true, sameSite: 'none' as const };
  it('sets a host-only and a domain cookie with the same value and attributes', () => {
    expect(sessionCookies('h4ndle', 3600, o)).toEqual([
      'cookie_session=h4ndle; Path=/; Max-Age=3600; HttpOnly; Secure; SameSite=None',
      'cookie_session_domain=h4ndle; Path=/; Domain=example.co.uk; Max-Age=3600; HttpOnly; Secure; SameSite=None',
    ]);
  });
  it('sends SameSite none as Lax when not Secure, and keeps the domain cookie host-only on localhost', () => {
    expect(sessionCookies('v', 10, { url: 'http://localhost:8080', secure: false, sameSite: 'none' })).toEqual([
      'cookie_session=v; Path=/; Max-Age=10; HttpOnly; SameSite=Lax',
      'cookie_session_domain=v; Path=/; Max-Age=10; HttpOnly; SameSite=Lax',
    ]);
  });
  it('clears with the same name, path and domain, empty value and Max-Age=0', () => {
    expect(clearSessionCookies(o)).toEqual([
      'cookie_session=; Path=/; Max-Age=0; HttpOnly; Secure; SameSite=None',
      'cookie_session_domain=; Path=/; Domain=example.co.uk; Max-Age=0; HttpOnly; Secure; SameSite=None',
    ]);
  });
  it('mfa is host-only with the app attributes', () => {
    expect(mfaCookie('m', 300, { ...o, sameSite: 'strict' })).toBe('mfa=m; Path=/; Max-Age=300; HttpOnly; Secure; SameSite=Strict');
    expect(clearMfaCookie(o)).toBe('mfa=; Path=/; Max-Age=0; HttpOnly; Secure; SameSite=None');
  });
  it('service-admin is HttpOnly, SameSite=Strict, Max-Age=3600', () => {
    expect(adminCookie('a', { secure: true })).toBe('service-admin=a; Path=/; Max-Age=3600; HttpOnly; Secure; SameSite=Strict');
    expect(clearAdminCookie({ secure: false })).toBe('service-admin=; Path=/; Max-Age=0; HttpOnly; SameSite=Strict');
  });
});

describe('cookies Gatehouse names itself (issue 30 §7, RFC 6265bis §4.1.3.2)', () => {
  it('Secure: the __Host- prefix, Path=/, no Domain', () => {
    expect(ownCookie('gh_x', 'v', { maxAgeSeconds: 600, path: '/narrow', secure: true, sameSite: 'lax' }))
      .toBe('__Host-gh_x=v; Path=/; Max-Age=600; HttpOnly; Secure; SameSite=Lax');
    expect(ownCookieName('gh_x', true)).toBe('__Host-gh_x');
  });
  it('not Secure (http development): the plain name on the narrow path', () => {
    expect(ownCookie('gh_x', '', { maxAgeSeconds: 0, path: '/narrow', secure: false, sameSite: 'none' }))
      .toBe('gh_x=; Path=/narrow; Max-Age=0; HttpOnly; SameSite=Lax');
    expect(ownCookieName('gh_x', false)).toBe('gh_x');
  });
  it('puts a route under the path of --url', () => {
    expect(pathUnder('https://id.example.com', '/oauth/sso')).toBe('/oauth/sso');
    expect(pathUnder('https://example.com/auth', '/oauth/sso')).toBe('/auth/oauth/sso');
  });
});
