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

/** Bytes of log lines gathered before a write to stdout (see {@link BatchedStdout}). */
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
  const logger = pino(json, (destination ?? new BatchedStdout()) as never);
  // children are created with Object.create(parent), so they see the mark too
  (logger as Marked)[JSON_LINES] = true;
  return logger;
}

/** What {@link BatchedStdout} needs of pino's stdout destination (a SonicBoom). */
interface SonicLike {
  write(data: string): boolean;
  flush(cb?: (err?: Error) => void): void;
  flushSync(): void;
  end(): void;
}

/** The {@link BatchedStdout}s of this process, handed to their destination before pino's own exit flush. */
const batched = new Set<BatchedStdout>();

/**
 * stdout for the json logger: lines are kept in a list and handed, joined, to pino's asynchronous
 * stdout destination once they reach {@link STDOUT_MIN_WRITE_BYTES} (counted in UTF-16 units, ≥ the
 * bytes of ASCII lines), every {@link STDOUT_FLUSH_MS} and when the process exits. pino's destination
 * gathers lines itself with `minLength`, but it measures the UTF-8 length of its whole pending string
 * on every line (a string built by `+=`, flattened each time): with one access line per request that
 * was the largest part of a line's cost (issue 38 §4, test/bench/README.md).
 */
class BatchedStdout {
  #pending: string[] = [];
  #units = 0;
  readonly #out: SonicLike;

  constructor() {
    if (batched.size === 0) {
      // before pino's own listeners (registered when its destination is made): they flush and end the
      // destination, and a line handed over afterwards would be lost
      process.prependListener('beforeExit', handAll);
      process.prependListener('exit', handAll);
    }
    batched.add(this);
    this.#out = pino.destination({ dest: 1, sync: false, minLength: 0 }) as unknown as SonicLike;
    setInterval(() => this.#hand(), STDOUT_FLUSH_MS).unref();
  }

  /** Queues one line (pino's whole record, newline included); writes when the batch is full. */
  write(line: string): boolean {
    this.#pending.push(line);
    this.#units += line.length;
    if (this.#units >= STDOUT_MIN_WRITE_BYTES) this.#hand();
    return true;
  }

  flush(cb?: (err?: Error) => void): void {
    this.#hand();
    this.#out.flush(cb);
  }

  flushSync(): void {
    this.#hand();
    this.#out.flushSync();
  }

  end(): void {
    this.#hand();
    batched.delete(this);
    this.#out.end();
  }

  /** Hands the queued lines to the destination, which writes them at once when no write is in flight. */
  #hand(): void {
    if (this.#pending.length === 0) return;
    const text = this.#pending.length === 1 ? this.#pending[0]! : this.#pending.join('');
    this.#pending = [];
    this.#units = 0;
    this.#out.write(text);
  }

  /** @internal the exit hook */
  static handAll(): void {
    for (const b of batched) b.#hand();
  }
}

const handAll = (): void => BatchedStdout.handAll();

/** Set on the loggers {@link createLogger} makes in `json` format: their lines are pino's plain JSON. */
const JSON_LINES = Symbol('gatehouse.jsonLines');
type Marked = Logger & { [JSON_LINES]?: true };
type PinoInternals = Logger & { [key: symbol]: unknown };
const { chindingsSym, streamSym, timeSym } = pino.symbols as unknown as Record<'chindingsSym' | 'streamSym' | 'timeSym', symbol>;

/**
 * A writer of pre-shaped `info` lines for a logger {@link createLogger} made in `json` format (or a
 * child of one), for a line written on every request whose fields are fixed (the gateway's access line,
 * issue 38 §4): it skips pino's generic path (the mixin, the per-key serializer and redaction pass).
 * The line is the one `logger.info(fields, msg)` would write, byte for byte:
 * `{"level":"info","time":"<ISO-8601>"<the child bindings><fields>,"msg":<msg>}` and a newline, on the
 * logger's own destination (so stdout's batching applies). The caller shapes `fields` itself: empty,
 * or `,"key":value` pairs of valid JSON (keys and string values escaped, e.g. with `JSON.stringify`);
 * nothing is redacted, so they must hold no secret. Trace ids are not added: the caller puts
 * `trace_id`/`span_id` in `fields` when it wants them.
 * @returns the writer, `(fields, msg) => void`, which writes only when `info` is enabled; `undefined`
 *   for any other logger (pretty format, a test double): the caller falls back to `logger.info`
 */
export function preshapedInfoWriter(logger: Pick<Logger, 'isLevelEnabled'>): ((fields: string, msg: string) => void) | undefined {
  if ((logger as Marked)[JSON_LINES] !== true) return undefined;
  const l = logger as PinoInternals;
  const stream = l[streamSym] as { write(s: string): unknown; [key: symbol]: unknown };
  // a multistream needs pino's per-line metadata; let pino write to it
  if (stream[Symbol.for('pino.metadata')] === true) return undefined;
  return (fields, msg) => {
    if (!l.isLevelEnabled('info')) return;
    stream.write(`{"level":"info"${(l[timeSym] as () => string)()}${l[chindingsSym] as string}${fields},"msg":${JSON.stringify(msg)}}\n`);
  };
}

/** One registry per process, passed down, so all-in-one never registers a metric twice. */
export function createMetricsRegistry(options: { defaultMetrics?: boolean } = {}): Registry {
  const registry = new Registry();
  if (options.defaultMetrics !== false) collectDefaultMetrics({ register: registry, prefix: 'gatehouse_' });
  return registry;
}

export { AggregatorRegistry, Registry, type PrometheusContentType } from 'prom-client';
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
