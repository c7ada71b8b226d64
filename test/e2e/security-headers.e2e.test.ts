/**
 * @module test/e2e/security-headers
 * Hardening on the wire (issue 30 §7), against a running all-in-one gateway with and without
 * `--enable-hsts`: each kind of answer (REST JSON with tokens, a REST error, GraphQL with tokens, the
 * playground and the hosted login page as HTML, the OAuth token endpoint and its HTML error page, a
 * one-time client secret, discovery, hashed assets, 404) is listed with the headers it must carry:
 * `X-Content-Type-Options: nosniff` everywhere, `Cache-Control: no-store` on everything that carries a
 * token or a secret, a CSP with `frame-ancestors` on every HTML page, `Strict-Transport-Security`
 * exactly when `--enable-hsts` is on. Every cookie Gatehouse sets is listed with its attributes
 * (issue 30 §7, behaviour.md §2.4, RFC 6265bis §4.1.3.2), in a deployment without and one with
 * `--app-cookie-secure` (the HSTS one: HSTS means https; `--admin-cookie-secure` is on in both): the four whose
 * names the spec fixes (`cookie_session`, `cookie_session_domain`, `mfa`, `service-admin`) host-only
 * (127.0.0.1 is an IP, so even the domain cookie), Path=/, HttpOnly, SameSite, Secure per the flags;
 * Gatehouse's own (the social pending login, the org SSO state) `__Host-` prefixed with Path=/ when
 * Secure, else plain on the one path that reads them. The rule is in docs/hardening.md.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it, expect, beforeAll, afterAll, jest } from '@jest/globals';
import { caAndServer, startDeployment, startOidcIdp, startTwilioSink, type Deployment, type TestOidcIdp, type TwilioSink } from '@gatehouse/testing';
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

/** The cookies of the API's own answers (the four names the spec fixes) must be as narrow as the spec allows. */
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

/** A Set-Cookie value as a row: its name and each attribute (RFC 6265 §5.2), `Max-Age` as set or cleared. */
function cookieRow(setCookie: string): Record<string, string | boolean> {
  const [pair, ...attrs] = setCookie.split(';').map((a) => a.trim());
  const row: Record<string, string | boolean> = { name: pair!.slice(0, pair!.indexOf('=')), domain: false, secure: false, httpOnly: false };
  for (const a of attrs) {
    const [k, v] = [a.split('=')[0]!.toLowerCase(), a.slice(a.indexOf('=') + 1)];
    if (k === 'path') row.path = v;
    else if (k === 'domain') row.domain = v;
    else if (k === 'samesite') row.sameSite = v;
    else if (k === 'max-age') row.maxAge = v === '0' ? 'cleared' : 'set';
    else if (k === 'secure') row.secure = true;
    else if (k === 'httponly') row.httpOnly = true;
  }
  return row;
}

// the org SSO login discovers its OIDC IdP over https: a test CA the deployment trusts (NODE_EXTRA_CA_CERTS)
const tls = caAndServer();
const caDir = mkdtempSync(join(tmpdir(), 'gatehouse-ca-'));
const caFile = join(caDir, 'ca.pem');
writeFileSync(caFile, tls.ca.cert);
afterAll(() => { rmSync(caDir, { recursive: true, force: true }); });

describe.each([
  ['default (HSTS off)', [] as string[], false],
  // HSTS means https: the app cookies Secure with it (the harness turns --app-cookie-secure off;
  // --admin-cookie-secure is on by default in both)
  ['--enable-hsts', ['--enable-hsts', '--app-cookie-secure=true'], true],
])('security headers on each kind of answer, %s', (_label, flags, hsts) => {
  let d: Deployment;
  let twilio: TwilioSink;
  let idp: TestOidcIdp;
  beforeAll(async () => {
    twilio = await startTwilioSink();
    idp = await startOidcIdp(tls.server, [{ client_id: 'headers-rp', client_secret: 'rp-secret', redirect_uris: ['http://127.0.0.1/unused'] }]);
    d = await startDeployment('all', {
      // SMS for forgot_password by phone (the mfa cookie); GitHub (no discovery) for the social pending-login cookie
      flags: [...flags, ...twilio.flags(), '--github-client-id=headers-gh', '--github-client-secret=headers-gh-secret'],
      env: { NODE_EXTRA_CA_CERTS: caFile }, readyTimeoutMs: 60_000,
    });
  }, 120_000);
  afterAll(async () => {
    await d?.stop();
    await idp?.close();
    await twilio?.close();
  });

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

  it('lists every cookie Gatehouse sets with its attributes (issue 30 §7)', async () => {
    const admin = { 'x-service-admin-secret': d.adminSecret };
    const setBy = async (res: Response | Promise<Response>): Promise<string[]> => (await res).headers.getSetCookie();
    const org = await (await postJson(d, '/v1/admin/create_organization', { name: `hdr-${Math.random().toString(36).slice(2, 8)}` }, admin)).json() as { id: string; name: string };
    const conn = await postJson(d, '/v1/admin/create_org_oidc_connection', { org_id: org.id, name: 'idp', issuer_url: idp.issuer, client_id: 'headers-rp', client_secret: 'rp-secret' }, admin);
    expect(conn.status).toBe(200);
    const adminLogin = await setBy(postJson(d, '/v1/admin/login', { admin_secret: d.adminSecret }));
    const cookies = [
      ...await setBy(postJson(d, '/v1/signup', { email: address('hdr-cookies'), password: PASSWORD, confirm_password: PASSWORD })),
      // an unknown number: the decoy MFA session's cookie, nothing is sent (behaviour.md §3.4)
      ...await setBy(postJson(d, '/v1/forgot_password', { phone_number: '+15550000000' })),
      ...adminLogin,
      ...await setBy(postJson(d, '/v1/admin/logout', {}, { cookie: adminLogin[0]!.split(';')[0]! })),
      ...await setBy(fetch(`${d.url}/oauth_login/github`, { redirect: 'manual' })),
      ...await setBy(fetch(`${d.url}/oauth_callback/github?state=nope&code=nope`, { redirect: 'manual' })),
      ...await setBy(fetch(`${d.url}/oauth/sso/${org.name}/login`, { redirect: 'manual' })),
      ...await setBy(fetch(`${d.url}/oauth/sso/${org.name}/callback?state=nope&code=nope`, { redirect: 'manual' })),
    ];
    const secure = hsts;
    // SameSite comes from --app-cookie-same-site (lax in the tests), Strict for service-admin, Lax for the login-binding cookies
    const app = { domain: false, path: '/', httpOnly: true, secure, sameSite: 'Lax', maxAge: 'set' };
    const own = (name: string, path: string, maxAge: string) => (secure
      ? { ...app, name: `__Host-${name}`, path: '/', maxAge }
      : { ...app, name, path, maxAge });
    expect(cookies.map(cookieRow)).toEqual([
      { ...app, name: 'cookie_session' },
      { ...app, name: 'cookie_session_domain' }, // 127.0.0.1 is an IP address: host-only (§2.4)
      { ...app, name: 'mfa' },
      { ...app, name: 'service-admin', sameSite: 'Strict', secure: true },
      { ...app, name: 'service-admin', sameSite: 'Strict', secure: true, maxAge: 'cleared' },
      own('gatehouse_social', '/oauth_callback/github', 'set'),
      own('gatehouse_social', '/oauth_callback/github', 'cleared'),
      own('gh_sso_state', '/oauth/sso', 'set'),
      own('gh_sso_state', '/oauth/sso', 'cleared'),
    ]);
    // the hosted login page and the playground set none
    expect(await setBy(fetch(`${d.url}/app/login`, { headers: { accept: BROWSER } }))).toEqual([]);
    expect(await setBy(fetch(`${d.url}/graphql`, { headers: { accept: BROWSER, ...admin } }))).toEqual([]);
  });
});
