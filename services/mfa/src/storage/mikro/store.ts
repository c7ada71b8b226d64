/**
 * @module @gatehouse/mfa/storage/mikro/store
 * {@link MfaStore} on MikroORM through libs/db (SQLite, PostgreSQL, MySQL, MariaDB).
 */
import { IsolationLevel, type EntityManager } from '@mikro-orm/core';
import { newEnvelope } from '@gatehouse/bus';
import type { common } from '@gatehouse/contracts';
import type { Database } from '@gatehouse/db';
import type { MfaSessionRecord, MfaStore, MfaTransaction, OtpChannel, OtpRecord } from '../ports.ts';
import { mikroPasskeyReads, mikroPasskeyWrites } from './passkeys.ts';
import { MfaOtpEntity, MfaOtpFailureEntity, MfaSessionEntity } from './schema.ts';

type SessionRow = typeof MfaSessionEntity['~entity'];
type OtpRow = typeof MfaOtpEntity['~entity'];

const otpId = (userId: string, channel: OtpChannel): string => `${userId}:${channel}`;

function toSession(r: SessionRow): MfaSessionRecord {
  return {
    id: r.id,
    handleHash: r.handleHash,
    userId: r.userId,
    purpose: r.purpose as MfaSessionRecord['purpose'],
    channel: (r.channel ?? null) as OtpChannel | null,
    contact: r.contact ?? null,
    // written by this store from a wire User (the codec shaped it)
    user: JSON.parse(r.user) as common.User,
    loginMethod: r.loginMethod,
    roles: JSON.parse(r.roles) as string[],
    scope: JSON.parse(r.scope) as string[],
    state: r.state ?? null,
    authTime: Number(r.authTime),
    expiresAt: Number(r.expiresAt),
    createdAt: Number(r.createdAt),
  };
}

const toOtp = (r: OtpRow): OtpRecord => ({
  userId: r.userId, channel: r.channel as OtpChannel, digest: r.digest, expiresAt: Number(r.expiresAt), sentAt: Number(r.sentAt),
});

/**
 * Builds the store on a database opened with `mfaSchema`.
 * @param clock Unix seconds, stamped on outbox envelopes
 */
export function createMikroMfaStore(db: Database, clock: () => number = () => Math.floor(Date.now() / 1000)): MfaStore {
  // READ COMMITTED, PostgreSQL's default, also on MySQL/MariaDB, whose REPEATABLE READ default makes
  // the pruning range deletes below lock the gap they scan even when they match nothing: two
  // transactions that then insert into each other's gap (two logins, two wrong codes at once)
  // deadlock. Under READ COMMITTED InnoDB takes no gap locks for searches (MySQL 8.4 manual
  // §17.7.2.1); nothing here re-reads a row, so repeatable reads buy nothing. SQLite ignores it.
  const inTransaction = <T>(fn: (em: EntityManager) => Promise<T>): Promise<T> =>
    db.fork().transactional(fn, { isolationLevel: IsolationLevel.READ_COMMITTED });
  return {
    async findSessionByHandleHash(handleHash) {
      const row = await db.fork().findOne(MfaSessionEntity, { handleHash });
      return row ? toSession(row) : null;
    },
    async findOtp(userId, channel) {
      const row = await db.fork().findOne(MfaOtpEntity, { id: otpId(userId, channel) });
      return row ? toOtp(row) : null;
    },
    failures: {
      async recordFailure(key, at, pruneBefore) {
        await inTransaction(async (em) => {
          if (pruneBefore !== undefined) await em.nativeDelete(MfaOtpFailureEntity, { key, failedAt: { $lt: pruneBefore } });
          em.persist(em.create(MfaOtpFailureEntity, { key, failedAt: at }));
        });
      },
      async failuresSince(key, since) {
        const rows = await db.fork().find(MfaOtpFailureEntity, { key, failedAt: { $gte: since } }, { orderBy: { failedAt: 'asc' } });
        return rows.map((r) => Number(r.failedAt));
      },
      async clear(key) {
        await db.fork().nativeDelete(MfaOtpFailureEntity, { key });
      },
    },
    passkeys: mikroPasskeyReads(() => db.fork()),
    transaction(fn) {
      return inTransaction(async (em) => {
        const tx: MfaTransaction = {
          ...mikroPasskeyWrites(em),
          sessions: {
            async create(s) {
              // sessions past their expiry are never read again (expiry is checked on every read)
              await em.nativeDelete(MfaSessionEntity, { expiresAt: { $lt: s.createdAt } });
              em.persist(em.create(MfaSessionEntity, {
                ...s, user: JSON.stringify(s.user), roles: JSON.stringify(s.roles), scope: JSON.stringify(s.scope),
              }));
              await em.flush();
            },
            async rearm(id, expiresAt) {
              await em.nativeUpdate(MfaSessionEntity, { id }, { expiresAt });
            },
            async delete(id) {
              return (await em.nativeDelete(MfaSessionEntity, { id })) === 1;
            },
          },
          otps: {
            async put(o) {
              // One statement (INSERT ... ON CONFLICT / ON DUPLICATE KEY UPDATE) rather than delete then
              // insert: concurrent puts for one user and channel then queue on the row lock instead of
              // failing on the primary key (PostgreSQL) or deadlocking on gap locks (InnoDB); and a second
              // put in the same transaction is written, where em.create of a key already in the identity
              // map flushed nothing after the delete.
              await em.upsert(MfaOtpEntity, { id: otpId(o.userId, o.channel), ...o });
            },
            async delete(userId, channel) {
              await em.nativeDelete(MfaOtpEntity, { id: otpId(userId, channel) });
            },
          },
          events: {
            emit(name, data) {
              db.outbox.enqueue(em, { ...newEnvelope(name, 'mfa', data), occurredAt: clock() });
            },
          },
        };
        return fn(tx);
      });
    },
  };
}
