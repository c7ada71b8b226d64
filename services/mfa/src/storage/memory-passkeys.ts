/**
 * @module @gatehouse/mfa/storage/memory-passkeys
 * The passkey and WebAuthn-challenge parts of the in-memory store (behaviour.md §4.6), on the maps of
 * one draft or committed state of memory.ts.
 */
import type { PasskeyReads, PasskeyRecord, PasskeyWrites, WebauthnChallengeRecord, WebauthnChallengeWrites } from './ports.ts';

/** The passkey state: passkeys by id, challenges by their value. */
export interface PasskeyMaps {
  passkeys: Map<string, PasskeyRecord>;
  challenges: Map<string, WebauthnChallengeRecord>;
}

const copy = <T>(v: T): T => JSON.parse(JSON.stringify(v)) as T;
const byCreation = (a: PasskeyRecord, b: PasskeyRecord): number => a.createdAt - b.createdAt || a.id.localeCompare(b.id);

/** Copies the maps for a transaction's draft (records are never mutated in place). */
export const draftPasskeyMaps = (m: PasskeyMaps): PasskeyMaps => ({ passkeys: new Map(m.passkeys), challenges: new Map(m.challenges) });

/** Reads of committed state. */
export function memoryPasskeyReads(state: () => PasskeyMaps): PasskeyReads {
  return {
    async listByUser(userId) {
      return [...state().passkeys.values()].filter((p) => p.userId === userId).sort(byCreation).map(copy);
    },
    async findByCredentialId(credentialId) {
      for (const p of state().passkeys.values()) if (p.credentialId === credentialId) return copy(p);
      return null;
    },
  };
}

/** Writes on a transaction's draft. */
export function memoryPasskeyWrites(draft: PasskeyMaps): { passkeys: PasskeyWrites; webauthnChallenges: WebauthnChallengeWrites } {
  return {
    passkeys: {
      async listByUser(userId) {
        return [...draft.passkeys.values()].filter((p) => p.userId === userId).sort(byCreation).map(copy);
      },
      async create(p) {
        for (const other of draft.passkeys.values()) {
          // the primary key and the unique index on webauthn_credentials.credential_id
          if (other.id === p.id || other.credentialId === p.credentialId) throw new Error(`duplicate passkey ${p.credentialId}`);
        }
        draft.passkeys.set(p.id, copy(p));
      },
      async recordUse(id, expectedSignCount, signCount, at) {
        const p = draft.passkeys.get(id);
        if (!p || p.signCount !== expectedSignCount) return false;
        draft.passkeys.set(id, { ...p, signCount, lastUsedAt: at, updatedAt: at });
        return true;
      },
      async delete(userId, id) {
        const p = draft.passkeys.get(id);
        if (!p || p.userId !== userId) return false;
        return draft.passkeys.delete(id);
      },
      async deleteAllOfUser(userId) {
        let n = 0;
        for (const p of [...draft.passkeys.values()]) if (p.userId === userId && draft.passkeys.delete(p.id)) n += 1;
        return n;
      },
    },
    webauthnChallenges: {
      async create(c) {
        for (const [k, other] of draft.challenges) if (other.expiresAt < c.createdAt) draft.challenges.delete(k);
        if (draft.challenges.has(c.challenge)) throw new Error('duplicate WebAuthn challenge');
        draft.challenges.set(c.challenge, copy(c));
      },
      async take(challenge) {
        const c = draft.challenges.get(challenge);
        if (!c) return null;
        draft.challenges.delete(challenge);
        return copy(c);
      },
    },
  };
}
