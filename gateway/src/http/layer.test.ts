import { describe, it, expect, beforeAll, afterAll } from '@jest/globals';
import { randomInt } from 'node:crypto';
import express from 'express';
import { Redis } from 'ioredis';
import { createLogger, createMetricsRegistry } from '@gatehouse/observability';
import { createHttpLayer, type HttpLayer, type HttpLayerOptions } from './layer.ts';
import { listen, send, type RunningApp } from './test-server.ts';

const BASE_OPTS: HttpLayerOptions = {
  allowedOrigins: ['https://app.example.com'],
  trustedProxies: ['127.0.0.0/8'],
  url: 'https://auth.example.com',
  enableHsts: false,
  rateLimitRps: 0.01,
  rateLimitBurst: 3,
};

async function start(opts: HttpLayerOptions): Promise<{ layer: HttpLayer; srv: RunningApp }> {
  const layer = createHttpLayer(opts, { logger: createLogger('silent'), registry: createMetricsRegistry({ defaultMetrics: false }) });
  const app = express();
  app.use(...layer.before);
  app.post('/v1/login', (req, res) => {
    res.json({ echo: req.body });
  });
  app.post('/graphql', (req, res) => {
    res.json({ data: { echo: req.body } });
  });
  app.use(layer.notFound);
  app.use(layer.errorHandler);
  return { layer, srv: await listen(app) };
}

const ORIGIN = { origin: 'https://app.example.com' };

describe('createHttpLayer: the whole chain', () => {
  let layer: HttpLayer;
  let srv: RunningApp;
  beforeAll(async () => {
    ({ layer, srv } = await start(BASE_OPTS));
  });
  afterAll(async () => {
    await srv.close();
    await layer.close();
  });
  const ip = (n: number) => ({ 'x-forwarded-for': `203.0.113.${n}` });

  it('passes a good request through with the parsed body and security headers', async () => {
    const res = await send(srv.base, 'POST', '/v1/login', { headers: { ...ORIGIN, ...ip(1) }, body: '{"email":"a@b.c"}' });
    expect(res.status).toBe(200);
    expect(res.json).toEqual({ echo: { email: 'a@b.c' } });
    expect(res.headers['x-frame-options']).toBe('DENY');
    expect(res.headers['access-control-allow-origin']).toBe('https://app.example.com');
  });

  it('answers a preflight before CSRF and the rate limit', async () => {
    const res = await send(srv.base, 'OPTIONS', '/graphql', { headers: { ...ORIGIN, ...ip(2), 'access-control-request-method': 'POST' } });
    expect(res.status).toBe(204);
  });

  it('refuses CSRF on /graphql with a GraphQL-shaped 403', async () => {
    const res = await send(srv.base, 'POST', '/graphql', { headers: ip(3), body: '{"query":"{meta{version}}"}' });
    expect(res.status).toBe(403);
    expect(res.json).toEqual({ errors: [{ message: 'origin or referer header is required for state-changing requests', extensions: { code: 'PERMISSION_DENIED' } }] });
    const bad = await send(srv.base, 'POST', '/graphql', { headers: { ...ip(3), origin: 'https://evil.example' } });
    expect(bad.json).toEqual({ errors: [{ message: 'origin not allowed', extensions: { code: 'PERMISSION_DENIED' } }] });
  });

  it('refuses body errors on /graphql GraphQL-shaped and on /v1 as {code, message}', async () => {
    const g = await send(srv.base, 'POST', '/graphql', { headers: { ...ORIGIN, ...ip(4) }, body: 'nope' });
    expect(g.status).toBe(400);
    expect(g.json).toEqual({ errors: [{ message: 'invalid JSON body', extensions: { code: 'INVALID_ARGUMENT' } }] });
    const v = await send(srv.base, 'POST', '/v1/login', { headers: { ...ORIGIN, ...ip(4) }, body: '[]' });
    expect(v.json).toEqual({ code: 'invalid_argument', message: 'invalid JSON body' });
  });

  it('answers 404 and 405 on /v1', async () => {
    expect((await send(srv.base, 'GET', '/v1/nope', { headers: ip(5) })).json).toEqual({ code: 'not_found', message: 'Not Found' });
    expect((await send(srv.base, 'GET', '/v1/login', { headers: ip(5) })).status).toBe(405);
  });

  it('rate limits per client IP, and the exported limiter shares the buckets (gRPC)', async () => {
    for (let i = 0; i < 3; i++) expect(await layer.limiter.take('203.0.113.6')).toBe(true);
    const res = await send(srv.base, 'POST', '/v1/login', { headers: { ...ORIGIN, ...ip(6) } });
    expect(res.status).toBe(429);
    expect(res.headers['retry-after']).toBe('1');
    expect((await send(srv.base, 'POST', '/v1/login', { headers: { ...ORIGIN, ...ip(7) } })).status).toBe(200);
  });

  it('fails at construction on a bad --trusted-proxies CIDR', () => {
    expect(() => createHttpLayer({ ...BASE_OPTS, trustedProxies: ['300.0.0.0/8'] }, { logger: createLogger('silent'), registry: createMetricsRegistry({ defaultMetrics: false }) }))
      .toThrow('--trusted-proxies: invalid CIDR "300.0.0.0/8"');
  });
});

describe('createHttpLayer with --redis-url (shared buckets)', () => {
  let a: { layer: HttpLayer; srv: RunningApp };
  let b: { layer: HttpLayer; srv: RunningApp };
  let redis: Redis;
  const clientIp = `2001:db8::${randomInt(1, 0xffff).toString(16)}:${randomInt(1, 0xffff).toString(16)}`;
  beforeAll(async () => {
    redis = new Redis('redis://127.0.0.1:6379');
    a = await start({ ...BASE_OPTS, redisUrl: 'redis://127.0.0.1:6379' });
    b = await start({ ...BASE_OPTS, redisUrl: 'redis://127.0.0.1:6379' });
    // traffic reaches a replica once /readyz, which includes the limiter's Redis, says ready: a request
    // before its connection is up fails closed (503), which is not what this test is about
    for (const x of [a, b]) {
      const deadline = Date.now() + 15_000;
      for (;;) {
        try {
          await x.layer.limiter.readiness!.check();
          break;
        } catch (err) {
          if (Date.now() > deadline) throw err;
          await new Promise((r) => setTimeout(r, 100));
        }
      }
    }
  });
  afterAll(async () => {
    await redis.del(`gatehouse:rl:${clientIp}`);
    await redis.quit();
    for (const x of [a, b]) {
      await x.srv.close();
      await x.layer.close();
    }
  });

  it('two gateway replicas share one bucket per client IP', async () => {
    const headers = { ...ORIGIN, 'x-forwarded-for': clientIp };
    expect((await send(a.srv.base, 'POST', '/v1/login', { headers })).status).toBe(200);
    expect((await send(b.srv.base, 'POST', '/v1/login', { headers })).status).toBe(200);
    expect((await send(a.srv.base, 'POST', '/v1/login', { headers })).status).toBe(200);
    const res = await send(b.srv.base, 'POST', '/v1/login', { headers });
    expect(res.status).toBe(429);
    expect(res.json).toEqual({ code: 'resource_exhausted', message: 'too many requests, please try again later' });
    expect(await redis.exists(`gatehouse:rl:${clientIp}`)).toBe(1);
  });

  it('answers 503 unavailable when Redis is unreachable', async () => {
    const down = await start({ ...BASE_OPTS, redisUrl: 'redis://127.0.0.1:1' });
    try {
      const res = await send(down.srv.base, 'POST', '/v1/login', { headers: ORIGIN });
      expect(res.status).toBe(503);
      expect(res.json).toEqual({ code: 'unavailable', message: 'rate limit store unavailable' });
    } finally {
      await down.srv.close();
      await down.layer.close();
    }
  });
});
