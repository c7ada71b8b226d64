/**
 * @module @gatehouse/mfa/storage/memory
 * In-memory {@link MfaStore} for unit tests; passes ports.suite.ts like the MikroORM store.
 * Transactions run one at a time on a private copy of the state, which replaces the committed state
 * only when `fn` resolves: reads outside see committed data only, and a throw leaves neither writes
 * nor events behind. Committed events are kept, as outbox envelopes, in `published`.
 */
import { newEnvelope, type Envelope } from '@gatehouse/bus';
import type { FailureLog } from '@gatehouse/auth';
import { draftPasskeyMaps, memoryPasskeyReads, memoryPasskeyWrites, type PasskeyMaps } from './memory-passkeys.ts';
import type { MfaSessionRecord, MfaStore, MfaTransaction, OtpChannel, OtpRecord } from './ports.ts';

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
}

/** A copy through JSON, as the SQL store's text columns hold `user`, `roles`, `scope` and event data. */
const copy = <T>(v: T): T => JSON.parse(JSON.stringify(v ?? null)) as T;

const otpKey = (userId: string, channel: OtpChannel): string => `${userId}:${channel}`;

/** Builds an empty store. */
export function createMemoryMfaStore(opts: MemoryMfaStoreOptions = {}): MemoryMfaStore {
  const clock = opts.clock ?? (() => Math.floor(Date.now() / 1000));
  let committed: State = { sessions: new Map(), otps: new Map(), passkeys: new Map(), challenges: new Map() };
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
      const draft: State = { sessions: new Map(committed.sessions), otps: new Map(committed.otps), ...draftPasskeyMaps(committed) };
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
    failures: createMemoryFailureLog(),
    passkeys: memoryPasskeyReads(() => committed),
    transaction,
    published,
  };
}

/** {@link FailureLog} on a map of ascending failure times per key; each call is atomic. */
function createMemoryFailureLog(): FailureLog {
  const times = new Map<string, number[]>();
  return {
    async recordFailure(key, atSeconds, pruneBeforeSeconds) {
      const kept = (times.get(key) ?? []).filter((t) => pruneBeforeSeconds === undefined || t >= pruneBeforeSeconds);
      times.set(key, [...kept, atSeconds].sort((a, b) => a - b));
    },
    async failuresSince(key, sinceSeconds) {
      return (times.get(key) ?? []).filter((t) => t >= sinceSeconds);
    },
    async clear(key) {
      times.delete(key);
    },
  };
}
