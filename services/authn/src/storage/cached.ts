/**
 * @module @gatehouse/authn/storage/cached
 * authn's storage behind the @gatehouse/auth credential caches (libs/auth/README.md "Credential
 * caches"): evicted locally by this process's writes, and through `externalVersion` (the notification
 * channel, SQLite's data_version) by everyone else's; every write is published before it returns.
 */
import { createCachedActivityCheck, createCachedSessionStore, type CacheOptions, type CachedActivityCheck, type SessionStore } from '@gatehouse/auth';
import { createUserActivityCheck } from '../domain/user.ts';
import type { AuthnTx, UserRepository } from './ports.ts';

export interface CachedAuthnStorage {
  /** the user repository whose committed writes evict `activity` */
  users: UserRepository;
  /** the session store with its write-through cache (writes published before they resolve) */
  sessions: SessionStore & { version(): number; clear(): void; size(): number };
  /** the authenticator's `users` hook (behaviour.md §2.1: revoked/deactivated users fail at once) */
  activity: CachedActivityCheck;
}

/**
 * Wraps authn's user repository and session store. Every user written through
 * `users.transaction` (create or update: revoke, deactivate, reactivate) has its cached activity
 * dropped once the transaction ends, before the caller's promise resolves; session writes evict
 * in `createCachedSessionStore`. Everything else passes through unchanged.
 * With `publish`, every session delete/update and every user transaction that wrote a user also
 * awaits `publish()` (after the commit, before the caller's promise resolves), so other processes'
 * caches drop their answers before the write's response is sent (issue 22 §1).
 * @param options cache bounds, the sessions' Unix-seconds clock, the outside-write version and `publish`
 */
export function createCachedAuthnStorage(
  storage: { users: UserRepository; sessions: SessionStore },
  options: CacheOptions & { clock?: () => number; publish?: () => Promise<void> } = {},
): CachedAuthnStorage {
  const publish = options.publish ?? (async () => undefined);
  const activity = createCachedActivityCheck(createUserActivityCheck(storage.users), options);
  const inner = storage.users;
  const users: UserRepository = {
    findById: (id) => inner.findById(id),
    findByEmail: (email) => inner.findByEmail(email),
    findByPhone: (phone) => inner.findByPhone(phone),
    search: (query, page) => inner.search(query, page),
    listVerificationRequests: (page) => inner.listVerificationRequests(page),
    async transaction<T>(fn: (tx: AuthnTx) => Promise<T>): Promise<T> {
      const written = new Set<string>();
      try {
        return await inner.transaction((tx) => fn({
          ...tx,
          users: {
            ...tx.users,
            findById: (id) => tx.users.findById(id),
            findByEmail: (email) => tx.users.findByEmail(email),
            findByPhone: (phone) => tx.users.findByPhone(phone),
            lockIdentifier: (kind, value) => tx.users.lockIdentifier(kind, value),
            async create(u) {
              written.add(u.id);
              await tx.users.create(u);
            },
            async update(u) {
              written.add(u.id);
              await tx.users.update(u);
            },
            async delete(id) {
              written.add(id);
              await tx.users.delete(id);
            },
          },
        }));
      } finally {
        // after commit (or rollback): a read that raced the write is not stored either (generation)
        for (const id of written) activity.invalidate(id);
        if (written.size > 0) await publish();
      }
    },
  };
  const cached = createCachedSessionStore(storage.sessions, options);
  /** runs a write, then publishes it, whether or not it threw (a failed write may have half-happened) */
  const published = async <T>(write: () => Promise<T>): Promise<T> => {
    try {
      return await write();
    } finally {
      await publish();
    }
  };
  const sessions: CachedAuthnStorage['sessions'] = {
    create: (s) => cached.create(s),
    get: (id) => cached.get(id),
    findByHandleHash: (hash) => cached.findByHandleHash(hash),
    delete: (id) => published(() => cached.delete(id)),
    deleteAllForUser: (userId, exceptId) => published(() => cached.deleteAllForUser(userId, exceptId)),
    deleteAllForClient: (clientId, userId) => published(() => cached.deleteAllForClient(clientId, userId)),
    update: (s) => published(() => cached.update(s)),
    // issue 33: no publish: a last-use time invalidates no cached credential
    listForUser: (userId) => cached.listForUser(userId),
    touch: (s, at) => cached.touch(s, at),
    // the authenticator reads it to remember resolved bearer callers
    version: () => cached.version(),
    clear: () => cached.clear(),
    size: () => cached.size(),
  };
  return { users, sessions, activity };
}
