/** @module gateway/http/rate-limit-redis Token buckets shared by all gateway replicas through Redis (`--redis-url`, behaviour.md §10). */
import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';
import { AppError } from '@gatehouse/errors';
import { newRedis, watchRedis, type DependencyCheck, type Logger } from '@gatehouse/observability';
import { type RateLimiter, type TokenBucketOptions, isRateLimitDisabled } from './rate-limit.ts';

/**
 * One atomic refill-and-take. The clock is Redis `TIME`, so replicas with skewed clocks share one
 * bucket correctly. State: hash {tokens, ts(ms)}; the key expires once the bucket would be full.
 * Returns 1 (allowed) or 0.
 */
const TAKE_SCRIPT = `
local rps = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local ttl_ms = tonumber(ARGV[3])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local v = redis.call('HMGET', KEYS[1], 'tokens', 'ts')
local tokens = tonumber(v[1])
local ts = tonumber(v[2])
if tokens == nil or ts == nil then
  tokens = burst
  ts = now
end
local elapsed = math.max(0, now - ts) / 1000
tokens = math.min(burst, tokens + elapsed * rps)
local allowed = 0
if tokens >= 1 then
  tokens = tokens - 1
  allowed = 1
end
redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'ts', tostring(now))
redis.call('PEXPIRE', KEYS[1], ttl_ms)
return allowed
`;
const TAKE_SHA = createHash('sha1').update(TAKE_SCRIPT).digest('hex');

export const DEFAULT_RATE_LIMIT_KEY_PREFIX = 'gatehouse:rl:';
/** ms a limiter command may take before the request is answered 503 `unavailable` */
export const DEFAULT_COMMAND_TIMEOUT_MS = 2000;

export interface RedisRateLimiterOptions extends TokenBucketOptions {
  /** `--redis-url`, or an existing client (then `close()` leaves it open) */
  redis: string | Redis;
  /** key prefix; keys are `<prefix><ip>`. Default `gatehouse:rl:` */
  keyPrefix?: string;
  /**
   * per-command timeout in ms before the store counts as unavailable; default 2000. The timer runs on
   * this process's event loop, so a loop stalled past it (GC, a busy node) times out a reply already
   * in the socket: the default leaves room for that and stays far inside the 30 s request deadline
   * (behaviour.md §0.1).
   */
  commandTimeoutMs?: number;
  logger?: Logger;
}

/**
 * Token buckets in Redis, one hash per client IP (`gatehouse:rl:<ip>`), updated by one Lua script
 * (EVALSHA with EVAL fallback). A store failure becomes AppError `unavailable`
 * `rate limit store unavailable` (behaviour.md §0.2): the limiter fails closed rather than silently
 * letting every request through.
 */
export class RedisRateLimiter implements RateLimiter {
  readonly #redis: Redis;
  readonly #owned: boolean;
  readonly #prefix: string;
  readonly #opts: TokenBucketOptions;
  readonly #ttlMs: number;
  /** the connection's readiness (`/readyz`) when this limiter owns it; one log line per outage */
  readonly readiness?: DependencyCheck;

  constructor(options: RedisRateLimiterOptions) {
    this.#opts = { rps: options.rps, burst: options.burst };
    this.#prefix = options.keyPrefix ?? DEFAULT_RATE_LIMIT_KEY_PREFIX;
    // Time to refill from empty to full, plus a second of slack; at least one second.
    this.#ttlMs = isRateLimitDisabled(this.#opts) ? 1000 : Math.ceil((options.burst / options.rps) * 1000) + 1000;
    if (typeof options.redis === 'string') {
      this.#redis = newRedis(options.redis, {
        maxRetriesPerRequest: 1,
        commandTimeout: options.commandTimeoutMs ?? DEFAULT_COMMAND_TIMEOUT_MS,
        connectTimeout: 1000,
        retryStrategy: (times) => Math.min(times * 200, 2000),
      });
      this.#owned = true;
      this.readiness = watchRedis(this.#redis, options.logger ?? { info: () => undefined, warn: () => undefined }, options.redis);
    } else {
      this.#redis = options.redis;
      this.#owned = false;
    }
  }

  async take(key: string): Promise<boolean> {
    if (isRateLimitDisabled(this.#opts)) return true;
    const redisKey = this.#prefix + key;
    const args = [String(this.#opts.rps), String(this.#opts.burst), String(this.#ttlMs)];
    try {
      let result: unknown;
      try {
        result = await this.#redis.evalsha(TAKE_SHA, 1, redisKey, ...args);
      } catch (err) {
        if (!(err instanceof Error) || !err.message.startsWith('NOSCRIPT')) throw err;
        result = await this.#redis.eval(TAKE_SCRIPT, 1, redisKey, ...args);
      }
      return Number(result) === 1;
    } catch (err) {
      throw new AppError('unavailable', 'rate limit store unavailable', { cause: err, reason: 'rate_limit_store' });
    }
  }

  async close(): Promise<void> {
    if (!this.#owned) return;
    if (this.#redis.status !== 'ready') {
      this.#redis.disconnect(); // also stops the reconnect loop
      return;
    }
    try {
      await this.#redis.quit();
    } catch {
      this.#redis.disconnect();
    }
  }
}
