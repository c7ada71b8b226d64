/** @module rest.test: the /v1 table answers the same on the node:http fast path and through Express (spec §1-§2). */
import { describe, it, expect, beforeAll, afterAll } from '@jest/globals';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { AppError } from '@gatehouse/errors';
import { createLogger, createMetricsRegistry } from '@gatehouse/observability';
import type { CallContext, ServiceClient } from '@gatehouse/rpc';
import { createHttpLayer } from './http/index.ts';
import { ROUTES } from './routes/table.ts';
import { createRestFastPath, mountRestRoutes, type ServiceClients } from './rest.ts';

const URL_FLAG = 'http://auth.example.com';
const ORIGIN = 'http://auth.example.com';

/** An authn stand-in: echoes what the gateway sent, sets a cookie on Login, refuses with a service error on Logout. */
function fakeAuthn(): ServiceClient & { calls: Array<{ rpc: string; req: unknown; ctx: CallContext }> } {
  const calls: Array<{ rpc: string; req: unknown; ctx: CallContext }> = [];
  return {
    calls,
    async call(rpc, req, ctx) {
      calls.push({ rpc, req, ctx });
      if (rpc === 'Logout') throw new AppError('unauthenticated', 'unauthorized');
      if (rpc === 'Login') ctx.setCookies.push('cookie_session=abc; Path=/; HttpOnly');
      return { rpc, req: req as Record<string, unknown>, authorization: ctx.headers.authorization ?? null };
    },
    close() {},
  };
}

interface Answer { status: number; headers: http.IncomingHttpHeaders; body: string }

function request(port: number, method: string, path: string, body?: string, headers: Record<string, string> = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, method, path, headers: { origin: ORIGIN, ...headers } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => { text += c; });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

describe('the /v1 fast path next to the Express routes', () => {
  let server: http.Server;
  let port: number;
  const authn = fakeAuthn();
  let expressOnly = 0;
  const registry = createMetricsRegistry({ defaultMetrics: false });

  beforeAll(async () => {
    const logger = createLogger('silent');
    const layer = createHttpLayer(
      { allowedOrigins: ['*'], trustedProxies: [], url: URL_FLAG, enableHsts: false, rateLimitRps: 0, rateLimitBurst: 0 },
      { logger, registry },
    );
    const clients: ServiceClients = { authn };
    const app = express();
    app.set('etag', false);
    app.disable('x-powered-by');
    app.set('case sensitive routing', true);
    app.use((_req, _res, next) => { expressOnly++; next(); });
    for (const mw of layer.before) app.use(mw);
    mountRestRoutes(app, ROUTES, clients, { deadlineMs: 30_000, logger });
    app.use(layer.notFound);
    app.use(layer.errorHandler);
    const fast = createRestFastPath(ROUTES, clients, layer, { deadlineMs: 30_000, logger });
    server = http.createServer((req, res) => { if (!fast(req, res)) app(req, res); });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    await new Promise((r) => server.close(r));
  });

  const comparable = (a: Answer): unknown => {
    // the request id is fresh per request (http/access-log.ts); that it is set is what compares
    const { date: _d, 'keep-alive': _k, connection: _c, 'x-request-id': id, ...headers } = a.headers;
    return { status: a.status, headers, body: a.body, hasRequestId: typeof id === 'string' && id.length > 0 };
  };

  it('answers an exact table path without Express, exactly as Express answers its variants', async () => {
    const body = JSON.stringify({ email: 'a@example.com', password: 'pw' });
    const before = expressOnly;
    const exact = await request(port, 'POST', '/v1/login', body, { 'content-type': 'application/json' });
    expect(expressOnly).toBe(before);
    const slash = await request(port, 'POST', '/v1/login/', body, { 'content-type': 'application/json' });
    const query = await request(port, 'POST', '/v1/login?x=1', body, { 'content-type': 'application/json' });
    expect(expressOnly).toBe(before + 1);
    const upper = await request(port, 'POST', '/V1/Login', body, { 'content-type': 'application/json' });
    expect(expressOnly).toBe(before + 2);
    expect(upper.status).toBe(404);
    expect(exact.status).toBe(200);
    expect(JSON.parse(exact.body)).toEqual({ rpc: 'Login', req: { email: 'a@example.com', password: 'pw' }, authorization: null });
    expect(exact.headers['set-cookie']).toEqual(['cookie_session=abc; Path=/; HttpOnly']);
    expect(exact.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(exact.headers['x-content-type-options']).toBe('nosniff');
    expect(comparable(slash)).toEqual(comparable(exact));
    expect(comparable(query)).toEqual(comparable(exact));
  });

  it('runs the HTTP layer first: CSRF, body rules, CORS', async () => {
    const noOrigin = await request(port, 'POST', '/v1/login', '{}', { origin: '' });
    expect(noOrigin.status).toBe(403);
    expect(JSON.parse(noOrigin.body)).toMatchObject({ code: 'permission_denied' });
    const badJson = await request(port, 'POST', '/v1/login', '{"email":');
    expect(badJson.status).toBe(400);
    expect(JSON.parse(badJson.body)).toEqual({ code: 'invalid_argument', message: 'invalid JSON body' });
    const array = await request(port, 'POST', '/v1/login', '[1]');
    expect(JSON.parse(array.body)).toEqual({ code: 'invalid_argument', message: 'invalid JSON body' });
    const cors = await request(port, 'POST', '/v1/login', '{}', { origin: 'http://auth.example.com' });
    expect(cors.headers['access-control-allow-origin']).toBe('*');
  });

  it('forwards the credentials, renders service errors as {code, message}, answers HEAD without a body', async () => {
    const calls = authn.calls.length;
    const out = await request(port, 'GET', '/v1/profile', undefined, { authorization: 'Bearer t0k3n' });
    expect(JSON.parse(out.body)).toMatchObject({ rpc: 'Profile', req: {}, authorization: 'Bearer t0k3n' });
    expect(authn.calls.length).toBe(calls + 1);
    const refused = await request(port, 'POST', '/v1/logout', '{}');
    expect(refused.status).toBe(401);
    expect(JSON.parse(refused.body)).toEqual({ code: 'unauthenticated', message: 'unauthorized' });
    const head = await request(port, 'HEAD', '/v1/profile');
    expect(head.status).toBe(200);
    expect(head.body).toBe('');
  });

  it('counts its requests under the route template, by method and status, as Express does for the variants', async () => {
    const count = async (route: string, method: string, code: string): Promise<number> => {
      const line = (await registry.metrics()).split('\n')
        .find((l) => l.startsWith(`gatehouse_http_requests_total{route="${route}",method="${method}",code="${code}"}`));
      return line === undefined ? 0 : Number(line.split(' ').pop());
    };
    const before = { ok: await count('/v1/login', 'POST', '200'), refused: await count('/v1/logout', 'POST', '401'), head: await count('/v1/profile', 'HEAD', '200') };
    await request(port, 'POST', '/v1/login', '{}');
    await request(port, 'POST', '/v1/login/', '{}'); // Express
    await request(port, 'POST', '/v1/logout', '{}');
    await request(port, 'HEAD', '/v1/profile');
    await new Promise((r) => setImmediate(r)); // recorded when the response closes
    expect(await count('/v1/login', 'POST', '200')).toBe(before.ok + 2);
    expect(await count('/v1/logout', 'POST', '401')).toBe(before.refused + 1);
    expect(await count('/v1/profile', 'HEAD', '200')).toBe(before.head + 1);
  });

  it('leaves unknown paths and wrong methods to Express: 404 and 405', async () => {
    const missing = await request(port, 'POST', '/v1/no_such_route', '{}');
    expect(missing.status).toBe(404);
    expect(JSON.parse(missing.body)).toEqual({ code: 'not_found', message: 'Not Found' });
    const wrong = await request(port, 'GET', '/v1/login');
    expect(wrong.status).toBe(405);
    expect(JSON.parse(wrong.body)).toEqual({ code: 'method_not_allowed', message: 'Method Not Allowed' });
  });
});
