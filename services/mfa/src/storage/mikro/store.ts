/**
 * @module @gatehouse/mfa/storage/mikro/store
 * {@link MfaStore} on MikroORM through libs/db (SQLite, PostgreSQL, MySQL, MariaDB).
 */
import { IsolationLevel, type EntityManager } from '@mikro-orm/core';
import { newEnvelope } from '@gatehouse/bus';
import type { common } from '@gatehouse/contracts';
import { createMikroAttemptSlots, type Database } from '@gatehouse/db';
import { slotAttemptLog } from '@gatehouse/auth';
import type {
  MfaSessionRecord, MfaStore, MfaTransaction, OtpChannel, OtpEnrolmentRecord, OtpRecord, RecoveryCodeRecord, StoredFactors, TotpRecord, TotpSlot,
} from '../ports.ts';
import { countPasskeys, mikroPasskeyReads, mikroPasskeyWrites } from './passkeys.ts';
import {
  MfaAttemptSlotEntity, MfaOtpEnrolmentEntity, MfaOtpEntity, MfaRecoveryCodeEntity, MfaSessionEntity, MfaTotpEntity,
} from './schema.ts';

type SessionRow = typeof MfaSessionEntity['~entity'];
type OtpRow = typeof MfaOtpEntity['~entity'];

type TotpRow = typeof MfaTotpEntity['~entity'];
type RecoveryRow = typeof MfaRecoveryCodeEntity['~entity'];
type EnrolmentRow = typeof MfaOtpEnrolmentEntity['~entity'];

const otpId = (userId: string, channel: OtpChannel): string => `${userId}:${channel}`;
const totpId = (userId: string, slot: TotpSlot): string => `${userId}:${slot}`;
const num = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));

const toTotp = (r: TotpRow): TotpRecord => ({
  userId: r.userId, slot: r.slot as TotpSlot, secretSealed: r.secretSealed, lastStep: num(r.lastStep), expiresAt: num(r.expiresAt), createdAt: Number(r.createdAt),
});
const toRecovery = (r: RecoveryRow): RecoveryCodeRecord => ({
  id: r.id, userId: r.userId, slot: r.slot as TotpSlot, codeHash: r.codeHash, usedAt: num(r.usedAt), createdAt: Number(r.createdAt),
});
const toEnrolment = (r: EnrolmentRow): OtpEnrolmentRecord => ({
  userId: r.userId, channel: r.channel as OtpChannel, verifiedAt: num(r.verifiedAt), createdAt: Number(r.createdAt),
});

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
    db.transactional(fn, { isolationLevel: IsolationLevel.READ_COMMITTED });
  return {
    async findSessionByHandleHash(handleHash) {
      const row = await db.fork().findOne(MfaSessionEntity, { handleHash });
      return row ? toSession(row) : null;
    },
    async findOtp(userId, channel) {
      const row = await db.fork().findOne(MfaOtpEntity, { id: otpId(userId, channel) });
      return row ? toOtp(row) : null;
    },
    async findTotp(userId, slot) {
      const row = await db.fork().findOne(MfaTotpEntity, { id: totpId(userId, slot) });
      return row ? toTotp(row) : null;
    },
    async findRecoveryCode(userId, codeHash) {
      const row = await db.fork().findOne(MfaRecoveryCodeEntity, { userId, codeHash, slot: 'active' });
      return row ? toRecovery(row) : null;
    },
    async findOtpEnrolment(userId, channel) {
      const row = await db.fork().findOne(MfaOtpEnrolmentEntity, { id: otpId(userId, channel) });
      return row ? toEnrolment(row) : null;
    },
    async storedFactors(userIds) {
      const ids = [...new Set(userIds)];
      const out = new Map<string, StoredFactors>();
      if (ids.length === 0) return out;
      const em = db.fork();
      const [totps, enrolments, passkeys] = await Promise.all([
        em.find(MfaTotpEntity, { userId: { $in: ids }, slot: 'active' }),
        em.find(MfaOtpEnrolmentEntity, { userId: { $in: ids }, verifiedAt: { $ne: null } }),
        countPasskeys(db.fork(), ids),
      ]);
      for (const id of ids) {
        out.set(id, {
          totp: totps.some((t) => t.userId === id),
          emailOtp: enrolments.some((e) => e.userId === id && e.channel === 'email'),
          smsOtp: enrolments.some((e) => e.userId === id && e.channel === 'sms'),
          passkeys: passkeys.get(id) ?? 0,
        });
      }
      return out;
    },
    failures: slotAttemptLog(createMikroAttemptSlots(db, MfaAttemptSlotEntity)),
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
            async setChannel(id, channel, contact, expiresAt) {
              await em.nativeUpdate(MfaSessionEntity, { id }, { channel, contact, expiresAt });
            },
            async deleteAllOfUser(userId) {
              return em.nativeDelete(MfaSessionEntity, { userId });
            },
          },
          totp: {
            async put(t) {
              await em.upsert(MfaTotpEntity, { id: totpId(t.userId, t.slot), ...t });
            },
            async delete(userId, slot) {
              return em.nativeDelete(MfaTotpEntity, { id: totpId(userId, slot) });
            },
            async advanceStep(userId, slot, step) {
              // one conditional UPDATE: of two requests with the same code only one changes the row
              const n = await em.nativeUpdate(MfaTotpEntity, { id: totpId(userId, slot), $or: [{ lastStep: null }, { lastStep: { $lt: step } }] }, { lastStep: step });
              return n === 1;
            },
            async promote(userId, lastStep) {
              const pending = await em.findOne(MfaTotpEntity, { id: totpId(userId, 'pending') });
              if (!pending) return;
              await em.nativeDelete(MfaTotpEntity, { id: { $in: [totpId(userId, 'active'), totpId(userId, 'pending')] } });
              await em.insert(MfaTotpEntity, {
                id: totpId(userId, 'active'), userId, slot: 'active', secretSealed: pending.secretSealed, lastStep, expiresAt: null, createdAt: pending.createdAt,
              });
            },
          },
          recoveryCodes: {
            async replace(userId, slot, codes) {
              await em.nativeDelete(MfaRecoveryCodeEntity, { userId, slot });
              if (codes.length > 0) await em.insertMany(MfaRecoveryCodeEntity, codes.map((c) => ({ ...c })));
            },
            async use(id, at) {
              return (await em.nativeUpdate(MfaRecoveryCodeEntity, { id, usedAt: null }, { usedAt: at })) === 1;
            },
            async promote(userId) {
              await em.nativeDelete(MfaRecoveryCodeEntity, { userId, slot: 'active' });
              await em.nativeUpdate(MfaRecoveryCodeEntity, { userId, slot: 'pending' }, { slot: 'active' });
            },
            async deleteAllOfUser(userId) {
              return em.nativeDelete(MfaRecoveryCodeEntity, { userId });
            },
          },
          otpEnrolments: {
            async put(e) {
              await em.upsert(MfaOtpEnrolmentEntity, { id: otpId(e.userId, e.channel), ...e });
            },
            async verify(userId, channel, at) {
              return (await em.nativeUpdate(MfaOtpEnrolmentEntity, { id: otpId(userId, channel), verifiedAt: null }, { verifiedAt: at })) === 1;
            },
            async deleteAllOfUser(userId) {
              return em.nativeDelete(MfaOtpEnrolmentEntity, { userId });
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
