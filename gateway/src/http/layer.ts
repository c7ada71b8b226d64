/** @module gateway/http/layer Assembles the gateway's HTTP middleware chain from the flags it needs. */
import type { ErrorRequestHandler, RequestHandler } from 'express';
import type { Logger, Registry } from '@gatehouse/observability';
import { jsonBody } from './body.ts';
import { clientIpMiddleware, compileTrustedProxies } from './client-ip.ts';
import { cors } from './cors.ts';
import { csrf } from './csrf.ts';
import { deadline } from './deadline.ts';
import { createErrorHandler } from './errors.ts';
import { createHttpMetrics } from './metrics.ts';
import { v1NotFound } from './not-found.ts';
import { compileOriginPolicy } from './origins.ts';
import { MemoryRateLimiter, type RateLimiter, rateLimit } from './rate-limit.ts';
import { RedisRateLimiter } from './rate-limit-redis.ts';
import { accessLog } from './access-log.ts';
import { securityHeaders } from './security-headers.ts';

/** The flags the HTTP layer reads (spec §1; behaviour.md §1.1, §1.2, §10). */
export interface HttpLayerOptions {
  /** `--allowed-origins`; `['*']` (the default) means CORS `*` and same-origin CSRF */
  allowedOrigins: string[];
  /** `--trusted-proxies` CIDRs; empty means `X-Forwarded-*` is ignored */
  trustedProxies: string[];
  /** `--url`; its host counts as same-origin under `*` */
  url: string;
  /** `--enable-hsts` */
  enableHsts: boolean;
  /** `--rate-limit-rps` (tokens per second; 0 disables) */
  rateLimitRps: number;
  /** `--rate-limit-burst` (bucket capacity; 0 disables) */
  rateLimitBurst: number;
  /** `--redis-url`: share buckets across replicas */
  redisUrl?: string;
  /** request deadline in ms; default 30 000 (behaviour.md §0.1) */
  deadlineMs?: number;
}

export interface HttpLayer {
  /**
   * Mount in this order before any route: metrics, security headers, client IP, deadline, CORS
   * (answers preflights), rate limit, CSRF, JSON body.
   */
  readonly before: RequestHandler[];
  /** mount after the /v1 routes: 404 `Not Found` / 405 `Method Not Allowed` for /v1 paths */
  readonly notFound: RequestHandler;
  /** the limiter, shared with the native gRPC server (behaviour.md §10: same buckets) */
  readonly limiter: RateLimiter;
  /** the last error handler: anything thrown → `{code, message}` (GraphQL-shaped on /graphql) */
  readonly errorHandler: ErrorRequestHandler;
  close(): Promise<void>;
}

/**
 * Builds the HTTP layer.
 * @throws AppError `invalid_argument` `--trusted-proxies: invalid CIDR "<value>"` for a bad CIDR
 */
export function createHttpLayer(
  opts: HttpLayerOptions,
  deps: { logger: Logger; registry: Registry; limiter?: RateLimiter },
): HttpLayer {
  const trusted = compileTrustedProxies(opts.trustedProxies);
  const origins = compileOriginPolicy(opts.allowedOrigins);
  const bucket = { rps: opts.rateLimitRps, burst: opts.rateLimitBurst };
  const limiter = deps.limiter
    ?? (opts.redisUrl
      ? new RedisRateLimiter({ ...bucket, redis: opts.redisUrl, logger: deps.logger })
      : new MemoryRateLimiter(bucket));
  const metrics = createHttpMetrics(deps.registry);
  return {
    before: [
      // the access line's fields are fixed and hold no secret (access-log.ts), so it skips the redaction
      // pass the other log lines take: that pass cost ≈ 40 µs per line, more than a validate_jwt_token
      // request itself; in json format the line is even written pre-shaped, past pino's serializer
      // (issue 38 §4, test/bench/README.md)
      accessLog(deps.logger.child({ component: 'access' }, { redact: [] })),
      metrics.middleware,
      securityHeaders({ enableHsts: opts.enableHsts }),
      clientIpMiddleware(trusted),
      deadline(opts.deadlineMs === undefined ? {} : { ms: opts.deadlineMs }),
      cors(origins),
      rateLimit(limiter),
      csrf(origins, opts.url),
      jsonBody(),
    ],
    notFound: v1NotFound(),
    limiter,
    errorHandler: createErrorHandler(deps.logger),
    close: () => limiter.close(),
  };
}
