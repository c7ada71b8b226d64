/**
 * @module @gatehouse/authn/storage/memory
 * In-memory storage for unit tests; passes ports.suite.ts. Transactions are serialised and roll
 * back by restoring a snapshot; events reach `published` only after commit.
 */
import { createMemoryAttemptLog } from '@gatehouse/auth';
import type { AuthnTx, IdentityLinkRecord, IdentityLinkStore, LoginLockout, Page, PageRequest, UserRecord, UserRepository, VerificationRequestRecord, VerificationStore } from './ports.ts';

export interface PublishedEvent {
  name: string;
  data: unknown;
}

const clone = <T>(v: T): T => structuredClone(v);

export interface MemoryAuthnStorage {
  users: UserRepository;
  lockout: LoginLockout;
  /** committed events in commit order */
  published: PublishedEvent[];
  /** committed verification requests (copies), in creation order */
  verificationRequests(): VerificationRequestRecord[];
  /** committed identity links (copies), in creation order */
  identityLinks(): IdentityLinkRecord[];
}

export function createMemoryAuthnStorage(): MemoryAuthnStorage {
  let users = new Map<string, UserRecord>();
  let verifications = new Map<string, VerificationRequestRecord>();
  let identities = new Map<string, IdentityLinkRecord>();
  const published: PublishedEvent[] = [];
  let queue: Promise<unknown> = Promise.resolve();

  const find = (pred: (u: UserRecord) => boolean): UserRecord | null => {
    for (const u of users.values()) if (pred(u)) return clone(u);
    return null;
  };
  const reader = {
    async findById(id: string) {
      const u = users.get(id);
      return u ? clone(u) : null;
    },
    async findByEmail(email: string) {
      return find((u) => u.email === email);
    },
    async findByPhone(phone: string) {
      return find((u) => u.phoneNumber === phone);
    },
  };

  const repo: UserRepository = {
    ...reader,
    transaction<T>(fn: (tx: AuthnTx) => Promise<T>): Promise<T> {
      const run = async (): Promise<T> => {
        const snapshot = new Map([...users].map(([k, v]) => [k, clone(v)]));
        const vSnapshot = new Map([...verifications].map(([k, v]) => [k, clone(v)]));
        const iSnapshot = new Map([...identities].map(([k, v]) => [k, clone(v)]));
        const pending: PublishedEvent[] = [];
        const tx: AuthnTx = {
          users: {
            ...reader,
            // transactions are already serialised by `queue`
            async lockIdentifier() {},
            async create(u) {
              if (users.has(u.id)) throw new Error(`duplicate user id ${u.id}`);
              users.set(u.id, clone(u));
            },
            async update(u) {
              if (!users.has(u.id)) throw new Error(`unknown user id ${u.id}`);
              users.set(u.id, clone(u));
            },
            async delete(id) {
              users.delete(id);
            },
          },
          verifications: verificationStore(),
          identities: identityStore(),
          events: { emit: (name, data) => void pending.push({ name, data: clone(data) }) },
        };
        try {
          const out = await fn(tx);
          published.push(...pending);
          return out;
        } catch (err) {
          users = snapshot;
          verifications = vSnapshot;
          identities = iSnapshot;
          throw err;
        }
      };
      const result = queue.then(run, run);
      queue = result.catch(() => undefined);
      return result;
    },
    async search(query, page) {
      const q = query ? query.toLowerCase() : null;
      const hit = (u: UserRecord): boolean => q === null
        || [u.id, u.email, u.givenName, u.familyName, u.nickname].some((v) => v !== null && v.toLowerCase().includes(q));
      return pageOf([...users.values()].filter(hit), page);
    },
    async listVerificationRequests(page) {
      return pageOf([...verifications.values()], page);
    },
  };

  /** created_at desc, then id (behaviour.md §10), sliced to the page; copies. */
  function pageOf<T extends { id: string; createdAt: number }>(all: T[], page: PageRequest): Page<T> {
    const sorted = all.sort((a, b) => b.createdAt - a.createdAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    return { rows: sorted.slice(page.offset, page.offset + page.limit).map(clone), total: sorted.length };
  }

  function verificationStore(): VerificationStore {
    return {
      async issue(r) {
        if (verifications.has(r.id)) throw new Error(`duplicate verification request id ${r.id}`);
        for (const v of verifications.values()) {
          if (v.email === r.email && v.identifier === r.identifier && v.consumedAt === null) {
            v.consumedAt = r.createdAt;
            v.updatedAt = r.createdAt;
          }
        }
        verifications.set(r.id, clone(r));
      },
      async findByTokenHash(hash) {
        for (const v of verifications.values()) if (v.tokenHash === hash) return clone(v);
        return null;
      },
      async findPending(email, identifier) {
        let found: VerificationRequestRecord | null = null;
        for (const v of verifications.values()) {
          if (v.email === email && v.identifier === identifier && v.consumedAt === null && (!found || v.createdAt >= found.createdAt)) found = v;
        }
        return found ? clone(found) : null;
      },
      async lastIssuedAt(email, identifier) {
        let at: number | null = null;
        for (const v of verifications.values()) {
          if (v.email === email && v.identifier === identifier && (at === null || v.createdAt > at)) at = v.createdAt;
        }
        return at;
      },
      async consume(id, at) {
        const v = verifications.get(id);
        if (!v || v.consumedAt !== null) return false;
        v.consumedAt = at;
        v.updatedAt = at;
        return true;
      },
      async deleteForUser(userId, emails) {
        let n = 0;
        for (const [id, v] of [...verifications]) {
          if (v.userId === userId || emails.includes(v.email)) {
            verifications.delete(id);
            n++;
          }
        }
        return n;
      },
    };
  }

  function identityStore(): IdentityLinkStore {
    return {
      async find(issuer, subject) {
        for (const l of identities.values()) if (l.issuer === issuer && l.subject === subject) return clone(l);
        return null;
      },
      async link(r) {
        for (const l of identities.values()) {
          if (l.issuer === r.issuer && l.subject === r.subject) throw new Error(`duplicate identity link ${r.issuer} ${r.subject}`);
        }
        identities.set(r.id, clone(r));
      },
      async unlink(id) {
        identities.delete(id);
      },
      async deleteForUser(userId) {
        let n = 0;
        for (const [id, l] of [...identities]) {
          if (l.userId === userId) {
            identities.delete(id);
            n++;
          }
        }
        return n;
      },
    };
  }

  const lockout: LoginLockout = createMemoryAttemptLog();

  return { users: repo, lockout, published, verificationRequests: () => [...verifications.values()].map(clone), identityLinks: () => [...identities.values()].map(clone) };
}
