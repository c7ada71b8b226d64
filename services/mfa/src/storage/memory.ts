/**
 * @module @gatehouse/mfa/storage/memory
 * In-memory {@link MfaStore} for unit tests; passes ports.suite.ts like the MikroORM store.
 * Transactions run one at a time on a private copy of the state, which replaces the committed state
 * only when `fn` resolves: reads outside see committed data only, and a throw leaves neither writes
 * nor events behind. Committed events are kept, as outbox envelopes, in `published`.
 */
import { newEnvelope, type Envelope } from '@gatehouse/bus';
import { createMemoryAttemptLog } from '@gatehouse/auth';
import { draftPasskeyMaps, memoryPasskeyReads, memoryPasskeyWrites, type PasskeyMaps } from './memory-passkeys.ts';
import type {
  MfaSessionRecord, MfaStore, MfaTransaction, OtpChannel, OtpEnrolmentRecord, OtpRecord, RecoveryCodeRecord, StoredFactors, TotpRecord, TotpSlot,
} from './ports.ts';

export interface MemoryMfaStoreOptions {
  /** Unix seconds, stamped on event envelopes as the MikroORM store does; defaults to the wall clock */
  clock?: () => number;
}

export interface MemoryMfaStore extends MfaStore {
  /** envelopes of committed transactions, in commit order (what `mfa_outbox` would hold) */
  readonly published: readonly Envelope[];
}

interface State extends PasskeyMaps {
  sessions: Map<string, MfaSessionRecord>;
  otps: Map<string, OtpRecord>;
  /** by `<user id>:<slot>` */
  totp: Map<string, TotpRecord>;
  recoveryCodes: Map<string, RecoveryCodeRecord>;
  /** by `<user id>:<channel>` */
  otpEnrolments: Map<string, OtpEnrolmentRecord>;
}

const cloneState = (s: State): State => ({
  sessions: new Map(s.sessions), otps: new Map(s.otps), totp: new Map(s.totp),
  recoveryCodes: new Map(s.recoveryCodes), otpEnrolments: new Map(s.otpEnrolments), ...draftPasskeyMaps(s),
});

/** Deletes the entries whose value matches; returns how many. */
function deleteWhere<V>(m: Map<string, V>, pred: (v: V) => boolean): number {
  let n = 0;
  for (const [k, v] of m) if (pred(v)) { m.delete(k); n++; }
  return n;
}

/** A copy through JSON, as the SQL store's text columns hold `user`, `roles`, `scope` and event data. */
const copy = <T>(v: T): T => JSON.parse(JSON.stringify(v ?? null)) as T;

const otpKey = (userId: string, channel: OtpChannel): string => `${userId}:${channel}`;

/** Builds an empty store. */
export function createMemoryMfaStore(opts: MemoryMfaStoreOptions = {}): MemoryMfaStore {
  const clock = opts.clock ?? (() => Math.floor(Date.now() / 1000));
  let committed: State = {
    sessions: new Map(), otps: new Map(), totp: new Map(), recoveryCodes: new Map(), otpEnrolments: new Map(), passkeys: new Map(), challenges: new Map(),
  };
  const published: Envelope[] = [];
  let queue: Promise<unknown> = Promise.resolve();

  function writer(draft: State, pending: Envelope[]): MfaTransaction {
    return {
      ...memoryPasskeyWrites(draft),
      sessions: {
        async create(s) {
          for (const other of draft.sessions.values()) {
            // the unique index on mfa_sessions.handle_hash, and the primary key
            if (other.id === s.id || other.handleHash === s.handleHash) throw new Error(`duplicate MFA session ${s.id}`);
          }
          draft.sessions.set(s.id, copy(s));
        },
        async rearm(id, expiresAt) {
          const s = draft.sessions.get(id);
          if (s) draft.sessions.set(id, { ...s, expiresAt });
        },
        async delete(id) {
          return draft.sessions.delete(id);
        },
        async setChannel(id, channel, contact, expiresAt) {
          const s = draft.sessions.get(id);
          if (s) draft.sessions.set(id, { ...s, channel, contact, expiresAt });
        },
        async deleteAllOfUser(userId) {
          return deleteWhere(draft.sessions, (s) => s.userId === userId);
        },
      },
      totp: {
        async put(t) {
          draft.totp.set(`${t.userId}:${t.slot}`, copy(t));
        },
        async delete(userId, slot) {
          return draft.totp.delete(`${userId}:${slot}`) ? 1 : 0;
        },
        async advanceStep(userId, slot, step) {
          const t = draft.totp.get(`${userId}:${slot}`);
          if (!t || (t.lastStep !== null && t.lastStep >= step)) return false;
          draft.totp.set(`${userId}:${slot}`, { ...t, lastStep: step });
          return true;
        },
        async promote(userId, lastStep) {
          const t = draft.totp.get(`${userId}:pending`);
          if (!t) return;
          draft.totp.delete(`${userId}:pending`);
          draft.totp.set(`${userId}:active`, { ...t, slot: 'active', lastStep, expiresAt: null });
        },
      },
      recoveryCodes: {
        async replace(userId, slot, codes) {
          deleteWhere(draft.recoveryCodes, (r) => r.userId === userId && r.slot === slot);
          for (const r of codes) draft.recoveryCodes.set(r.id, copy(r));
        },
        async use(id, at) {
          const r = draft.recoveryCodes.get(id);
          if (!r || r.usedAt !== null) return false;
          draft.recoveryCodes.set(id, { ...r, usedAt: at });
          return true;
        },
        async promote(userId) {
          deleteWhere(draft.recoveryCodes, (r) => r.userId === userId && r.slot === 'active');
          for (const [id, r] of draft.recoveryCodes) if (r.userId === userId) draft.recoveryCodes.set(id, { ...r, slot: 'active' });
        },
        async deleteAllOfUser(userId) {
          return deleteWhere(draft.recoveryCodes, (r) => r.userId === userId);
        },
      },
      otpEnrolments: {
        async put(e) {
          draft.otpEnrolments.set(otpKey(e.userId, e.channel), copy(e));
        },
        async verify(userId, channel, at) {
          const e = draft.otpEnrolments.get(otpKey(userId, channel));
          if (!e || e.verifiedAt !== null) return false;
          draft.otpEnrolments.set(otpKey(userId, channel), { ...e, verifiedAt: at });
          return true;
        },
        async deleteAllOfUser(userId) {
          return deleteWhere(draft.otpEnrolments, (e) => e.userId === userId);
        },
      },
      otps: {
        async put(o) {
          draft.otps.set(otpKey(o.userId, o.channel), copy(o));
        },
        async delete(userId, channel) {
          draft.otps.delete(otpKey(userId, channel));
        },
      },
      events: {
        emit(name, data) {
          // newEnvelope refuses a malformed name here, as it does in the MikroORM store
          pending.push({ ...newEnvelope(name, 'mfa', copy(data)), occurredAt: clock() });
        },
      },
    };
  }

  function transaction<T>(fn: (tx: MfaTransaction) => Promise<T>): Promise<T> {
    const run = async (): Promise<T> => {
      // records are never mutated in place, so copying the maps isolates the draft
      const draft = cloneState(committed);
      const pending: Envelope[] = [];
      const out = await fn(writer(draft, pending));
      committed = draft;
      published.push(...pending);
      return out;
    };
    // one transaction at a time: a second completion sees the first one's delete (single use, §4.2)
    const result = queue.then(run, run);
    queue = result.catch(() => undefined);
    return result;
  }

  return {
    async findSessionByHandleHash(handleHash) {
      for (const s of committed.sessions.values()) if (s.handleHash === handleHash) return copy(s);
      return null;
    },
    async findOtp(userId, channel) {
      const o = committed.otps.get(otpKey(userId, channel));
      return o ? copy(o) : null;
    },
    async findTotp(userId: string, slot: TotpSlot) {
      const t = committed.totp.get(`${userId}:${slot}`);
      return t ? copy(t) : null;
    },
    async findRecoveryCode(userId: string, codeHash: string) {
      for (const r of committed.recoveryCodes.values()) {
        if (r.userId === userId && r.slot === 'active' && r.codeHash === codeHash) return copy(r);
      }
      return null;
    },
    async findOtpEnrolment(userId: string, channel: OtpChannel) {
      const e = committed.otpEnrolments.get(otpKey(userId, channel));
      return e ? copy(e) : null;
    },
    async storedFactors(userIds: readonly string[]) {
      const out = new Map<string, StoredFactors>();
      for (const id of userIds) {
        const verified = (ch: OtpChannel): boolean => (committed.otpEnrolments.get(otpKey(id, ch))?.verifiedAt ?? null) !== null;
        out.set(id, { totp: committed.totp.has(`${id}:active`), emailOtp: verified('email'), smsOtp: verified('sms'), passkeys: [...committed.passkeys.values()].filter((p) => p.userId === id).length });
      }
      return out;
    },
    failures: createMemoryAttemptLog(),
    passkeys: memoryPasskeyReads(() => committed),
    transaction,
    published,
  };
}

