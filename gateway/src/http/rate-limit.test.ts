import { describe, it, expect, beforeAll, afterAll } from '@jest/globals';
import express from 'express';
import { AppError } from '@gatehouse/errors';
import { clientIpMiddleware, compileTrustedProxies } from './client-ip.ts';
import { MemoryRateLimiter, type RateLimiter, isRateLimitExempt, rateLimit } from './rate-limit.ts';
import { listen, send, type RunningApp } from './test-server.ts';

describe('MemoryRateLimiter token bucket', () => {
  it('allows burst requests, then refills at rps', () => {
    let now = 1_000_000;
    const l = new MemoryRateLimiter({ rps: 2, burst: 3, nowMs: () => now });
    expect([l.takeSync('a'), l.takeSync('a'), l.takeSync('a'), l.takeSync('a')]).toEqual([true, true, true, false]);
    now += 499;
    expect(l.takeSync('a')).toBe(false);
    now += 1; // 0.5 s at 2 rps = 1 token
    expect(l.takeSync('a')).toBe(true);
    expect(l.takeSync('a')).toBe(false);
    now += 60_000; // never more than burst
    expect([l.takeSync('a'), l.takeSync('a'), l.takeSync('a'), l.takeSync('a')]).toEqual([true, true, true, false]);
  });

  it('keeps one bucket per key', () => {
    const l = new MemoryRateLimiter({ rps: 1, burst: 1, nowMs: () => 0 });
    expect(l.takeSync('a')).toBe(true);
    expect(l.takeSync('a')).toBe(false);
    expect(l.takeSync('b')).toBe(true);
  });

  it('is disabled when rps or burst is 0', () => {
    for (const opts of [{ rps: 0, burst: 5 }, { rps: 5, burst: 0 }]) {
      const l = new MemoryRateLimiter({ ...opts, nowMs: () => 0 });
      for (let i = 0; i < 50; i++) expect(l.takeSync('a')).toBe(true);
      expect(l.size).toBe(0);
    }
  });

  it('bounds memory: evicts fully refilled buckets first', () => {
    let now = 0;
    const l = new MemoryRateLimiter({ rps: 1, burst: 2, maxKeys: 3, nowMs: () => now });
    l.takeSync('a');
    l.takeSync('b');
    now = 10_000; // a and b have fully refilled
    l.takeSync('c');
    l.takeSync('d'); // the map is full: the idle a and b go
    expect(l.size).toBe(2);
  });

  it('bounds memory: otherwise evicts the least recently used bucket', () => {
    const l = new MemoryRateLimiter({ rps: 0.001, burst: 1, maxKeys: 2, nowMs: () => 0 });
    expect(l.takeSync('a')).toBe(true);
    expect(l.takeSync('b')).toBe(true);
    expect(l.takeSync('a')).toBe(false); // a is now the most recently used
    expect(l.takeSync('c')).toBe(true); // evicts b
    expect(l.takeSync('a')).toBe(false); // a kept its empty bucket
    expect(l.takeSync('b')).toBe(true); // b starts over
    expect(l.size).toBe(2);
  });
});

describe('rate-limit middleware (behaviour.md §10)', () => {
  function app(limiter: RateLimiter) {
    const a = express();
    a.use(clientIpMiddleware(compileTrustedProxies(['127.0.0.0/8'])), rateLimit(limiter));
    a.use((_req, res) => {
      res.json({ ok: true });
    });
    return a;
  }
  let srv: RunningApp;
  let failing: RunningApp;
  beforeAll(async () => {
    srv = await listen(app(new MemoryRateLimiter({ rps: 0.001, burst: 2 })));
    failing = await listen(app({
      take: () => Promise.reject(new AppError('unavailable', 'rate limit store unavailable')),
      close: () => Promise.resolve(),
    }));
  });
  afterAll(async () => {
    await srv.close();
    await failing.close();
  });
  const get = (ip: string, path = '/v1/meta') => send(srv.base, 'GET', path, { headers: { 'x-forwarded-for': ip } });

  it('answers 429 resource_exhausted with Retry-After: 1 after the burst', async () => {
    expect((await get('198.51.100.1')).status).toBe(200);
    expect((await get('198.51.100.1')).status).toBe(200);
    const res = await get('198.51.100.1');
    expect(res.status).toBe(429);
    expect(res.headers['retry-after']).toBe('1');
    expect(res.json).toEqual({ code: 'resource_exhausted', message: 'too many requests, please try again later' });
  });

  it('keys on the client IP resolved through a trusted proxy', async () => {
    expect((await get('198.51.100.2')).status).toBe(200);
    expect((await get('198.51.100.2')).status).toBe(200);
    expect((await get('198.51.100.2')).status).toBe(429);
    expect((await get('198.51.100.3')).status).toBe(200);
  });

  it('uses the GraphQL-shaped body on /graphql', async () => {
    await get('198.51.100.4', '/graphql');
    await get('198.51.100.4', '/graphql');
    const res = await send(srv.base, 'POST', '/graphql', { headers: { 'x-forwarded-for': '198.51.100.4' } });
    expect(res.status).toBe(429);
    expect(res.json).toEqual({ errors: [{ message: 'too many requests, please try again later', extensions: { code: 'RESOURCE_EXHAUSTED' } }] });
  });

  it('never limits probes, discovery documents or the static UI', async () => {
    for (const path of ['/healthz', '/readyz', '/.well-known/openid-configuration', '/.well-known/jwks.json', '/app/index.js', '/dashboard/x']) {
      for (let i = 0; i < 4; i++) expect((await get('198.51.100.5', path)).status).toBe(200);
    }
    expect(isRateLimitExempt('/apps')).toBe(false);
  });

  it('answers 503 unavailable when the shared store is unreachable', async () => {
    const res = await send(failing.base, 'GET', '/v1/meta');
    expect(res.status).toBe(503);
    expect(res.json).toEqual({ code: 'unavailable', message: 'rate limit store unavailable' });
  });
});
