import { describe, it, expect, beforeAll, afterAll } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { AppError } from '@gatehouse/errors';
import { RedisRateLimiter } from './rate-limit-redis.ts';

// Runs against the machine's Redis (127.0.0.1:6379), one key prefix per test.
describe('RedisRateLimiter (behaviour.md §10: shared through Redis)', () => {
  let redis: Redis;
  const prefixes: string[] = [];
  const prefix = (): string => {
    const p = `gatehouse-test:${randomUUID()}:rl:`;
    prefixes.push(p);
    return p;
  };
  beforeAll(() => {
    redis = new Redis('redis://127.0.0.1:6379');
  });
  afterAll(async () => {
    for (const p of prefixes) {
      const keys = await redis.keys(`${p}*`);
      if (keys.length > 0) await redis.del(...keys);
    }
    await redis.quit();
  });

  it('allows the burst, then refuses, per IP', async () => {
    const l = new RedisRateLimiter({ rps: 0.01, burst: 3, redis, keyPrefix: prefix() });
    const results = [];
    for (let i = 0; i < 4; i++) results.push(await l.take('198.51.100.1'));
    expect(results).toEqual([true, true, true, false]);
    expect(await l.take('198.51.100.2')).toBe(true);
  });

  it('shares one bucket between two limiters (two gateway replicas)', async () => {
    const p = prefix();
    const a = new RedisRateLimiter({ rps: 0.01, burst: 2, redis: 'redis://127.0.0.1:6379', keyPrefix: p });
    const b = new RedisRateLimiter({ rps: 0.01, burst: 2, redis: 'redis://127.0.0.1:6379', keyPrefix: p });
    try {
      expect(await a.take('ip')).toBe(true);
      expect(await b.take('ip')).toBe(true);
      expect(await a.take('ip')).toBe(false);
      expect(await b.take('ip')).toBe(false);
    } finally {
      await a.close();
      await b.close();
    }
  });

  it('stores gatehouse:rl:<ip>-style keys with a TTL and refills over time', async () => {
    const p = prefix();
    const l = new RedisRateLimiter({ rps: 20, burst: 1, redis, keyPrefix: p });
    expect(await l.take('10.0.0.1')).toBe(true);
    expect(await l.take('10.0.0.1')).toBe(false);
    const ttl = await redis.pttl(`${p}10.0.0.1`);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(1050 + 1000);
    await new Promise((r) => setTimeout(r, 120)); // 20 rps → one token per 50 ms
    expect(await l.take('10.0.0.1')).toBe(true);
  });

  it('uses the default prefix gatehouse:rl:', async () => {
    const ip = `test-${randomUUID()}`;
    const l = new RedisRateLimiter({ rps: 1, burst: 5, redis });
    await l.take(ip);
    expect(await redis.exists(`gatehouse:rl:${ip}`)).toBe(1);
    await redis.del(`gatehouse:rl:${ip}`);
  });

  it('answers a request whose reply waited behind a stalled event loop (a busy gateway is not a Redis outage)', async () => {
    // the command timeout is a timer on this process's loop: after a stall the loop runs expired timers
    // before it reads the socket, so a reply already there lost to a short timeout (a 503 seen in CI)
    const l = new RedisRateLimiter({ rps: 1, burst: 5, redis: 'redis://127.0.0.1:6379', keyPrefix: prefix() });
    try {
      expect(await l.take('warm')).toBe(true);
      const pending = l.take('stalled');
      const until = Date.now() + 900;
      while (Date.now() < until) {
        // a synchronous stall of the gateway's event loop, as under GC or a busy node
      }
      expect(await pending).toBe(true);
    } finally {
      await l.close();
    }
  });

  it('fails with unavailable "rate limit store unavailable" when Redis is unreachable', async () => {
    const l = new RedisRateLimiter({ rps: 1, burst: 5, redis: 'redis://127.0.0.1:1', commandTimeoutMs: 200 });
    try {
      const err = await l.take('ip').then(() => undefined, (e: unknown) => e);
      expect(err).toBeInstanceOf(AppError);
      expect((err as AppError).code).toBe('unavailable');
      expect((err as AppError).message).toBe('rate limit store unavailable');
    } finally {
      await l.close();
    }
  });
});
