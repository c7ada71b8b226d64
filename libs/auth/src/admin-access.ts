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
import { timingSafeEqualString } from '@gatehouse/crypto';
import { claimAttempt, createMemoryAttemptLog, type AttemptLog } from './lockout.ts';

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
  /** admin-secret attempts keyed by client IP, claimed before each comparison */
  failures: AttemptLog;
  close(): Promise<void>;
  /** the Redis connection, for `/readyz` (absent: the in-process store) */
  readonly readiness?: DependencyCheck;
}

/**
 * The one admin-secret comparison (behaviour.md §5.1, §10; issue 30 §1, §3): every path that takes
 * the secret (admin login, the header on REST, GraphQL and gRPC) calls this. The attempt is claimed
 * for the client IP before the constant-time comparison, so concurrent wrong secrets let at most 10
 * comparisons through per 15 min; a right secret gives its claim back (only failures count).
 * @param failures the deployment's counter ({@link AdminAccessStore.failures}); absent: no lockout
 * @returns whether `presented` equals `expected` (never true for an empty `expected`)
 * @throws AppError `resource_exhausted` `too many failed attempts, please try again later` with
 *   `Retry-After` while the IP is locked, the right secret included
 */
export async function verifyAdminSecret(failures: AttemptLog | undefined, clientIp: string, presented: string, expected: string, now: number): Promise<boolean> {
  const claim = failures ? await claimAttempt(failures, clientIp, now, 'admin_secret_lockout', ADMIN_SECRET_MAX_FAILURES) : null;
  const ok = expected !== '' && timingSafeEqualString(presented, expected);
  if (ok && claim) await failures!.release(claim);
  return ok;
}

/** A new 256-bit opaque cookie handle (base64url). */
export const newAdminHandle = (): string => randomBytes(32).toString('base64url');

const live = (s: AdminSessionRecord | null | undefined, now: number): AdminSessionRecord | null =>
  s && s.idleExpiresAt > now && s.absoluteExpiresAt > now ? { ...s } : null;

/** In-process store: all-in-one without Redis (every service shares this one object). */
export function createMemoryAdminAccessStore(): AdminAccessStore {
  const sessions = new Map<string, AdminSessionRecord>();
  return {
    async createSession(s) { sessions.set(s.handleHash, { ...s }); },
    async getSession(hash, now) {
      const s = live(sessions.get(hash), now);
      if (!s) sessions.delete(hash);
      return s;
    },
    async updateSession(s) { if (sessions.has(s.handleHash)) sessions.set(s.handleHash, { ...s }); },
    async deleteSession(hash) { sessions.delete(hash); },
    failures: createMemoryAttemptLog(),
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
    failures: redisAttemptLog(redis, kFail, guard),
    async close() { redis.disconnect(); },
    readiness,
  };
}

/**
 * One Lua script per claim, so the prune, the count and the record are one atomic step on the Redis
 * server (EVAL runs scripts one at a time): KEYS[1] the sorted set of attempt times, ARGV now,
 * window start, allowance, window seconds and a unique member. Answers -1 when recorded, else the
 * time of the oldest attempt that still counts.
 */
const CLAIM_SCRIPT = `
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', '(' .. ARGV[2])
local n = redis.call('ZCARD', KEYS[1])
local max = tonumber(ARGV[3])
if n >= max then
  local oldest = redis.call('ZRANGE', KEYS[1], n - max, n - max, 'WITHSCORES')
  return tonumber(oldest[2])
end
redis.call('ZADD', KEYS[1], ARGV[1], ARGV[5])
redis.call('EXPIRE', KEYS[1], ARGV[4])
return -1`;

/**
 * {@link AttemptLog} on Redis sorted sets (one per key, expiring with its window), shared by every
 * process of the deployment; each claim is one {@link CLAIM_SCRIPT}.
 */
function redisAttemptLog(redis: ReturnType<typeof newRedis>, keyOf: (key: string) => string, guard: <T>(fn: () => Promise<T>) => Promise<T>): AttemptLog {
  return {
    claim: (key, now, max, windowSeconds) => guard(async () => {
      const token = `${now}:${randomBytes(6).toString('hex')}`;
      const r = Number(await redis.eval(CLAIM_SCRIPT, 1, keyOf(key), now, now - windowSeconds + 1, max, windowSeconds, token));
      return r < 0 ? { claimed: { key, at: now, token } } : { claimed: null, unlockAt: r + windowSeconds };
    }),
    release: (claim) => guard(async () => { await redis.zrem(keyOf(claim.key), claim.token); }),
    attemptsSince: (key, since) => guard(async () => (await redis.zrangebyscore(keyOf(key), since, '+inf', 'WITHSCORES'))
      .filter((_, i) => i % 2 === 1).map(Number)),
    clear: (key) => guard(async () => { await redis.del(keyOf(key)); }),
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
