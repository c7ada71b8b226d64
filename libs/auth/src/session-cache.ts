/**
 * @module @gatehouse/auth/session-cache
 * Write-through in-process caches for the two reads behind every bearer/cookie credential check
 * (the session, behaviour.md §2.1, and the user's activity, §2.1/§3.5). Only correct where every
 * write to the underlying tables goes through this process's wrapped objects: see the README.
 */
import type { SessionRecord, SessionStore } from './session-store.ts';

/** Bounds of a cache. */
export interface CacheOptions {
  /** most entries kept (least recently used dropped first); default 10 000 */
  maxEntries?: number;
  /** an entry older than this is re-read, as defence in depth only; default 30 s */
  ttlMs?: number;
  /** monotonic milliseconds for the TTL; default `performance.now` */
  nowMs?: () => number;
  /**
   * A value that changes whenever someone else wrote the underlying database (SQLite
   * `PRAGMA data_version`, see `sqliteDataVersion` in @gatehouse/db); read before every cached
   * answer, and when it changed the whole cache is dropped. Guards a second process on the file.
   */
  externalVersion?: () => number;
}

/**
 * The generation of a cache, for a consumer that remembers something derived from its answers (the
 * authenticator's resolved bearer callers): it changes with every eviction and clear, and when the
 * external version moved, so an unchanged version means every answer read under it still holds.
 */
export interface CacheVersion {
  /** An integer; compare for equality only. Reading it first notices an outside write (see `externalVersion`). */
  version(): number;
}

/** Unix seconds, for session expiry (same clock as the wrapped store). */
export interface SessionCacheOptions extends CacheOptions {
  clock?: () => number;
}

const copy = (s: SessionRecord): SessionRecord => ({ ...s, roles: [...s.roles], scope: [...s.scope] });

/** A bounded LRU map with a TTL and an invalidation generation for in-flight fills. */
class Lru<V> {
  readonly #max: number;
  readonly #ttl: number;
  readonly #now: () => number;
  readonly #map = new Map<string, { v: V; at: number }>();
  /** bumped by every invalidation: a fill that started before it must not store its (maybe stale) read */
  gen = 0;
  readonly #external: (() => number) | undefined;
  #seen: number;
  constructor(o: CacheOptions) {
    this.#max = Math.max(1, o.maxEntries ?? 10_000);
    this.#ttl = o.ttlMs ?? 30_000;
    this.#now = o.nowMs ?? (() => performance.now());
    this.#external = o.externalVersion;
    this.#seen = this.#external ? this.#external() : 0;
  }
  /** False (and everything dropped) when the external version moved since the last call. */
  unchangedOutside(): boolean {
    if (!this.#external) return true;
    const v = this.#external();
    if (v === this.#seen) return true;
    this.#seen = v;
    this.gen++;
    this.#map.clear();
    return false;
  }
  /** The fresh value (marked most recently used), or undefined when absent or older than the TTL. */
  get(k: string): V | undefined {
    const e = this.#map.get(k);
    if (!e || this.#now() - e.at >= this.#ttl) return undefined;
    this.#map.delete(k);
    this.#map.set(k, e);
    return e.v;
  }
  /** Stores `v`; returns the least recently used value it pushed out, if any. */
  set(k: string, v: V): V | undefined {
    this.#map.delete(k);
    this.#map.set(k, { v, at: this.#now() });
    if (this.#map.size <= this.#max) return undefined;
    const [oldest, e] = this.#map.entries().next().value as [string, { v: V }];
    this.#map.delete(oldest);
    return e.v;
  }
  peek(k: string): V | undefined {
    return this.#map.get(k)?.v;
  }
  delete(k: string): void {
    this.#map.delete(k);
  }
  clear(): void {
    this.#map.clear();
  }
  get size(): number {
    return this.#map.size;
  }
}

/**
 * Wraps a SessionStore with a write-through cache of live sessions by id and by handle hash.
 * Only positive reads are cached. `delete`, `deleteAllForUser`, `deleteAllForClient` and `update` evict before their
 * promise resolves, so the next request after a logout/rotation/password change reads the store
 * (behaviour.md §2.1 "valid only while its session exists", §2.2). Reads that were in flight
 * during an eviction are not stored. Expired cached sessions read as absent, like the store.
 * @returns the wrapped store plus `clear()` and `size()` (cached sessions)
 */
export function createCachedSessionStore(inner: SessionStore, o: SessionCacheOptions = {}): SessionStore & CacheVersion & { clear(): void; size(): number } {
  const clock = o.clock ?? (() => Math.floor(Date.now() / 1000));
  const byId = new Lru<SessionRecord>(o);
  const idByHandle = new Map<string, string>();
  const idsByUser = new Map<string, Set<string>>();

  const unindex = (s: SessionRecord): void => {
    if (idByHandle.get(s.handleHash) === s.id) idByHandle.delete(s.handleHash);
    const ids = idsByUser.get(s.userId);
    ids?.delete(s.id);
    if (ids?.size === 0) idsByUser.delete(s.userId);
  };
  const evict = (id: string): void => {
    const s = byId.peek(id);
    byId.delete(id);
    if (s) unindex(s);
  };
  const put = (s: SessionRecord): void => {
    evict(s.id);
    const dropped = byId.set(s.id, copy(s));
    if (dropped) unindex(dropped);
    idByHandle.set(s.handleHash, s.id);
    let ids = idsByUser.get(s.userId);
    if (!ids) idsByUser.set(s.userId, (ids = new Set()));
    ids.add(s.id);
  };
  /** False, with every index dropped, when another process wrote the database since the last call. */
  const unchangedOutside = (): boolean => {
    if (byId.unchangedOutside()) return true;
    idByHandle.clear();
    idsByUser.clear();
    return false;
  };
  const hit = (id: string | undefined): SessionRecord | null => {
    if (!unchangedOutside()) return null;
    if (id === undefined) return null;
    const s = byId.get(id);
    if (!s || s.expiresAt <= clock()) {
      evict(id);
      return null;
    }
    return copy(s);
  };
  const fill = async (read: () => Promise<SessionRecord | null>): Promise<SessionRecord | null> => {
    const gen = byId.gen;
    const s = await read();
    if (s && gen === byId.gen) put(s);
    return s;
  };

  return {
    create: (s) => inner.create(s),
    async get(id) {
      return hit(id) ?? fill(() => inner.get(id));
    },
    async findByHandleHash(hash) {
      const cached = hit(idByHandle.get(hash));
      if (cached && cached.handleHash === hash) return cached;
      return fill(() => inner.findByHandleHash(hash));
    },
    async delete(id) {
      try {
        await inner.delete(id);
      } finally {
        byId.gen++;
        evict(id);
      }
    },
    async deleteAllForUser(userId, exceptId) {
      try {
        return await inner.deleteAllForUser(userId, exceptId);
      } finally {
        byId.gen++;
        for (const id of [...(idsByUser.get(userId) ?? [])]) if (id !== exceptId) evict(id);
      }
    },
    /** Rare (an admin deactivates or deletes a client): the whole cache is dropped. */
    async deleteAllForClient(clientId, userId) {
      try {
        return await inner.deleteAllForClient(clientId, userId);
      } finally {
        byId.gen++;
        byId.clear();
        idByHandle.clear();
        idsByUser.clear();
      }
    },
    async update(s) {
      try {
        await inner.update(s);
      } finally {
        byId.gen++;
        evict(s.id);
      }
    },
    // issue 33: read through (the list must show every session) and a last-use write that keeps the
    // cache: `lastUsedAt` decides nothing about a credential, so a cached copy may lag behind it
    listForUser: (userId) => inner.listForUser(userId),
    touch: (s, at) => inner.touch(s, at),
    clear() {
      byId.gen++;
      byId.clear();
      idByHandle.clear();
      idsByUser.clear();
    },
    size: () => byId.size,
    version() {
      unchangedOutside();
      return byId.gen;
    },
  };
}

/** The `users` hook of `createAuthenticator`, cached, with its eviction. */
export interface CachedActivityCheck extends CacheVersion {
  isActive(userId: string): Promise<boolean>;
  /** Drops the user's cached answer; call after every committed write that may change it. */
  invalidate(userId: string): void;
  clear(): void;
}

/**
 * Caches `isActive` per user (both answers). Correct only while `invalidate` is called after every
 * write that revokes, deactivates, reactivates or deletes a user (behaviour.md §2.1: such a user's
 * credentials fail at once); answers read while an invalidation happened are not stored.
 */
export function createCachedActivityCheck(inner: { isActive(userId: string): Promise<boolean> }, o: CacheOptions = {}): CachedActivityCheck {
  const cache = new Lru<boolean>(o);
  return {
    async isActive(userId) {
      const cached = cache.unchangedOutside() ? cache.get(userId) : undefined;
      if (cached !== undefined) return cached;
      const gen = cache.gen;
      const active = await inner.isActive(userId);
      if (gen === cache.gen) cache.set(userId, active);
      return active;
    },
    invalidate(userId) {
      cache.gen++;
      cache.delete(userId);
    },
    clear() {
      cache.gen++;
      cache.clear();
    },
    version() {
      cache.unchangedOutside();
      return cache.gen;
    },
  };
}
