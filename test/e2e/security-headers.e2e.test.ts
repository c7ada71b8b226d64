/**
 * @module test/e2e/security-headers
 * Hardening on the wire (issue 30 §7), against a running all-in-one gateway with and without
 * `--enable-hsts`: each kind of answer (REST JSON with tokens, a REST error, GraphQL with tokens, the
 * playground and the hosted login page as HTML, the OAuth token endpoint and its HTML error page, a
 * one-time client secret, discovery, hashed assets, 404) is listed with the headers it must carry:
 * `X-Content-Type-Options: nosniff` everywhere, `Cache-Control: no-store` on everything that carries a
 * token or a secret, a CSP with `frame-ancestors` on every HTML page, `Strict-Transport-Security`
 * exactly when `--enable-hsts` is on; and every cookie Gatehouse sets is host-only, HttpOnly, Path=/
 * with a SameSite attribute (the spec fixes the cookie names, so no `__Host-` prefix: see
 * docs/hardening.md).
 */
import { describe, it, expect, beforeAll, afterAll, jest } from '@jest/globals';
import { startDeployment, type Deployment } from '@gatehouse/testing';
import { PASSWORD, address, post, signup } from './email-support.ts';

jest.setTimeout(120_000);
const BROWSER = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8';
const HSTS = 'max-age=31536000; includeSubDomains';

/** One kind of answer and what it must carry. */
interface Kind {
  name: string;
  fetch(d: Deployment): Promise<Response>;
  status: number;
  /** carries a token, a cookie or a secret: must be `no-store` */
  secret: boolean;
  /** an HTML page: must have a CSP with frame-ancestors */
  html: boolean;
}

const postJson = (d: Deployment, p: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> =>
  fetch(`${d.url}${p}`, { method: 'POST', headers: { 'content-type': 'application/json', origin: d.url, ...headers }, body: JSON.stringify(body) });

const KINDS: Kind[] = [
  { name: 'REST signup answer with tokens and session cookies', status: 200, secret: true, html: false,
    fetch: (d) => postJson(d, '/v1/signup', { email: address('hdr'), password: PASSWORD, confirm_password: PASSWORD }) },
  { name: 'REST error (401)', status: 401, secret: false, html: false, fetch: (d) => fetch(`${d.url}/v1/profile`) },
  { name: 'REST admin login (service-admin cookie)', status: 200, secret: true, html: false,
    fetch: (d) => postJson(d, '/v1/admin/login', { admin_secret: d.adminSecret }) },
  { name: 'REST create_client (a one-time client secret)', status: 200, secret: true, html: false,
    fetch: (d) => postJson(d, '/v1/admin/create_client', { name: 'headers', allowed_scopes: ['read:docs'] }, { 'x-service-admin-secret': d.adminSecret }) },
  { name: 'GraphQL signup answer with tokens', status: 200, secret: true, html: false,
    fetch: (d) => postJson(d, '/graphql', {
      query: 'mutation($p: SignUpRequest!) { signup(params: $p) { message access_token } }',
      variables: { p: { email: address('hdr-gql'), password: PASSWORD, confirm_password: PASSWORD } },
    }) },
  { name: 'GraphiQL playground (HTML)', status: 200, secret: true, html: true,
    fetch: (d) => fetch(`${d.url}/graphql`, { headers: { accept: BROWSER, 'x-service-admin-secret': d.adminSecret } }) },
  { name: 'hosted login page (HTML)', status: 200, secret: false, html: true, fetch: (d) => fetch(`${d.url}/app/login`, { headers: { accept: BROWSER } }) },
  { name: 'OAuth token endpoint error (RFC 6749 §5.2)', status: 401, secret: true, html: false,
    fetch: (d) => fetch(`${d.url}/oauth/token`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', origin: d.url }, body: 'grant_type=password' }) },
  { name: 'authorize error page (HTML)', status: 400, secret: false, html: true,
    fetch: (d) => fetch(`${d.url}/authorize?client_id=nobody&response_type=code`, { redirect: 'manual', headers: { accept: BROWSER } }) },
  { name: 'OIDC discovery', status: 200, secret: false, html: false, fetch: (d) => fetch(`${d.url}/.well-known/openid-configuration`) },
  { name: 'JWKS', status: 200, secret: false, html: false, fetch: (d) => fetch(`${d.url}/.well-known/jwks.json`) },
  { name: '404', status: 404, secret: false, html: false, fetch: (d) => fetch(`${d.url}/v1/nothing-here`) },
  { name: 'health', status: 200, secret: false, html: false, fetch: (d) => fetch(`${d.url}/healthz`) },
];

/** The cookies a kind of answer sets must be as narrow as the spec allows. */
function checkCookies(name: string, cookies: string[]): void {
  for (const c of cookies) {
    const attrs = c.split(';').slice(1).map((a) => a.trim().toLowerCase());
    expect([name, c, attrs.includes('httponly')]).toEqual([name, c, true]);
    expect([name, c, attrs.includes('path=/')]).toEqual([name, c, true]);
    expect([name, c, attrs.some((a) => a.startsWith('samesite='))]).toEqual([name, c, true]);
    // 127.0.0.1 is an IP address: even cookie_session_domain is host-only (behaviour.md §2.4)
    expect([name, c, attrs.some((a) => a.startsWith('domain='))]).toEqual([name, c, false]);
  }
}

describe.each([
  ['default (HSTS off)', [] as string[], false],
  ['--enable-hsts', ['--enable-hsts'], true],
])('security headers on each kind of answer, %s', (_label, flags, hsts) => {
  let d: Deployment;
  beforeAll(async () => { d = await startDeployment('all', { flags, readyTimeoutMs: 60_000 }); }, 120_000);
  afterAll(async () => { await d?.stop(); });

  it.each(KINDS.map((k) => [k.name, k] as const))('%s', async (_name, kind) => {
    const res = await kind.fetch(d);
    const body = await res.text();
    const h = (n: string) => res.headers.get(n);
    const row = {
      status: res.status, nosniff: h('x-content-type-options'), hsts: h('strict-transport-security'),
      noStore: (h('cache-control') ?? '').includes('no-store'), frameAncestors: /frame-ancestors/.test(h('content-security-policy') ?? ''),
    };
    expect([kind.name, row]).toEqual([kind.name, {
      status: kind.status, nosniff: 'nosniff', hsts: hsts ? HSTS : null,
      // no-store is every API answer's default; those that carry a secret must never lose it
      noStore: kind.secret ? true : row.noStore, frameAncestors: true,
    }]);
    if (kind.html) expect(body).toMatch(/<html|<!doctype/i);
    checkCookies(kind.name, res.headers.getSetCookie());
  });

  it('hashed assets are cacheable and still nosniff', async () => {
    const page = await (await fetch(`${d.url}/app/login`, { headers: { accept: BROWSER } })).text();
    const asset = /(?:src|href)="([^"]+\/assets\/[^"]+)"/.exec(page)![1]!;
    const res = await fetch(new URL(asset, d.url));
    expect([res.status, res.headers.get('x-content-type-options'), res.headers.get('cache-control')])
      .toEqual([200, 'nosniff', 'public, max-age=31536000, immutable']);
  });

  it('the mfa and session cookies of a login are narrow', async () => {
    const email = address('hdr-login');
    expect((await signup(d.url, email)).status).toBe(200);
    const login = await post(d.url, '/v1/login', { email, password: PASSWORD });
    expect(login.cookies.map((c) => c.split('=')[0])).toEqual(['cookie_session', 'cookie_session_domain']);
    checkCookies('login', login.cookies);
    expect(login.headers.get('cache-control')).toBe('no-store');
  });
});
