/**
 * @module @gatehouse/observability/dependency
 * Readiness and outage logging for the dependencies a process talks to (issue 15: "/readyz reports
 * each dependency this process uses ... and answers 503 naming the one that is down"; "client errors
 * of ioredis, NATS and the database become one structured log line per state change, never
 * stack-trace floods"). `/healthz` stays liveness and never looks at dependencies.
 */
import { createRequire } from 'node:module';
import type * as IORedis from 'ioredis';
import type { Redis, RedisOptions } from 'ioredis';

const requireModule = createRequire(import.meta.url);

/** Where state lines go: a pino logger, or anything with its `info`/`warn` (object, message) form. */
export interface StateLogger {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
}

/** One dependency of a process, as `/readyz` reports it. */
export interface DependencyCheck {
  /** what it is: `database`, `redis`, `nats`, `service:authn`, ... */
  readonly name: string;
  /** where it is, without credentials: `127.0.0.1:6379` */
  readonly target: string;
  /**
   * Resolves when the dependency answers now.
   * @throws Error whose message is the cause (`connect ECONNREFUSED 127.0.0.1:6379`)
   */
  check(): Promise<void>;
}

/** What `/readyz` answers: every dependency's result, `ok` or the cause (one entry per name). */
export interface ReadinessReport {
  ready: boolean;
  /** check name → `ok`, or `down (<target>): <cause>` */
  checks: Record<string, string>;
  /** the first check that failed, for the message */
  down: { name: string; target: string; cause: string } | null;
}

const causeOf = (err: unknown): string => {
  if (err instanceof AggregateError && err.errors.length > 0) return causeOf(err.errors[0]);
  if (err instanceof Error) return err.message || err.name;
  return String(err);
};

/**
 * Runs every check at once, each bounded by `timeoutMs`.
 * @param timeoutMs a check that has not answered by then counts as down (`no answer within <n> ms`)
 */
export async function readinessReport(checks: readonly DependencyCheck[], timeoutMs = 2000): Promise<ReadinessReport> {
  const results = await Promise.all(checks.map(async (c) => {
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([
        c.check(),
        new Promise<never>((_, reject) => { timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs); }),
      ]);
      return { c, cause: null };
    } catch (err) {
      return { c, cause: causeOf(err) };
    } finally {
      clearTimeout(timer);
    }
  }));
  const report: ReadinessReport = { ready: true, checks: {}, down: null };
  for (const { c, cause } of results) {
    // several connections to one dependency (all-in-one: one pool per service) are one entry,
    // `ok` only while every one of them is
    if (cause === null) report.checks[c.name] ??= 'ok';
    else if (report.checks[c.name] === undefined || report.checks[c.name] === 'ok') report.checks[c.name] = `down (${c.target}): ${cause}`;
    if (cause !== null && report.down === null) report.down = { name: c.name, target: c.target, cause };
  }
  report.ready = report.down === null;
  return report;
}

/** Records a dependency's state; logs only when it changes. */
export interface DependencyState {
  /** it answered: logs `<name> is back up` at info if it was down */
  up(): void;
  /** it failed: logs `<name> is down` at warn (with the cause, no stack) if it was up */
  down(cause: unknown): void;
  /** whether the last event was a failure */
  readonly isDown: boolean;
}

/** One structured log line per state change of dependency `name` at `target`. */
export function dependencyState(logger: StateLogger, name: string, target: string): DependencyState {
  let down = false;
  return {
    up() {
      if (!down) return;
      down = false;
      logger.info({ dependency: name, target }, `${name} is back up`);
    },
    down(cause) {
      if (down) return;
      down = true;
      logger.warn({ dependency: name, target, cause: causeOf(cause) }, `${name} is down`);
    },
    get isDown() { return down; },
  };
}

/**
 * A new ioredis client for `url` (ioredis's `new Redis(url, options)`). ioredis (≈ 2 MiB of heap) is
 * loaded by the first client, not by importing this module: a deployment without `--redis-url`
 * never loads it (issue 22 §3). ioredis is CommonJS, so the load is synchronous.
 */
export function newRedis(url: string, options: RedisOptions): Redis {
  const { Redis: Client } = requireModule('ioredis') as typeof IORedis;
  return new Client(url, options);
}

/** The part of an ioredis client this module uses. */
export interface RedisLike {
  on(event: 'error', listener: (err: unknown) => void): unknown;
  on(event: 'ready', listener: () => void): unknown;
  ping(): Promise<unknown>;
}

/** `redis://user:pw@host:6379/0` → `host:6379` (never the credentials). */
export function redisTarget(url: string): string {
  try {
    const u = new URL(url);
    return `${u.hostname}:${u.port || '6379'}`;
  } catch {
    return 'redis';
  }
}

/**
 * Watches an ioredis client: its `error` events (emitted on every failed reconnect) become one
 * `redis is down` line, its next `ready` one `redis is back up`; having a listener also keeps
 * ioredis from printing `[ioredis] Unhandled error event` stacks. Returns the client's readiness check
 * (a PING).
 */
export function watchRedis(redis: RedisLike, logger: StateLogger, url: string): DependencyCheck {
  const target = redisTarget(url);
  const state = dependencyState(logger, 'redis', target);
  redis.on('error', (err) => state.down(err));
  redis.on('ready', () => state.up());
  return { name: 'redis', target, check: async () => { await redis.ping(); } };
}
