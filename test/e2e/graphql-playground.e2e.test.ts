/**
 * @module test/e2e/graphql-playground
 * The GraphQL playground of a running gateway (graphql.md §1.1 "Playground"; behaviour.md §1.3
 * `--enable-playground`, default true, super-admin only): a browser's `GET /graphql` gets GraphiQL,
 * whose every script and stylesheet the gateway serves itself (no other origin, its own CSP), and
 * the page runs a query through `POST /graphql`. With `--enable-playground=false` the GET answers 405
 * as any GraphQL GET does; `--enable-graphql-introspection=false` still refuses introspection.
 * One admin-auth path (issue 30 §3): the page opens for the `service-admin` cookie of
 * `POST /v1/admin/login` in a real Chromium as well as for the header, never for the header under
 * `--disable-admin-header-auth`, and wrong secrets sent to it count toward the admin-secret lockout
 * (10 per client IP in 15 minutes) that every other admin path shares.
 */
import { describe, it, expect, beforeAll, afterAll, jest } from '@jest/globals';
import { createCallContext, createGrpcClient, serviceDescriptor } from '@gatehouse/rpc';
import { startDeployment, type Deployment } from '@gatehouse/testing';
import { gql, postJson, raw } from '../support/http.ts';
import { launchChromium } from './passkey-browser.ts';

jest.setTimeout(60_000);
const BROWSER = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8';
const METHOD_NOT_ALLOWED = { errors: [{ message: 'Method Not Allowed', extensions: { code: 'METHOD_NOT_ALLOWED' } }] };

/** What a browser sends for the page; `secret` stands for a header-injecting admin tool. */
const openPage = (d: Deployment, secret?: string) =>
  raw(`${d.url}/graphql`, { headers: { accept: BROWSER, ...(secret ? { 'x-service-admin-secret': secret } : {}) } });

/**
 * Fetches the page as a super-admin's browser, then every script and stylesheet it references, and
 * checks that all of them come from the gateway; returns the references.
 */
async function servesPlayground(d: Deployment): Promise<string[]> {
  const r = await openPage(d, d.adminSecret);
  expect([r.status, r.headers.get('content-type')]).toEqual([200, 'text/html; charset=utf-8']);
  const html = String(r.body);
  expect(html).toContain('<div id="graphiql" data-endpoint="/graphql"');
  const csp = r.headers.get('content-security-policy')!;
  expect(csp).toMatch(/^default-src 'none'; script-src 'self'; style-src 'self' 'nonce-[A-Za-z0-9+/=]+'; /);
  expect(csp).not.toMatch(/https?:|\*|unsafe/);
  // no absolute URL anywhere in the page: nothing can come from another origin
  expect(html).not.toMatch(/https?:|\/\/[a-z]/i);
  const scripts = [...html.matchAll(/<script src="([^"]+)"><\/script>/g)].map((m) => m[1]!);
  const styles = [...html.matchAll(/<link rel="stylesheet" href="([^"]+)">/g)].map((m) => m[1]!);
  expect([scripts.length, styles.length]).toEqual([4, 2]);
  const typed: Array<[string, string]> = [...scripts.map((s): [string, string] => [s, 'text/javascript']), ...styles.map((s): [string, string] => [s, 'text/css'])];
  for (const [ref, type] of typed) {
    const url = new URL(ref, `${d.url}/graphql`);
    expect(url.origin).toBe(d.url);
    const asset = await fetch(url);
    expect([ref, asset.status, asset.headers.get('content-type')]).toEqual([ref, 200, `${type}; charset=utf-8`]);
    expect((await asset.text()).length).toBeGreaterThan(50);
  }
  return [...scripts, ...styles];
}

/** Without super-admin credentials the page is 401; a GET that is not a browser's stays 405. */
async function refusesOthers(d: Deployment): Promise<void> {
  const anonymous = await openPage(d);
  expect([anonymous.status, anonymous.body]).toEqual([401, { errors: [{ message: 'unauthorized', extensions: { code: 'UNAUTHENTICATED' } }] }]);
  expect((await openPage(d, `${d.adminSecret}-wrong`)).status).toBe(401);
  const query = await raw(`${d.url}/graphql?query=${encodeURIComponent('{ meta { version } }')}`, { headers: { 'x-service-admin-secret': d.adminSecret } });
  expect([query.status, query.body]).toEqual([405, METHOD_NOT_ALLOWED]);
}

describe('GraphQL playground of an all-in-one server', () => {
  let on: Deployment;
  let off: Deployment;
  beforeAll(async () => {
    on = await startDeployment('all', { readyTimeoutMs: 60_000 });
    off = await startDeployment('all', { readyTimeoutMs: 60_000, flags: ['--enable-playground=false', '--enable-graphql-introspection=false'] });
  }, 120_000);
  afterAll(async () => { await Promise.all([on, off].map((d) => d?.stop())); });

  it('is on by default: GraphiQL for a super-admin, every asset from the gateway itself', async () => {
    await servesPlayground(on);
    // the first request GraphiQL makes: introspection, within the query limits
    const schema = await gql(on.url, 'query IntrospectionQuery { __schema { queryType { name } } }');
    expect(schema.body).toEqual({ data: { __schema: { queryType: { name: 'Query' } } } });
  });

  it('refuses the page without super-admin credentials; GraphQL over GET stays 405', async () => {
    await refusesOthers(on);
  });

  it('with --enable-playground=false answers a browser\'s GET /graphql 405, as any GraphQL GET, and serves no asset', async () => {
    const r = await openPage(off, off.adminSecret);
    expect([r.status, r.headers.get('allow'), r.body]).toEqual([405, 'POST, OPTIONS', METHOD_NOT_ALLOWED]);
    const assets = await servesPlayground(on);
    for (const ref of assets) expect([ref, (await raw(`${off.url}${ref}`)).status]).toEqual([ref, 404]);
  });

  it('with --enable-graphql-introspection=false still refuses introspection', async () => {
    const r = await gql(off.url, 'query { __schema { queryType { name } } }');
    expect(r.status).toBe(200);
    expect(r.body.data ?? null).toBeNull();
    expect(r.body.errors[0].extensions.code).toBe('INVALID_ARGUMENT');
  });
});

describe('GraphQL playground of a split deployment (the gateway process)', () => {
  let d: Deployment;
  beforeAll(async () => { d = await startDeployment('split', { readyTimeoutMs: 60_000 }); }, 120_000);
  afterAll(async () => { await d?.stop(); });

  it('serves GraphiQL and its assets to a super-admin and refuses anyone else', async () => {
    await servesPlayground(d);
    await refusesOthers(d);
  });
});

const LOCKED = { errors: [{ message: 'too many failed attempts, please try again later', extensions: { code: 'RESOURCE_EXHAUSTED' } }] };

describe('the playground on the one admin-auth path (all-in-one)', () => {
  let d: Deployment;
  let headerOff: Deployment;
  beforeAll(async () => {
    // localhost: the browser stores the Secure service-admin cookie for a potentially trustworthy origin
    d = await startDeployment('all', { readyTimeoutMs: 60_000, urlHost: 'localhost' });
    headerOff = await startDeployment('all', { readyTimeoutMs: 60_000, flags: ['--disable-admin-header-auth'] });
  }, 120_000);
  afterAll(async () => { await Promise.all([d, headerOff].map((x) => x?.stop())); });

  it('opens in Chromium for the service-admin cookie of POST /v1/admin/login, and runs an admin query with it', async () => {
    const browser = await launchChromium();
    try {
      const page = await (await browser.newContext()).newPage();
      const before = await page.goto(`${d.url}/graphql`);
      expect(before!.status()).toBe(401);
      const login = await page.evaluate(async (secret) => {
        const res = await fetch('/v1/admin/login', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ admin_secret: secret }) });
        return { status: res.status, body: await res.json() };
      }, d.adminSecret);
      expect(login).toEqual({ status: 200, body: { message: 'admin logged in successfully' } });
      const cookies = await page.context().cookies();
      expect(cookies.map((c) => [c.name, c.httpOnly, c.sameSite])).toEqual([['service-admin', true, 'Strict']]);
      const opened = await page.goto(`${d.url}/graphql`);
      expect(opened!.status()).toBe(200);
      // GraphiQL rendered (its editor is in the DOM) under the page's CSP
      await page.waitForSelector('.graphiql-container', { timeout: 30_000 });
      const admin = await page.evaluate(async () => {
        const res = await fetch('/graphql', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query: '{ _admin_meta { version } }' }) });
        return { status: res.status, body: await res.json() };
      });
      expect(admin).toEqual({ status: 200, body: { data: { _admin_meta: { version: expect.any(String) } } } });
    } finally {
      await browser.close();
    }
  });

  it('with --disable-admin-header-auth the header opens nothing; the cookie still does', async () => {
    expect((await openPage(headerOff, headerOff.adminSecret)).status).toBe(401);
    const login = await postJson(`${headerOff.url}/v1/admin/login`, { admin_secret: headerOff.adminSecret }, { origin: headerOff.url });
    const cookie = login.headers.getSetCookie().map((c) => c.split(';')[0]).join('; ');
    const page = await raw(`${headerOff.url}/graphql`, { headers: { accept: BROWSER, cookie } });
    expect([page.status, page.headers.get('content-type')]).toEqual([200, 'text/html; charset=utf-8']);
  });

  it('wrong secrets sent to the playground count toward the admin-secret lockout every admin path shares', async () => {
    for (let i = 0; i < 10; i++) expect((await openPage(d, `${d.adminSecret}-wrong-${i}`)).status).toBe(401);
    // the eleventh attempt, with the right secret, is refused on every path: playground, REST, GraphQL, admin login
    const page = await openPage(d, d.adminSecret);
    expect([page.status, page.body, page.headers.get('retry-after')]).toEqual([429, LOCKED, expect.stringMatching(/^\d+$/)]);
    const rest = await raw(`${d.url}/v1/admin/meta`, { headers: { 'x-service-admin-secret': d.adminSecret } });
    expect([rest.status, rest.body]).toEqual([429, { code: 'resource_exhausted', message: 'too many failed attempts, please try again later' }]);
    const graphql = await gql(d.url, '{ _admin_meta { version } }', {}, { origin: d.url, 'x-service-admin-secret': d.adminSecret });
    expect(graphql.body.errors[0].extensions.code).toBe('RESOURCE_EXHAUSTED');
    const login = await postJson(`${d.url}/v1/admin/login`, { admin_secret: d.adminSecret }, { origin: d.url });
    expect(login.status).toBe(429);
    const grpc = createGrpcClient(serviceDescriptor('admin'), { address: d.grpcAddress });
    try {
      const err = await grpc.call('AdminMeta', {}, createCallContext({ headers: { 'x-service-admin-secret': d.adminSecret }, protocol: 'grpc' }))
        .then(() => null, (e: unknown) => e as { code: string });
      expect(err?.code).toBe('resource_exhausted');
    } finally {
      grpc.close();
    }
  });
});
