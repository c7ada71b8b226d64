/**
 * @module test/e2e/graphql-playground
 * The GraphQL playground of a running gateway (graphql.md §1.1 "Playground"; behaviour.md §1.3
 * `--enable-playground`, default true, super-admin only): a browser's `GET /graphql` gets GraphiQL,
 * whose every script and stylesheet the gateway serves itself (no other origin, its own CSP), and
 * the page runs a query through `POST /graphql`. With `--enable-playground=false` the GET answers 405
 * as any GraphQL GET does; `--enable-graphql-introspection=false` still refuses introspection.
 */
import { describe, it, expect, beforeAll, afterAll, jest } from '@jest/globals';
import { startDeployment, type Deployment } from '@gatehouse/testing';
import { gql, raw } from '../support/http.ts';

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
