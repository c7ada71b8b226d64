/** @module gateway/http/rate-limit Per-client-IP token bucket for the HTTP port and native gRPC (behaviour.md §10). */
import type { RequestHandler } from 'express';
import { AppError } from '@gatehouse/errors';
import type { DependencyCheck } from '@gatehouse/observability';
import { clientInfo } from './client-ip.ts';
import { sendErrorFor } from './errors.ts';
import { requestPath } from './request-path.ts';

/** One limiter shared by the HTTP layer and the gRPC server, keyed by client IP. */
export interface RateLimiter {
  /**
   * Takes one token from `key`'s bucket.
   * @returns true when the request may proceed, false when the bucket is empty
   * @throws AppError `unavailable` `rate limit store unavailable` when a shared store cannot be reached
   */
  take(key: string): Promise<boolean>;
  close(): Promise<void>;
  /** a shared store's connection, for `/readyz` (absent: in-process buckets) */
  readonly readiness?: DependencyCheck;
}

/** Token-bucket parameters: `rps` tokens per second refill, `burst` capacity. Either 0 disables limiting. */
export interface TokenBucketOptions {
  rps: number;
  burst: number;
}

export const RATE_LIMIT_MESSAGE = 'too many requests, please try again later';

/** The 429 refusal (behaviour.md §10): `resource_exhausted`, `Retry-After: 1`. */
export function rateLimitedError(): AppError {
  return new AppError('resource_exhausted', RATE_LIMIT_MESSAGE, { headers: { 'Retry-After': '1' }, reason: 'rate_limited' });
}

/** True when the options disable limiting (`--rate-limit-rps=0` or `--rate-limit-burst=0`). */
export function isRateLimitDisabled(o: TokenBucketOptions): boolean {
  return !(o.rps > 0) || !(o.burst > 0);
}

interface Bucket {
  tokens: number;
  updatedMs: number;
}

/**
 * In-process token buckets. The map is bounded (`maxKeys`, default 100 000): buckets are kept in
 * least-recently-used order and, when full, the least recently used one is dropped. A dropped
 * bucket has refilled already if it was idle for `burst / rps` seconds, which is the common case;
 * otherwise its client gets a fresh burst, the accepted cost of bounded memory.
 */
export class MemoryRateLimiter implements RateLimiter {
  readonly #rps: number;
  readonly #burst: number;
  readonly #maxKeys: number;
  readonly #now: () => number;
  readonly #buckets = new Map<string, Bucket>();

  constructor(options: TokenBucketOptions & { maxKeys?: number; nowMs?: () => number }) {
    this.#rps = options.rps;
    this.#burst = options.burst;
    this.#maxKeys = Math.max(1, options.maxKeys ?? 100_000);
    this.#now = options.nowMs ?? Date.now;
  }

  /** Number of buckets held (for tests and metrics). */
  get size(): number {
    return this.#buckets.size;
  }

  take(key: string): Promise<boolean> {
    return Promise.resolve(this.takeSync(key));
  }

  /** Synchronous {@link take}. */
  takeSync(key: string): boolean {
    if (isRateLimitDisabled({ rps: this.#rps, burst: this.#burst })) return true;
    const now = this.#now();
    const bucket = this.#buckets.get(key);
    let tokens = this.#burst;
    if (bucket) {
      const elapsedSeconds = Math.max(0, now - bucket.updatedMs) / 1000;
      tokens = Math.min(this.#burst, bucket.tokens + elapsedSeconds * this.#rps);
      this.#buckets.delete(key); // re-inserted below: Map order becomes LRU order
    } else if (this.#buckets.size >= this.#maxKeys) {
      this.#evict(now);
    }
    const allowed = tokens >= 1;
    this.#buckets.set(key, { tokens: allowed ? tokens - 1 : tokens, updatedMs: now });
    return allowed;
  }

  #evict(now: number): void {
    // First drop buckets that have fully refilled (forgetting them changes nothing), then the LRU one.
    const fullAfterMs = (this.#burst / this.#rps) * 1000;
    for (const [key, b] of this.#buckets) {
      if (now - b.updatedMs < fullAfterMs) break; // later entries are more recent
      this.#buckets.delete(key);
    }
    if (this.#buckets.size >= this.#maxKeys) {
      const oldest = this.#buckets.keys().next();
      if (!oldest.done) this.#buckets.delete(oldest.value);
    }
  }

  close(): Promise<void> {
    this.#buckets.clear();
    return Promise.resolve();
  }
}

/** Paths never rate limited (behaviour.md §10): probes, discovery documents and the static UI. */
export function isRateLimitExempt(path: string): boolean {
  return path === '/healthz' || path === '/readyz'
    || path === '/.well-known/openid-configuration' || path === '/.well-known/jwks.json'
    || path === '/app' || path.startsWith('/app/') || path === '/dashboard' || path.startsWith('/dashboard/');
}

/**
 * Middleware: one token per request from the client IP's bucket (resolved under `--trusted-proxies`
 * by {@link clientIpMiddleware}). Refuses with 429 `resource_exhausted` + `Retry-After: 1`;
 * a store failure answers 503 `unavailable` (behaviour.md §0.2).
 */
export function rateLimit(limiter: RateLimiter): RequestHandler {
  // the in-process limiter answers synchronously: no promise hop per request
  const local = limiter instanceof MemoryRateLimiter ? limiter : null;
  return (req, res, next) => {
    if (isRateLimitExempt(requestPath(req))) {
      next();
      return;
    }
    if (local) {
      if (local.takeSync(clientInfo(req).ip)) next();
      else sendErrorFor(req, res, rateLimitedError());
      return;
    }
    limiter.take(clientInfo(req).ip).then(
      (allowed) => {
        if (res.headersSent) return; // the deadline answered while the store was slow
        if (allowed) next();
        else sendErrorFor(req, res, rateLimitedError());
      },
      (err: unknown) => {
        sendErrorFor(req, res, err instanceof AppError
          ? err
          : new AppError('unavailable', 'rate limit store unavailable', { cause: err }));
      },
    );
  };
}
