/**
 * @module @gatehouse/authn/storage/mikro/users
 * UserRepository on MikroORM: reads on a fresh fork, writes and outbox rows in one
 * `db.transactional` (ARCHITECTURE §4). On MongoDB every unit of work claims the emails and phone
 * numbers it stores (`claims.ts`): the database has no unique index on them (the contract keeps
 * uniqueness in the application) and no lock to serialise two signups of one address.
 */
import { DeadlockException, LockWaitTimeoutException, type EntityManager } from '@mikro-orm/core';
import { selectColumns, type Database } from '@gatehouse/db';
import { newEnvelope } from '@gatehouse/bus';
import { AppError } from '@gatehouse/errors';
import type { AuthnTx, UserReader, UserRecord, UserRepository } from '../ports.ts';
import { ConsentGrantEntity, UserEntity } from './entities.ts';
import { createMikroIdentityLinkStore } from './identities.ts';
import { createMikroVerificationStore } from './verifications.ts';
import { listVerificationRequests, searchUsers } from './admin-lists.ts';
import { IdentifierClaims, type IdentifierKind } from './claims.ts';

type Row = Record<string, unknown>;

/** Runs of one transaction that InnoDB may kill as a deadlock victim before it answers `aborted`. */
const MAX_ATTEMPTS = 8;
/** Runs that may end in a lock wait timeout (each one waits innodb_lock_wait_timeout, 50 s by default). */
const MAX_LOCK_WAIT_ATTEMPTS = 3;

/**
 * Milliseconds to wait before rerun `attempt` (2, 3, ...): random in [0, 4 * 2^attempt), at most 250 ms.
 * Losers that rerun at once take their gap locks again while the winner still holds its own and lose
 * again; spreading them out lets the winner commit first (MySQL 8.0 manual §17.7.5.3, "retry a
 * transaction that fails due to deadlock").
 */
function backoffMs(attempt: number): number {
  return Math.random() * Math.min(250, 4 * 2 ** attempt);
}

const num = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));

export function toRecord(r: Row): UserRecord {
  return {
    id: String(r.id),
    email: (r.email as string | null) ?? null,
    emailVerifiedAt: num(r.emailVerifiedAt),
    passwordHash: (r.passwordHash as string | null) ?? null,
    signupMethods: String(r.signupMethods),
    givenName: (r.givenName as string | null) ?? null,
    familyName: (r.familyName as string | null) ?? null,
    middleName: (r.middleName as string | null) ?? null,
    nickname: (r.nickname as string | null) ?? null,
    gender: (r.gender as string | null) ?? null,
    birthdate: (r.birthdate as string | null) ?? null,
    picture: (r.picture as string | null) ?? null,
    phoneNumber: (r.phoneNumber as string | null) ?? null,
    phoneNumberVerifiedAt: num(r.phoneNumberVerifiedAt),
    roles: JSON.parse(String(r.roles ?? '[]')) as string[],
    createdAt: Number(r.createdAt),
    updatedAt: Number(r.updatedAt),
    revokedTimestamp: num(r.revokedTimestamp),
    deactivatedAt: num(r.deactivatedAt),
    isMultiFactorAuthEnabled: r.isMultiFactorAuthEnabled === null || r.isMultiFactorAuthEnabled === undefined ? null : Boolean(r.isMultiFactorAuthEnabled),
    hasSkippedMfaSetupAt: num(r.hasSkippedMfaSetupAt),
    mfaLockedAt: num(r.mfaLockedAt),
    appData: r.appData === null || r.appData === undefined ? null : (JSON.parse(String(r.appData)) as Record<string, unknown>),
  };
}

export function toRow(u: UserRecord): Row {
  return { ...u, roles: JSON.stringify(u.roles), appData: u.appData === null ? null : JSON.stringify(u.appData) };
}

function reader(em: () => EntityManager, db?: Database): UserReader {
  const one = async (where: Row): Promise<UserRecord | null> => {
    const row = await em().findOne(UserEntity as never, where as never, { disableIdentityMap: true } as never);
    return row ? toRecord(row as Row) : null;
  };
  // credential resolution reads the user by id on every cache miss: a prepared statement on SQL databases (issue 22 §1)
  const byId = db?.prepare?.(`select ${selectColumns(db.type, db.orm, UserEntity as never)} from authn_users where id = ?`);
  return {
    findById: byId
      ? async (id) => {
        const [row] = await byId<Row>([id]);
        return row ? toRecord(row) : null;
      }
      : (id) => one({ id }),
    findByEmail: (email) => one({ email }),
    findByPhone: (phoneNumber) => one({ phoneNumber }),
  };
}

/**
 * @param clock Unix seconds for the envelopes' `occurredAt`
 */
export function createMikroUserRepository(db: Database, options: { clock?: () => number } = {}): UserRepository {
  const clock = options.clock ?? (() => Math.floor(Date.now() / 1000));
  const repo: UserRepository = {
    ...reader(() => db.fork(), db),
    search: (query, page) => searchUsers(db, query, page),
    listVerificationRequests: (page) => listVerificationRequests(db, page),
    async transaction<T>(fn: (tx: AuthnTx) => Promise<T>): Promise<T> {
      // InnoDB resolves two inserts into one locked gap with a deadlock: the loser reruns and then
      // sees the winner's row (behaviour.md §0.2 `aborted` only if it keeps losing)
      for (let attempt = 1; ; attempt++) {
        try {
          return await once(fn);
        } catch (err) {
          if (!(err instanceof DeadlockException || err instanceof LockWaitTimeoutException)) throw err;
          if (attempt >= (err instanceof DeadlockException ? MAX_ATTEMPTS : MAX_LOCK_WAIT_ATTEMPTS)) throw new AppError('aborted', 'concurrent update, please retry', { cause: err });
          await new Promise((resolve) => setTimeout(resolve, backoffMs(attempt + 1)));
        }
      }
    },
  };

  /** the id of the user that stores `value` now, read outside any unit of work (MongoDB claims) */
  const holder = async (kind: IdentifierKind, value: string): Promise<string | null> => {
    const row = await db.fork().findOne(UserEntity as never, (kind === 'email' ? { email: value } : { phoneNumber: value }) as never, { disableIdentityMap: true } as never);
    return row ? String((row as Row).id) : null;
  };

  /**
   * MongoDB: the unit of work runs with its identifier claims (`claims.ts`), settled or released once
   * it committed, released when it failed.
   */
  async function once<T>(fn: (tx: AuthnTx) => Promise<T>): Promise<T> {
    if (db.type !== 'mongodb') return unit(fn, null);
    const claims = new IdentifierClaims(db, holder);
    let result: T;
    try {
      result = await unit(fn, claims);
    } catch (err) {
      await claims.failed();
      throw err;
    }
    await claims.committed();
    return result;
  }

  /**
   * MongoDB: claims each identifier `next` stores that `previous` did not (a unit of work that did not
   * lock it first, e.g. a magic-link signup, still cannot store a taken one), and releases the ones
   * `previous` gave up.
   * @throws AppError `already_exists` when another user stores one of them
   */
  async function claimIdentifiers(claims: IdentifierClaims, next: UserRecord, previous: { email: string | null; phoneNumber: string | null } | null): Promise<void> {
    const pairs: [IdentifierKind, string | null, string | null][] = [['email', next.email, previous?.email ?? null], ['phone', next.phoneNumber, previous?.phoneNumber ?? null]];
    for (const [kind, value, before] of pairs) {
      if (value === before) continue;
      if (before !== null && previous) claims.release(kind, before, next.id);
      if (value === null) continue;
      const got = await claims.claim(kind, value);
      if (got.state === 'held' && got.userId !== next.id) {
        throw new AppError('already_exists', `user with given ${kind === 'email' ? 'email' : 'phone number'} already exists`);
      }
      claims.wrote(kind, value, next.id);
    }
  }

  function unit<T>(fn: (tx: AuthnTx) => Promise<T>, claims: IdentifierClaims | null): Promise<T> {
      return db.transactional(async (em) => {
        const tx: AuthnTx = {
          users: {
            // inside the transaction: the identity map lets reads see this transaction's writes (auto-flush)
            async findById(id) {
              const row = await em.findOne(UserEntity as never, { id } as never);
              return row ? toRecord(row as Row) : null;
            },
            async findByEmail(email) {
              const row = await em.findOne(UserEntity as never, { email } as never);
              return row ? toRecord(row as Row) : null;
            },
            async findByPhone(phoneNumber) {
              const row = await em.findOne(UserEntity as never, { phoneNumber } as never);
              return row ? toRecord(row as Row) : null;
            },
            async lockIdentifier(kind, value) {
              const sqlEm = em as unknown as { execute(sql: string, params: unknown[]): Promise<unknown> };
              if (db.type === 'postgres') {
                await sqlEm.execute('select pg_advisory_xact_lock(hashtextextended(?, 0))', [`authn:${kind}:${value}`]);
              } else if (db.type === 'mysql' || db.type === 'mariadb') {
                // a locking read takes a next-key/gap lock on the index even when no row matches
                await sqlEm.execute(`select id from authn_users where ${kind === 'email' ? 'email' : 'phone_number'} = ? for update`, [value]);
              }
              // mongodb: a claim document per value, waited for while another unit of work holds it
              if (claims) await claims.claim(kind, value);
              // sqlite: libs/db runs one transaction at a time
            },
            async create(u) {
              if (claims) await claimIdentifiers(claims, u, null);
              em.persist(em.create(UserEntity as never, toRow(u) as never));
              await em.flush();
            },
            async update(u) {
              const row = await em.findOne(UserEntity as never, { id: u.id } as never);
              if (!row) throw new Error(`unknown user id ${u.id}`);
              if (claims) await claimIdentifiers(claims, u, toRecord(row as Row));
              em.assign(row as never, toRow(u) as never);
              await em.flush();
            },
            async delete(id) {
              if (claims) {
                const row = await em.findOne(UserEntity as never, { id } as never);
                const gone = row ? toRecord(row as Row) : null;
                if (gone?.email) claims.release('email', gone.email, id);
                if (gone?.phoneNumber) claims.release('phone', gone.phoneNumber, id);
              }
              await em.flush();
              await em.nativeDelete(UserEntity as never, { id } as never);
              // issue 34: the user's consent grants go with the account
              await em.nativeDelete(ConsentGrantEntity as never, { userId: id } as never);
            },
          },
          verifications: createMikroVerificationStore(em),
          identities: createMikroIdentityLinkStore(em),
          events: {
            emit(name, data) {
              db.outbox.enqueue(em, { ...newEnvelope(name, 'authn', data), occurredAt: clock() });
            },
          },
        };
        return fn(tx);
      });
  }

  return repo;
}
