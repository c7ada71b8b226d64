/**
 * @module @gatehouse/auth/admin-access
 * The super-admin's server-side state every service reads (behaviour.md §5.1, §10): admin sessions
 * (an opaque handle in the `service-admin` cookie; idle 3600 s within an absolute 8 h) and the
 * admin-secret failure counters per client IP (10 failures in a sliding 15 min lock that IP). The
 * admin service writes sessions; every service's authenticator reads them and counts header failures,
 * so the store is shared: Redis when `--redis-url` is set (split mode), else one store per process
 * (all-in-one runs every service in one process).
 */
import { randomBytes } from 'node:crypto';
import { AppError } from '@gatehouse/errors';
import { newRedis, watchRedis, type DependencyCheck } from '@gatehouse/observability';
import type { FailureLog } from './lockout.ts';

/** behaviour.md §2.1: an admin session lapses after this many idle seconds. */
export const ADMIN_SESSION_IDLE_SECONDS = 3600;
/** behaviour.md §2.1: and in any case this many seconds after login. */
export const ADMIN_SESSION_ABSOLUTE_SECONDS = 8 * 3600;
/** behaviour.md §10: admin-secret failures per client IP that lock it. */
export const ADMIN_SECRET_MAX_FAILURES = 10;

/** One admin session. Times are Unix seconds. */
export interface AdminSessionRecord {
  /** sha256 hex of the cookie handle; the handle itself is never stored */
  handleHash: string;
  createdAt: number;
  idleExpiresAt: number;
  absoluteExpiresAt: number;
}

/** Admin sessions and the admin-secret failure log, shared by every service of a deployment. */
export interface AdminAccessStore {
  createSession(s: AdminSessionRecord): Promise<void>;
  /** the live session (idle and absolute expiry both in the future), or null */
  getSession(handleHash: string, now: number): Promise<AdminSessionRecord | null>;
  /** replaces a live session's record (same handle hash) */
  updateSession(s: AdminSessionRecord, now: number): Promise<void>;
  deleteSession(handleHash: string): Promise<void>;
  /** admin-secret failures keyed by client IP */
  failures: FailureLog;
  close(): Promise<void>;
  /** the Redis connection, for `/readyz` (absent: the in-process store) */
  readonly readiness?: DependencyCheck;
}

/** A new 256-bit opaque cookie handle (base64url). */
export const newAdminHandle = (): string => randomBytes(32).toString('base64url');

const live = (s: AdminSessionRecord | null | undefined, now: number): AdminSessionRecord | null =>
  s && s.idleExpiresAt > now && s.absoluteExpiresAt > now ? { ...s } : null;

/** In-process store: all-in-one without Redis (every service shares this one object). */
export function createMemoryAdminAccessStore(): AdminAccessStore {
  const sessions = new Map<string, AdminSessionRecord>();
  const failures = new Map<string, number[]>();
  return {
    async createSession(s) { sessions.set(s.handleHash, { ...s }); },
    async getSession(hash, now) {
      const s = live(sessions.get(hash), now);
      if (!s) sessions.delete(hash);
      return s;
    },
    async updateSession(s) { if (sessions.has(s.handleHash)) sessions.set(s.handleHash, { ...s }); },
    async deleteSession(hash) { sessions.delete(hash); },
    failures: {
      async recordFailure(key, at, pruneBefore) {
        const list = (failures.get(key) ?? []).filter((t) => pruneBefore === undefined || t >= pruneBefore);
        list.push(at);
        failures.set(key, list);
      },
      async failuresSince(key, since) { return (failures.get(key) ?? []).filter((t) => t >= since).sort((a, b) => a - b); },
      async clear(key) { failures.delete(key); },
    },
    async close() {},
  };
}

/**
 * Redis store (`--redis-url`), shared by every process. Keys: `<p>admin_session:<sha256>` (JSON,
 * expiring with the session) and `<p>admin_secret_failures:<ip>` (a sorted set of failure times,
 * expiring with the window).
 * @throws (each method) AppError `unavailable` when Redis cannot be reached
 */
export function createRedisAdminAccessStore(options: { url: string; keyPrefix: string; windowSeconds: number }): AdminAccessStore {
  const redis = newRedis(options.url, { lazyConnect: false, maxRetriesPerRequest: 2 });
  // an error listener keeps ioredis from printing a stack per failed reconnect; the outage itself is
  // logged once by the process's session store, which uses the same Redis
  const readiness = watchRedis(redis, { info: () => undefined, warn: () => undefined }, options.url);
  const p = options.keyPrefix;
  const kSession = (h: string) => `${p}admin_session:${h}`;
  const kFail = (ip: string) => `${p}admin_secret_failures:${ip}`;
  const guard = async <T>(fn: () => Promise<T>): Promise<T> => {
    try {
      return await fn();
    } catch (err) {
      throw new AppError('unavailable', 'session store unavailable', { cause: err, reason: 'redis_admin_access' });
    }
  };
  const write = async (s: AdminSessionRecord, now: number): Promise<void> => {
    const ttl = Math.min(s.idleExpiresAt, s.absoluteExpiresAt) - now;
    if (ttl > 0) await redis.set(kSession(s.handleHash), JSON.stringify(s), 'EX', ttl);
  };
  return {
    createSession: (s) => guard(() => write(s, s.createdAt)),
    getSession: (hash, now) => guard(async () => {
      const raw = await redis.get(kSession(hash));
      return raw ? live(JSON.parse(raw) as AdminSessionRecord, now) : null;
    }),
    updateSession: (s, now) => guard(async () => {
      if ((await redis.exists(kSession(s.handleHash))) === 1) await write(s, now);
    }),
    deleteSession: (hash) => guard(async () => { await redis.del(kSession(hash)); }),
    failures: {
      recordFailure: (key, at, pruneBefore) => guard(async () => {
        const m = redis.multi().zadd(kFail(key), at, `${at}:${randomBytes(6).toString('hex')}`);
        if (pruneBefore !== undefined) m.zremrangebyscore(kFail(key), '-inf', `(${pruneBefore}`);
        await m.expire(kFail(key), options.windowSeconds).exec();
      }),
      failuresSince: (key, since) => guard(async () => (await redis.zrangebyscore(kFail(key), since, '+inf', 'WITHSCORES'))
        .filter((_, i) => i % 2 === 1).map(Number)),
      clear: (key) => guard(async () => { await redis.del(kFail(key)); }),
    },
    async close() { redis.disconnect(); },
    readiness,
  };
}

const shared = new Map<string, AdminAccessStore>();

/**
 * The deployment's admin store for this process: one Redis store per `--redis-url` and `--client-id`,
 * else the one in-process store. Every caller in the process gets the same object (all-in-one: the
 * admin service that writes sessions and the authenticators that read them). Redis keys carry the
 * client id, so deployments sharing one Redis never share lockout counters (a client IP locked in one
 * is not locked in another).
 */
export function adminAccessStoreFor(config: { redisUrl?: string | undefined; clientId: string }): AdminAccessStore {
  const key = config.redisUrl ? `${config.redisUrl}\n${config.clientId}` : '';
  let store = shared.get(key);
  if (!store) {
    store = config.redisUrl
      ? createRedisAdminAccessStore({ url: config.redisUrl, keyPrefix: `gatehouse:${config.clientId}:`, windowSeconds: 15 * 60 })
      : createMemoryAdminAccessStore();
    shared.set(key, store);
  }
  return store;
}
