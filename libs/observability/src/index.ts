/**
 * @module @gatehouse/observability
 * pino logger factory with the one redaction list, and the per-process prom-client registry
 * (STYLE §6).
 */
import { pino, type Logger, type LoggerOptions } from 'pino';
import { createRequire } from 'node:module';
import type * as PinoPretty from 'pino-pretty';
import { Registry, collectDefaultMetrics } from 'prom-client';
import { traceFields } from './tracing.ts';

export type { Logger } from 'pino';

/** Paths pino redacts everywhere: credentials, secrets, tokens, OTPs (STYLE §6). */
export const REDACT_PATHS: readonly string[] = [
  'authorization', '*.authorization', 'headers.authorization', 'req.headers.authorization',
  'cookie', '*.cookie', 'headers.cookie', 'req.headers.cookie', 'set-cookie', '*.set-cookie',
  'x-service-admin-secret', '*["x-service-admin-secret"]',
  'password', '*.password', 'confirm_password', '*.confirm_password', 'new_password', '*.new_password',
  'old_password', '*.old_password', 'confirm_new_password', '*.confirm_new_password',
  'admin_secret', '*.admin_secret', 'client_secret', '*.client_secret', 'jwt_secret', '*.jwt_secret',
  'access_token', '*.access_token', 'refresh_token', '*.refresh_token', 'id_token', '*.id_token',
  'token', '*.token', 'otp', '*.otp', 'authenticator_secret', '*.authenticator_secret',
  'authenticator_recovery_codes', '*.authenticator_recovery_codes', 'smtp_password', '*.smtp_password',
  'adminSecret', 'clientSecret', 'jwtSecret', 'jwtPrivateKey', 'smtpPassword', 'encryptionKey',
  'config.adminSecret', 'config.clientSecret', 'config.jwtSecret', 'config.jwtPrivateKey', 'config.smtpPassword',
];

/** Bytes of log lines gathered before a write to stdout (see {@link createLogger}). */
const STDOUT_MIN_WRITE_BYTES = 4096;
/** Longest time a log line waits for its write to stdout, in milliseconds. */
const STDOUT_FLUSH_MS = 250;

export type LogLevel = 'debug' | 'info' | 'warn' | 'error' | 'silent';

/** `json`: one JSON object per line (the default, for collectors); `pretty`: coloured, human-readable lines for a terminal (development). */
export type LogFormat = 'json' | 'pretty';

/**
 * Creates the process logger. Services take `logger.child({ service })`.
 * - `json` (default): one JSON object per line on `destination` (stdout): ISO-8601 `time`, `level`
 *   as a word, secrets redacted, and `trace_id`/`span_id` when a span is active (./tracing.ts). On
 *   stdout the lines are written in batches of 4 KiB or more, at the latest 250 ms after the line and
 *   at exit (a process killed with SIGKILL loses at most that).
 * - `pretty`: the same records through pino-pretty (one readable line each, synchronous), for a
 *   developer's terminal; not meant for collectors.
 */
export function createLogger(level: LogLevel = 'info', destination?: NodeJS.WritableStream, format: LogFormat = 'json'): Logger {
  const options: LoggerOptions = {
    level,
    base: undefined,
    redact: { paths: [...REDACT_PATHS], censor: '[redacted]' },
    // ISO-8601 (`"time":"2026-11-25T23:40:01.123Z"`), readable without converting epoch milliseconds
    timestamp: pino.stdTimeFunctions.isoTime,
    mixin: traceFields,
  };
  if (format === 'pretty') {
    // pino-pretty names levels from pino's numbers itself, so the word formatter stays off here
    // pino-pretty (CommonJS, ≈ 1 MiB of heap) is loaded only for this format (issue 22 §3)
    const { build: prettyStream } = createRequire(import.meta.url)('pino-pretty') as typeof PinoPretty;
    const pretty = prettyStream({ sync: true, singleLine: true, colorize: destination === undefined && process.stdout.isTTY, translateTime: 'SYS:HH:MM:ss.l', ...(destination ? { destination } : {}) });
    return pino(options, pretty);
  }
  const json: LoggerOptions = { ...options, formatters: { level: (label: string) => ({ level: label }) } };
  // stdout: lines are gathered into writes of 4 KiB or more, and whatever is pending is written every
  // 250 ms and when the process exits (pino flushes on exit), instead of one write per line (issue 38 §4:
  // with the access log on, one write per request cost more CPU than a validate_jwt_token request)
  return pino(json, (destination ?? pino.destination({ dest: 1, sync: false, minLength: STDOUT_MIN_WRITE_BYTES, periodicFlush: STDOUT_FLUSH_MS })) as never);
}

/** One registry per process, passed down, so all-in-one never registers a metric twice. */
export function createMetricsRegistry(options: { defaultMetrics?: boolean } = {}): Registry {
  const registry = new Registry();
  if (options.defaultMetrics !== false) collectDefaultMetrics({ register: registry, prefix: 'gatehouse_' });
  return registry;
}

export { Registry } from 'prom-client';
export {
  currentTraceparent, extractTraceContext, failSpan, injectTraceContext, runInSpan, SpanKind, startTracing, traceFields,
  tracingEnabled, withSpan, type Context, type Span, type TraceCarrier, type Tracing, type TracingOptions,
} from './tracing.ts';
export { startMetricsServer } from './metrics-server.ts';
export type { MetricsServer } from './metrics-server.ts';
export { registerRequestSeries } from './request-series.ts';
export { createGrpcServerMetrics, type GrpcCallObserver } from './grpc-metrics.ts';
export {
  dependencyState, newRedis, readinessReport, redisTarget, watchDependencies, watchDependency, watchRedis,
  type DependencyCheck, type DependencyState, type ReadinessReport, type RedisLike, type StateLogger, type WatchedDependency,
} from './dependency.ts';
export { releaseUnusedMemory, scheduleMemoryRelease } from './memory.ts';
export type { RequestSeriesOptions, RequestSeriesTable, Series } from './request-series.ts';
