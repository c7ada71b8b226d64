/**
 * @module @gatehouse/auth/redis-session-store
 * SessionStore on Redis (`--redis-url`). Keys expire with the session (EXPIREAT); a per-user set
 * indexes the user's sessions so deleteAllForUser costs O(sessions of that user).
 */
import { AppError } from '@gatehouse/errors';
import { newRedis, watchRedis, type DependencyCheck, type StateLogger } from '@gatehouse/observability';
import type { SessionRecord, SessionStore } from './session-store.ts';

export interface RedisSessionStoreOptions {
  url: string;
  /** prefix of every key, for example `gatehouse:` */
  keyPrefix: string;
  /** Unix seconds (tests) */
  clock?: () => number;
  /** where `redis is down` / `redis is back up` go (one line per state change); default: silent */
  logger?: StateLogger;
}

/** A SessionStore on Redis, with its connection's readiness check (`/readyz`). */
export type RedisSessionStore = SessionStore & { close(): Promise<void>; readonly readiness: DependencyCheck };

const SILENT = { info: () => undefined, warn: () => undefined };

/**
 * Keys: `<p>session:<id>` (JSON record), `<p>session_handle:<sha256>` (id), `<p>user_sessions:<userId>`
 * (set of ids; its expiry is pushed to the latest session's), and for a session issued to an OAuth
 * client, `<p>client_sessions:<clientId>` (set of ids, same expiry rule) for deleteAllForClient.
 * issue 33: `<p>session_used:<id>` holds the last-use time (Unix s, expiring with the session), apart
 * from the record so a `touch` never races a rotation's rewrite of it nor brings a deleted one back.
 */
export function createRedisSessionStore(options: RedisSessionStoreOptions): RedisSessionStore {
  const redis = newRedis(options.url, { lazyConnect: false, maxRetriesPerRequest: 2 });
  const readiness = watchRedis(redis, options.logger ?? SILENT, options.url);
  const clock = options.clock ?? (() => Math.floor(Date.now() / 1000));
  const p = options.keyPrefix;
  const kSession = (id: string) => `${p}session:${id}`;
  const kHandle = (h: string) => `${p}session_handle:${h}`;
  const kUser = (u: string) => `${p}user_sessions:${u}`;
  const kClient = (c: string) => `${p}client_sessions:${c}`;
  const kUsed = (id: string) => `${p}session_used:${id}`;

  const parse = (raw: string | null): SessionRecord | null => {
    if (!raw) return null;
    const s = JSON.parse(raw) as SessionRecord;
    return s.expiresAt > clock() ? s : null;
  };

  const write = async (s: SessionRecord): Promise<void> => {
    const ttl = s.expiresAt - clock();
    if (ttl <= 0) return;
    const userKey = kUser(s.userId);
    const userTtl = await redis.ttl(userKey);
    const m = redis.multi()
      .set(kSession(s.id), JSON.stringify(s), 'EX', ttl)
      .set(kHandle(s.handleHash), s.id, 'EX', ttl)
      .sadd(userKey, s.id);
    if (userTtl < ttl) m.expire(userKey, ttl);
    if (s.clientId) {
      const clientKey = kClient(s.clientId);
      m.sadd(clientKey, s.id);
      if ((await redis.ttl(clientKey)) < ttl) m.expire(clientKey, ttl);
    }
    await m.exec();
  };

  const remove = async (s: SessionRecord): Promise<void> => {
    const m = redis.multi().del(kSession(s.id), kHandle(s.handleHash), kUsed(s.id)).srem(kUser(s.userId), s.id);
    if (s.clientId) m.srem(kClient(s.clientId), s.id);
    await m.exec();
  };

  const store: RedisSessionStore = {
    readiness,
    create: write,
    async get(id) {
      return parse(await redis.get(kSession(id)));
    },
    async findByHandleHash(hash) {
      const id = await redis.get(kHandle(hash));
      if (!id) return null;
      const s = parse(await redis.get(kSession(id)));
      return s && s.handleHash === hash ? s : null;
    },
    async delete(id) {
      const raw = await redis.get(kSession(id));
      if (!raw) return;
      await remove(JSON.parse(raw) as SessionRecord);
    },
    async deleteAllForUser(userId, exceptId) {
      const ids = await redis.smembers(kUser(userId));
      let n = 0;
      for (const id of ids) {
        if (id === exceptId) continue;
        const raw = await redis.get(kSession(id));
        if (raw) {
          await remove(JSON.parse(raw) as SessionRecord);
          n++;
        } else {
          await redis.srem(kUser(userId), id);
        }
      }
      return n;
    },
    async deleteAllForClient(clientId, userId) {
      let n = 0;
      for (const id of await redis.smembers(kClient(clientId))) {
        const raw = await redis.get(kSession(id));
        const s = raw ? JSON.parse(raw) as SessionRecord : null;
        if (s && userId !== undefined && s.userId !== userId) continue;
        if (s) {
          await remove(s);
          n++;
        }
        if (userId !== undefined) await redis.srem(kClient(clientId), id);
      }
      if (userId === undefined) await redis.del(kClient(clientId));
      return n;
    },
    async update(s) {
      const raw = await redis.get(kSession(s.id));
      if (!raw) return;
      const old = JSON.parse(raw) as SessionRecord;
      if (old.handleHash !== s.handleHash) await redis.del(kHandle(old.handleHash));
      await write(s);
    },
    async listForUser(userId) {
      const ids = await redis.smembers(kUser(userId));
      if (ids.length === 0) return [];
      const [records, used] = await Promise.all([redis.mget(ids.map(kSession)), redis.mget(ids.map(kUsed))]);
      const out: SessionRecord[] = [];
      records.forEach((raw, i) => {
        const s = parse(raw);
        if (s && s.userId === userId) out.push(used[i] ? { ...s, lastUsedAt: Number(used[i]) } : s);
      });
      return out;
    },
    async touch(s, at) {
      const ttl = s.expiresAt - clock();
      if (ttl > 0) await redis.set(kUsed(s.id), String(at), 'EX', ttl);
    },
    async close() {
      await redis.quit();
    },
  };
  // Redis failures become 503 `unavailable` (behaviour.md §0.2), never a raw driver error.
  for (const name of ['create', 'get', 'findByHandleHash', 'delete', 'deleteAllForUser', 'deleteAllForClient', 'update', 'listForUser', 'touch'] as const) {
    const fn = store[name] as (...args: unknown[]) => Promise<unknown>;
    (store as unknown as Record<string, unknown>)[name] = async (...args: unknown[]) => {
      try {
        return await fn(...args);
      } catch (err) {
        if (err instanceof AppError) throw err;
        throw new AppError('unavailable', 'session store unavailable', { cause: err, reason: 'redis_error' });
      }
    };
  }
  return store;
}
