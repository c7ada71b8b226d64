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
  /**
   * false: `/readyz` lists its state but stays 200 while it is down (a dependency only some requests
   * need, such as a service behind the gateway other than authn). Default true: it down is 503.
   */
  readonly required?: boolean;
  /**
   * true when its client already logs `<name> is down` / `is back up` itself (watchRedis, the NATS
   * bus), so {@link watchDependency} leaves it as it is.
   */
  readonly logsOwnState?: boolean;
}

/** What `/readyz` answers: every dependency's result, `ok` or the cause (one entry per name). */
export interface ReadinessReport {
  /** every required check answered (a check with `required: false` never makes this false) */
  ready: boolean;
  /** check name → `ok`, or `down (<target>): <cause>`, for every check, required or not */
  checks: Record<string, string>;
  /** the first required check that failed, for the message */
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
    if (cause !== null && report.down === null && c.required !== false) report.down = { name: c.name, target: c.target, cause };
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
  return { name: 'redis', target, check: async () => { await redis.ping(); }, logsOwnState: true };
}

/** Probes in a row that must fail before {@link watchDependency} logs `<name> is down`. */
export const FAILURES_BEFORE_DOWN = 2;

/** A check whose outages are logged: see {@link watchDependency}. */
export interface WatchedDependency extends DependencyCheck {
  /** stops the background probe */
  close(): void;
}

/**
 * Logs one `<name> is down` line (warn) when `dep` starts failing and one `<name> is back up` line
 * (info) when it answers again (issue 37 §4, README "Operations"), for dependencies whose client does
 * not say so itself (a database pool, a gateway's gRPC channel to a service). Its state follows every
 * `/readyz` probe of the returned check and a background probe every `intervalMs` (a timer that does not
 * keep the process alive), so an outage is logged even when nothing probes readiness. It is down once
 * {@link FAILURES_BEFORE_DOWN} probes in a row failed: one slow answer on a loaded machine (a probe
 * timing out, a channel still connecting at start-up) is not an outage; `/readyz` reports every probe
 * as it is.
 * @param intervalMs milliseconds between background probes (a probe never overlaps the previous one)
 * @param timeoutMs a probe that has not answered by then counts as a failure
 * @returns the check to hand to `/readyz` (same name, target and `required`); `dep` itself when it
 *   `logsOwnState`
 */
export function watchDependency(dep: DependencyCheck, logger: StateLogger, intervalMs = 2000, timeoutMs = 2000): WatchedDependency {
  if (dep.logsOwnState) return { ...dep, close: () => undefined };
  const state = dependencyState(logger, dep.name, dep.target);
  let failures = 0;
  const probe = async (): Promise<void> => {
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([
        dep.check(),
        new Promise<never>((_, reject) => { timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs); }),
      ]);
    } catch (err) {
      failures += 1;
      if (failures >= FAILURES_BEFORE_DOWN) state.down(err);
      throw err;
    } finally {
      clearTimeout(timer);
    }
    failures = 0;
    state.up();
  };
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  const loop = (): void => {
    timer = setTimeout(() => { probe().catch(() => undefined).finally(() => { if (!stopped) loop(); }); }, intervalMs);
    timer.unref();
  };
  loop();
  return {
    ...dep,
    logsOwnState: true,
    check: probe,
    close() {
      stopped = true;
      clearTimeout(timer);
    },
  };
}

/**
 * {@link watchDependency} over a process's dependencies: checks of one `name` and `target` (all-in-one
 * opens one database pool per service) are watched as one, so an outage is one line, not one per pool;
 * checks that `logsOwnState` are passed through.
 * @returns the checks for `/readyz`, in the order given (a group where its first member was)
 */
export function watchDependencies(deps: readonly DependencyCheck[], logger: StateLogger, intervalMs = 2000): WatchedDependency[] {
  const groups = new Map<string, DependencyCheck[]>();
  const order: Array<DependencyCheck | string> = [];
  for (const dep of deps) {
    if (dep.logsOwnState) { order.push(dep); continue; }
    const key = `${dep.name}\u0000${dep.target}`;
    const group = groups.get(key);
    if (group) group.push(dep);
    else { groups.set(key, [dep]); order.push(key); }
  }
  return order.map((entry) => {
    if (typeof entry !== 'string') return watchDependency(entry, logger, intervalMs);
    const group = groups.get(entry)!;
    const first = group[0]!;
    return watchDependency(group.length === 1 ? first : { ...first, check: async () => { await Promise.all(group.map((d) => d.check())); } }, logger, intervalMs);
  });
}
