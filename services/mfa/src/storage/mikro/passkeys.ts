/**
 * @module @gatehouse/mfa/storage/mikro/passkeys
 * Passkeys and WebAuthn challenges on MikroORM (behaviour.md §4.6): the tables
 * `webauthn_credentials` and `webauthn_challenges`, their migration, and the reads and writes of
 * {@link PasskeyReads}, {@link PasskeyWrites} and {@link WebauthnChallengeWrites}.
 */
import { sha256Hex } from '@gatehouse/crypto';
import { defineEntity, p, type EntityManager } from '@mikro-orm/core';
import type { MigrationDefinition } from '@gatehouse/db';
import type { PasskeyReads, PasskeyRecord, PasskeyWrites, WebauthnCeremony, WebauthnChallengeRecord, WebauthnChallengeWrites } from '../ports.ts';

export const WebauthnCredentialEntity = defineEntity({
  name: 'WebauthnCredential',
  tableName: 'webauthn_credentials',
  properties: {
    id: p.uuid().primary(),
    userId: p.string().length(64).fieldName('user_id'),
    // base64url of at most 1023 bytes (WebAuthn L3 §5.8.3); looked up by its SHA-256
    credentialId: p.text().fieldName('credential_id'),
    credentialIdHash: p.string().length(64).fieldName('credential_id_hash'),
    publicKey: p.text().fieldName('public_key'),
    signCount: p.bigint('number').fieldName('sign_count'),
    transports: p.text(),
    name: p.string().length(64),
    aaguid: p.string().length(36),
    deviceType: p.string().length(16).fieldName('device_type'),
    backedUp: p.boolean().fieldName('backed_up'),
    createdAt: p.bigint('number').fieldName('created_at'),
    updatedAt: p.bigint('number').fieldName('updated_at'),
    lastUsedAt: p.bigint('number').nullable().fieldName('last_used_at'),
  },
});

export const WebauthnChallengeEntity = defineEntity({
  name: 'WebauthnChallenge',
  tableName: 'webauthn_challenges',
  properties: {
    // base64url of 32 bytes
    challenge: p.string().length(64).primary(),
    ceremony: p.string().length(16),
    userId: p.string().length(64).nullable().fieldName('user_id'),
    mfaSessionId: p.string().length(36).nullable().fieldName('mfa_session_id'),
    expiresAt: p.bigint('number').fieldName('expires_at'),
    createdAt: p.bigint('number').fieldName('created_at'),
  },
});

export const passkeyEntities = [WebauthnCredentialEntity, WebauthnChallengeEntity];

/** Creates the two tables; the credential id is unique across users (a hash index keeps MySQL's key length small). */
export const passkeyMigration: MigrationDefinition = {
  name: '0003_webauthn_credentials_challenges',
  async up({ ddl }) {
    await ddl.createTable('webauthn_credentials', [
      { name: 'id', type: 'uuid', primary: true },
      { name: 'user_id', type: 'string', length: 64 },
      { name: 'credential_id', type: 'text' },
      { name: 'credential_id_hash', type: 'string', length: 64 },
      { name: 'public_key', type: 'text' },
      { name: 'sign_count', type: 'bigint' },
      { name: 'transports', type: 'text' },
      { name: 'name', type: 'string', length: 64 },
      { name: 'aaguid', type: 'string', length: 36 },
      { name: 'device_type', type: 'string', length: 16 },
      { name: 'backed_up', type: 'boolean' },
      { name: 'created_at', type: 'bigint' },
      { name: 'updated_at', type: 'bigint' },
      { name: 'last_used_at', type: 'bigint', nullable: true },
    ]);
    await ddl.createIndex('webauthn_credentials', 'webauthn_credentials_cred_idx', ['credential_id_hash'], { unique: true });
    await ddl.createIndex('webauthn_credentials', 'webauthn_credentials_user_idx', ['user_id']);
    await ddl.createTable('webauthn_challenges', [
      { name: 'challenge', type: 'string', length: 64, primary: true },
      { name: 'ceremony', type: 'string', length: 16 },
      { name: 'user_id', type: 'string', length: 64, nullable: true },
      { name: 'mfa_session_id', type: 'string', length: 36, nullable: true },
      { name: 'expires_at', type: 'bigint' },
      { name: 'created_at', type: 'bigint' },
    ]);
    await ddl.createIndex('webauthn_challenges', 'webauthn_challenges_expiry_idx', ['expires_at']);
  },
};

type CredentialRow = typeof WebauthnCredentialEntity['~entity'];
type ChallengeRow = typeof WebauthnChallengeEntity['~entity'];

const toPasskey = (r: CredentialRow): PasskeyRecord => ({
  id: r.id,
  userId: r.userId,
  credentialId: r.credentialId,
  publicKey: r.publicKey,
  signCount: Number(r.signCount),
  transports: JSON.parse(r.transports) as string[],
  name: r.name,
  aaguid: r.aaguid,
  deviceType: r.deviceType,
  backedUp: Boolean(r.backedUp),
  createdAt: Number(r.createdAt),
  updatedAt: Number(r.updatedAt),
  lastUsedAt: r.lastUsedAt === null || r.lastUsedAt === undefined ? null : Number(r.lastUsedAt),
});

const toChallenge = (r: ChallengeRow): WebauthnChallengeRecord => ({
  challenge: r.challenge,
  ceremony: r.ceremony as WebauthnCeremony,
  userId: r.userId ?? null,
  mfaSessionId: r.mfaSessionId ?? null,
  expiresAt: Number(r.expiresAt),
  createdAt: Number(r.createdAt),
});

const listByUser = async (em: EntityManager, userId: string): Promise<PasskeyRecord[]> =>
  (await em.find(WebauthnCredentialEntity, { userId }, { orderBy: { createdAt: 'asc', id: 'asc' } })).map(toPasskey);

/** How many passkeys each user has (the gate's verified factors, behaviour.md §4.1). */
export async function countPasskeys(em: EntityManager, userIds: readonly string[]): Promise<Map<string, number>> {
  const out = new Map<string, number>(userIds.map((id) => [id, 0]));
  if (userIds.length === 0) return out;
  const rows = await em.find(WebauthnCredentialEntity, { userId: { $in: [...userIds] } }, { fields: ['id', 'userId'] });
  for (const r of rows) out.set(r.userId, (out.get(r.userId) ?? 0) + 1);
  return out;
}

/** Reads on a fresh fork per call. */
export function mikroPasskeyReads(fork: () => EntityManager): PasskeyReads {
  return {
    listByUser: (userId) => listByUser(fork(), userId),
    async findByCredentialId(credentialId) {
      const row = await fork().findOne(WebauthnCredentialEntity, { credentialIdHash: sha256Hex(credentialId) });
      return row && row.credentialId === credentialId ? toPasskey(row) : null;
    },
  };
}

/** Writes in the transaction of `em`. */
export function mikroPasskeyWrites(em: EntityManager): { passkeys: PasskeyWrites; webauthnChallenges: WebauthnChallengeWrites } {
  return {
    passkeys: {
      listByUser: (userId) => listByUser(em, userId),
      async create(r) {
        em.persist(em.create(WebauthnCredentialEntity, {
          ...r, credentialIdHash: sha256Hex(r.credentialId), transports: JSON.stringify(r.transports),
        }));
        await em.flush();
      },
      async recordUse(id, expectedSignCount, signCount, at) {
        const n = await em.nativeUpdate(WebauthnCredentialEntity, { id, signCount: expectedSignCount }, { signCount, lastUsedAt: at, updatedAt: at });
        return n === 1;
      },
      async delete(userId, id) {
        return (await em.nativeDelete(WebauthnCredentialEntity, { id, userId })) === 1;
      },
      deleteAllOfUser: (userId) => em.nativeDelete(WebauthnCredentialEntity, { userId }),
    },
    webauthnChallenges: {
      async create(c) {
        // challenges past their expiry are never taken again
        await em.nativeDelete(WebauthnChallengeEntity, { expiresAt: { $lt: c.createdAt } });
        em.persist(em.create(WebauthnChallengeEntity, c));
        await em.flush();
      },
      async take(challenge) {
        const row = await em.findOne(WebauthnChallengeEntity, { challenge });
        if (!row) return null;
        // the delete decides: of two concurrent takes only one removes the row
        if ((await em.nativeDelete(WebauthnChallengeEntity, { challenge })) !== 1) return null;
        return toChallenge(row);
      },
    },
  };
}
