/**
 * @module @gatehouse/authn/storage/cached
 * authn's storage behind the @gatehouse/auth credential caches, for a process that is the only
 * writer of its database (all-in-one on SQLite, see libs/auth/README.md "Credential caches").
 */
import { createCachedActivityCheck, createCachedSessionStore, type CacheOptions, type CachedActivityCheck, type SessionStore } from '@gatehouse/auth';
import { createUserActivityCheck } from '../domain/user.ts';
import type { AuthnTx, UserRepository } from './ports.ts';

export interface CachedAuthnStorage {
  /** the user repository whose committed writes evict `activity` */
  users: UserRepository;
  /** the session store with its write-through cache */
  sessions: SessionStore & { clear(): void; size(): number };
  /** the authenticator's `users` hook (behaviour.md §2.1: revoked/deactivated users fail at once) */
  activity: CachedActivityCheck;
}

/**
 * Wraps authn's user repository and session store. Every user written through
 * `users.transaction` (create or update: revoke, deactivate, reactivate) has its cached activity
 * dropped once the transaction ends, before the caller's promise resolves; session writes evict
 * in `createCachedSessionStore`. Everything else passes through unchanged.
 * @param options cache bounds and the sessions' Unix-seconds clock
 */
export function createCachedAuthnStorage(
  storage: { users: UserRepository; sessions: SessionStore },
  options: CacheOptions & { clock?: () => number } = {},
): CachedAuthnStorage {
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
      }
    },
  };
  return { users, sessions: createCachedSessionStore(storage.sessions, options), activity };
}
