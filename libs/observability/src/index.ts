/**
 * @module @gatehouse/observability
 * pino logger factory with the one redaction list, and the per-process prom-client registry
 * (STYLE §6).
 */
import { pino, type Logger } from 'pino';
import { Registry, collectDefaultMetrics } from 'prom-client';

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

export type LogLevel = 'debug' | 'info' | 'warn' | 'error' | 'silent';

/** Creates the process logger (JSON lines on stdout). Services take `logger.child({ service })`. */
export function createLogger(level: LogLevel = 'info', destination?: NodeJS.WritableStream): Logger {
  const options = {
    level,
    base: undefined,
    redact: { paths: [...REDACT_PATHS], censor: '[redacted]' },
    formatters: { level: (label: string) => ({ level: label }) },
    // ISO-8601 (`"time":"2026-11-25T23:40:01.123Z"`), readable without converting epoch milliseconds
    timestamp: pino.stdTimeFunctions.isoTime,
  };
  return destination ? pino(options, destination as never) : pino(options);
}

/** One registry per process, passed down, so all-in-one never registers a metric twice. */
export function createMetricsRegistry(options: { defaultMetrics?: boolean } = {}): Registry {
  const registry = new Registry();
  if (options.defaultMetrics !== false) collectDefaultMetrics({ register: registry, prefix: 'gatehouse_' });
  return registry;
}

export { Registry } from 'prom-client';
export { startMetricsServer } from './metrics-server.ts';
export type { MetricsServer } from './metrics-server.ts';
export { registerRequestSeries } from './request-series.ts';
export { createGrpcServerMetrics, type GrpcCallObserver } from './grpc-metrics.ts';
export {
  dependencyState, readinessReport, redisTarget, watchRedis,
  type DependencyCheck, type DependencyState, type ReadinessReport, type RedisLike, type StateLogger,
} from './dependency.ts';
export type { RequestSeriesOptions, RequestSeriesTable, Series } from './request-series.ts';
