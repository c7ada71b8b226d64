/**
 * @module test/e2e/http-edge
 * The HTTP layer of a running all-in-one server: CSRF (behaviour.md §2.5), trusted proxies and the
 * rate limit (spec §1, behaviour.md §10), 404/405 and body errors (§0.1, §0.2), the metrics listener
 * (spec §1), CORS preflight, and GraphQL errors, deprecated operations, introspection and limits;
 * the basics again through a split deployment's gateway.
 */
import { describe, it, expect, beforeAll, afterAll, jest } from '@jest/globals';
import { startDeployment, type Deployment } from '@gatehouse/testing';
import { closeGrpcClients, grpc } from '../support/surfaces.ts';
import { gql, postJson, raw } from '../support/http.ts';

jest.setTimeout(60_000);
const LOGIN = { email: 'nobody@example.com', password: 'Wrong-Password-1' };

describe('HTTP edge of an all-in-one server', () => {
  let d: Deployment;
  let limited: Deployment;
  let proxied: Deployment;
  let locked: Deployment;
  beforeAll(async () => {
    // one after the other: four servers starting at once on a small CI machine miss the ready timeout
    d = await startDeployment('all', { readyTimeoutMs: 60_000 });
    limited = await startDeployment('all', { readyTimeoutMs: 60_000, flags: ['--rate-limit-rps=1', '--rate-limit-burst=2'] });
    proxied = await startDeployment('all', { readyTimeoutMs: 60_000, flags: ['--rate-limit-rps=1', '--rate-limit-burst=2', '--trusted-proxies=127.0.0.0/8'] });
    locked = await startDeployment('all', { readyTimeoutMs: 60_000, flags: ['--enable-graphql-introspection=false', '--graphql-max-depth=2'] });
  }, 240_000);
  afterAll(async () => {
    closeGrpcClients();
    await Promise.all([d, limited, proxied, locked].map((x) => x?.stop()));
  });

  describe('CSRF', () => {
    it('refuses a POST without Origin and Referer, bearer requests included', async () => {
      const r = await postJson(`${d.url}/v1/login`, LOGIN);
      expect(r.status).toBe(403);
      expect(r.body).toEqual({ code: 'permission_denied', message: 'origin or referer header is required for state-changing requests' });
      const bearer = await postJson(`${d.url}/v1/logout`, {}, { authorization: 'Bearer x.y.z' });
      expect(bearer.status).toBe(403);
      expect(bearer.body.code).toBe('permission_denied');
    });

    it('refuses a foreign Origin, a foreign Referer and Origin: null', async () => {
      for (const h of [{ origin: 'http://evil.example' }, { referer: 'http://evil.example/page' }, { origin: 'null' }] as Record<string, string>[]) {
        const r = await postJson(`${d.url}/v1/login`, LOGIN, h);
        expect([r.status, r.body]).toEqual([403, { code: 'permission_denied', message: 'origin not allowed' }]);
      }
    });

    it('accepts the own Origin, and a same-origin Referer when Origin is absent', async () => {
      for (const h of [{ origin: d.url }, { referer: `${d.url}/app/login?x=1` }] as Record<string, string>[]) {
        const r = await postJson(`${d.url}/v1/login`, LOGIN, h);
        // past the CSRF check: the login itself answers
        expect([r.status, r.body]).toEqual([401, { code: 'unauthenticated', message: 'invalid credentials' }]);
      }
    });

    it('answers /graphql refusals GraphQL-shaped with the REST status', async () => {
      const missing = await gql(d.url, 'query { meta { version } }', {}, {});
      expect(missing.status).toBe(403);
      expect(missing.body).toEqual({ errors: [{ message: 'origin or referer header is required for state-changing requests', extensions: { code: 'PERMISSION_DENIED' } }] });
      const foreign = await gql(d.url, 'query { meta { version } }', {}, { origin: 'http://evil.example' });
      expect(foreign.status).toBe(403);
      expect(foreign.body).toEqual({ errors: [{ message: 'origin not allowed', extensions: { code: 'PERMISSION_DENIED' } }] });
    });
  });

  describe('rate limit and trusted proxies', () => {
    // rps=1, burst=2: requests are sent together so that no refill can hide the shared bucket
    const meta = (t: Deployment, xff: string) => raw(`${t.url}/v1/meta`, { headers: { 'x-forwarded-for': xff } });

    it('ignores X-Forwarded-For by default: different XFF share one bucket; /healthz is exempt', async () => {
      const answers = await Promise.all(['203.0.113.1', '203.0.113.2', '203.0.113.3', '203.0.113.4', '203.0.113.5'].map((ip) => meta(limited, ip)));
      const refused = answers.filter((a) => a.status === 429);
      expect(refused.length).toBeGreaterThanOrEqual(2);
      expect(answers.filter((a) => a.status === 200).length).toBeGreaterThanOrEqual(1);
      expect(refused[0]!.headers.get('retry-after')).toBe('1');
      expect(refused[0]!.body).toEqual({ code: 'resource_exhausted', message: 'too many requests, please try again later' });
      for (let i = 0; i < 5; i++) expect((await raw(`${limited.url}/healthz`)).status).toBe(200);
      // the same per-IP bucket covers native gRPC (behaviour.md §10)
      const viaGrpc = [];
      for (let i = 0; i < 4; i++) viaGrpc.push(await grpc({ url: limited.url, grpcAddress: limited.grpcAddress }, { op: 'meta' }));
      expect(viaGrpc.filter((r) => !r.ok).map((r) => (r.ok ? null : [r.code, r.message]))[0]).toEqual(['resource_exhausted', 'too many requests, please try again later']);
    });

    it('a refusal on /graphql is GraphQL-shaped 429', async () => {
      const answers = await Promise.all([1, 2, 3, 4].map(() => gql(limited.url, 'query { meta { version } }')));
      const last = answers.find((a) => a.status === 429)!;
      expect(last).toBeDefined();
      expect(last.headers.get('retry-after')).toBe('1');
      expect(last.body).toEqual({ errors: [{ message: 'too many requests, please try again later', extensions: { code: 'RESOURCE_EXHAUSTED' } }] });
    });

    it('honours X-Forwarded-For from a trusted proxy: each client IP has its own bucket', async () => {
      const first = await Promise.all([1, 2, 3, 4].map(() => meta(proxied, '203.0.113.1')));
      expect(first.filter((a) => a.status === 429).length).toBeGreaterThanOrEqual(1);
      // fresh buckets for other client IPs behind the same proxy
      const second = await Promise.all([meta(proxied, '203.0.113.2'), meta(proxied, '203.0.113.2'), meta(proxied, '198.51.100.7, 203.0.113.3')]);
      expect(second.map((a) => a.status)).toEqual([200, 200, 200]);
    });
  });

  describe('routing and bodies', () => {
    it('serves the OpenAPI document built from the one route table', async () => {
      const r = await raw(`${d.url}/openapi.json`);
      expect(r.status).toBe(200);
      const doc = r.body as { openapi: string; paths: Record<string, Record<string, { operationId: string }>> };
      expect(doc.openapi).toMatch(/^3\.1\./);
      expect(doc.paths['/v1/signup']?.post?.operationId).toBe('authn.Signup');
      expect(doc.paths['/v1/check_permissions']?.post?.operationId).toBe('authz.CheckPermissions');
      expect(doc.paths['/v1/admin/fga/model']?.get?.operationId).toBe('authz.GetModel');
      expect(doc.paths['/v1/profile']?.get?.operationId).toBe('authn.Profile');
    });

    it('405 for a wrong method, 404 for an unknown /v1 path', async () => {
      const m = await raw(`${d.url}/v1/signup`);
      expect([m.status, m.body]).toEqual([405, { code: 'method_not_allowed', message: 'Method Not Allowed' }]);
      expect(m.headers.get('allow')).toContain('POST');
      const g = await raw(`${d.url}/v1/no_such_endpoint`);
      expect([g.status, g.body]).toEqual([404, { code: 'not_found', message: 'Not Found' }]);
      const p = await postJson(`${d.url}/v1/no_such_endpoint`, {}, { origin: d.url });
      expect([p.status, p.body]).toEqual([404, { code: 'not_found', message: 'Not Found' }]);
    });

    it('malformed JSON is 400 invalid JSON body on /v1 and (GraphQL-shaped) on /graphql', async () => {
      const r = await postJson(`${d.url}/v1/signup`, '{"email": "a@example.com",', { origin: d.url });
      expect([r.status, r.body]).toEqual([400, { code: 'invalid_argument', message: 'invalid JSON body' }]);
      const g = await postJson(`${d.url}/graphql`, '{"query": ', { origin: d.url });
      expect([g.status, g.body]).toEqual([400, { errors: [{ message: 'invalid JSON body', extensions: { code: 'INVALID_ARGUMENT' } }] }]);
    });

    it('a wrongly typed field is 400 invalid_argument, never 500', async () => {
      const bodies = [
        { email: 123, password: 'Correct-Horse-9', confirm_password: 'Correct-Horse-9' },
        { email: 'x@example.com', password: ['Correct-Horse-9'], confirm_password: 'Correct-Horse-9' },
        { email: 'x@example.com', password: 'Correct-Horse-9', confirm_password: 'Correct-Horse-9', roles: 'user' },
        { email: 'x@example.com', password: 'Correct-Horse-9', confirm_password: 'Correct-Horse-9', app_data: 'str' },
        [1, 2, 3],
      ];
      for (const b of bodies) {
        const r = await postJson(`${d.url}/v1/signup`, b, { origin: d.url });
        expect(r.status).toBe(400);
        expect(r.body.code).toBe('invalid_argument');
        expect(typeof r.body.message).toBe('string');
      }
    });

    it('a body over 1 MiB is 400 request body too large', async () => {
      const r = await postJson(`${d.url}/v1/login`, { email: 'a@example.com', password: 'x'.repeat(1_100_000) }, { origin: d.url });
      expect([r.status, r.body]).toEqual([400, { code: 'invalid_argument', message: 'request body too large' }]);
    });
  });

  describe('metrics, CORS and security headers', () => {
    it('serves Prometheus text on the metrics listener only', async () => {
      await raw(`${d.url}/v1/meta`);
      const m = await raw(d.metricsUrl);
      expect(m.status).toBe(200);
      expect(m.headers.get('content-type')).toContain('text/plain');
      expect(String(m.body)).toContain('gatehouse_');
      const onHttp = await raw(`${d.url}/metrics`);
      expect(onHttp.status).toBe(404);
    });

    it('answers a preflight with 204 and Access-Control-Max-Age: 600', async () => {
      const r = await raw(`${d.url}/v1/login`, {
        method: 'OPTIONS',
        headers: { origin: 'http://app.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type, authorization, x-authorizer-url' },
      });
      expect(r.status).toBe(204);
      expect(r.headers.get('access-control-max-age')).toBe('600');
      expect(r.headers.get('access-control-allow-origin')).toBe('*');
      expect(r.headers.get('access-control-allow-credentials')).toBeNull();
      expect(r.headers.get('access-control-allow-headers')?.toLowerCase()).toContain('x-authorizer-url');
      expect(r.headers.get('access-control-allow-headers')?.toLowerCase()).not.toContain('x-service-admin-secret');
    });

    it('sends the security headers', async () => {
      const r = await raw(`${d.url}/v1/meta`);
      expect(r.headers.get('x-content-type-options')).toBe('nosniff');
      expect(r.headers.get('x-frame-options')).toBe('DENY');
      expect(r.headers.get('referrer-policy')).toBe('strict-origin-when-cross-origin');
    });
  });

  describe('GraphQL', () => {
    it('an unknown field is HTTP 200 with INVALID_ARGUMENT', async () => {
      const r = await gql(d.url, 'query { no_such_field }');
      expect(r.status).toBe(200);
      expect(r.body.errors[0].extensions.code).toBe('INVALID_ARGUMENT');
      expect(r.body.errors[0].message).toContain('no_such_field');
    });

    it('mobile_login is UNIMPLEMENTED with the fixed message', async () => {
      const r = await gql(d.url, 'mutation { mobile_login(params: {phone_number: "+15555550100", password: "Correct-Horse-9"}) { message } }');
      expect(r.status).toBe(200);
      expect(r.body.data).toBeNull();
      expect(r.body.errors[0]).toMatchObject({ message: 'deprecated, use login with mobile phone_number', extensions: { code: 'UNIMPLEMENTED' } });
    });

    it('introspection is on by default and refused with --enable-graphql-introspection=false, __typename still works', async () => {
      const on = await gql(d.url, 'query { __schema { queryType { name } } }');
      expect(on.body.data.__schema.queryType.name).toBe('Query');
      const off = await gql(locked.url, 'query { __schema { queryType { name } } }');
      expect(off.status).toBe(200);
      expect(off.body.errors.length).toBeGreaterThan(0);
      expect(off.body.data ?? null).toBeNull();
      const typename = await gql(locked.url, 'query { __typename }');
      expect(typename.body).toEqual({ data: { __typename: 'Query' } });
    });

    it('an operation deeper than --graphql-max-depth is refused before it runs', async () => {
      // default 15 (no recursive type exists, so the deep query is also invalid otherwise: only the limit is reported)
      let deep = 'id';
      for (let i = 0; i < 16; i++) deep = `f${i} { ${deep} }`;
      const r = await gql(d.url, `query { profile { ${deep} } }`);
      expect(r.status).toBe(200);
      expect(r.body.errors.map((e: { message: string; extensions: unknown }) => [e.message, e.extensions])).toEqual([['query depth exceeds the maximum of 15', { code: 'INVALID_ARGUMENT' }]]);
      // with --graphql-max-depth=2 a valid depth-3 login is refused and has no effect
      const email = `depth-${Date.now()}@example.com`;
      const signup = await gql(locked.url, `mutation { signup(params: {email: "${email}", password: "Correct-Horse-9", confirm_password: "Correct-Horse-9"}) { user { id } } }`);
      expect(signup.body.errors[0]).toMatchObject({ message: 'query depth exceeds the maximum of 2', extensions: { code: 'INVALID_ARGUMENT' } });
      const ok = await gql(locked.url, `mutation { signup(params: {email: "${email}", password: "Correct-Horse-9", confirm_password: "Correct-Horse-9"}) { message } }`);
      expect(ok.body).toEqual({ data: { signup: { message: 'Signed up successfully.' } } });
    });
  });
});

describe('HTTP edge of a split deployment (the gateway process in front of the services)', () => {
  let d: Deployment;
  beforeAll(async () => { d = await startDeployment('split', { readyTimeoutMs: 60_000 }); }, 120_000);
  afterAll(async () => { await d?.stop(); });

  it('CSRF refusals on /v1 and /graphql', async () => {
    const r = await postJson(`${d.url}/v1/signup`, {});
    expect([r.status, r.body]).toEqual([403, { code: 'permission_denied', message: 'origin or referer header is required for state-changing requests' }]);
    const g = await gql(d.url, 'query { meta { version } }', {}, { origin: 'http://evil.example' });
    expect([g.status, g.body]).toEqual([403, { errors: [{ message: 'origin not allowed', extensions: { code: 'PERMISSION_DENIED' } }] }]);
  });

  it('405, 404, invalid JSON and wrong types answer as in all-in-one', async () => {
    expect((await raw(`${d.url}/v1/login`)).body).toEqual({ code: 'method_not_allowed', message: 'Method Not Allowed' });
    expect((await raw(`${d.url}/v1/nope`)).body).toEqual({ code: 'not_found', message: 'Not Found' });
    const bad = await postJson(`${d.url}/v1/login`, '{', { origin: d.url });
    expect([bad.status, bad.body]).toEqual([400, { code: 'invalid_argument', message: 'invalid JSON body' }]);
    const typed = await postJson(`${d.url}/v1/login`, { email: 123, password: 'x' }, { origin: d.url });
    expect(typed.status).toBe(400);
    expect(typed.body.code).toBe('invalid_argument');
  });

  it('the gateway metrics listener serves Prometheus text; /metrics on the HTTP port is 404', async () => {
    await raw(`${d.url}/v1/meta`);
    const m = await raw(d.metricsUrl);
    expect(m.status).toBe(200);
    expect(String(m.body)).toContain('gatehouse_');
    expect((await raw(`${d.url}/metrics`)).status).toBe(404);
  });

  it('GraphQL unknown fields and mobile_login answer through the composed supergraph', async () => {
    const unknown = await gql(d.url, 'query { no_such_field }');
    expect([unknown.status, unknown.body.errors[0].extensions.code]).toEqual([200, 'INVALID_ARGUMENT']);
    const mobile = await gql(d.url, 'mutation { mobile_login(params: {phone_number: "+15555550100", password: "Correct-Horse-9"}) { message } }');
    expect(mobile.body.errors[0]).toMatchObject({ message: 'deprecated, use login with mobile phone_number', extensions: { code: 'UNIMPLEMENTED' } });
  });
});
