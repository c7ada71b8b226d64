/**
 * @module @gatehouse/mfa/storage/mikro/schema
 * The mfa service's tables (`mfa_sessions`, `mfa_otps`, `mfa_otp_failures`; issue 16: `mfa_totp`,
 * `mfa_recovery_codes`, `mfa_otp_enrolments`): MikroORM entities and
 * the migrations that create them, as one libs/db ServiceSchema.
 */
import { defineEntity, p, type EntitySchema } from '@mikro-orm/core';
import { attemptSlotEntity, attemptSlotsTable, type ServiceSchema } from '@gatehouse/db';
import { passkeyEntities, passkeyMigration } from './passkeys.ts';

export const MfaSessionEntity = defineEntity({
  name: 'MfaSession',
  tableName: 'mfa_sessions',
  properties: {
    id: p.uuid().primary(),
    handleHash: p.string().length(64).fieldName('handle_hash'),
    userId: p.string().length(64).fieldName('user_id'),
    purpose: p.string().length(32),
    channel: p.string().length(16).nullable(),
    contact: p.string().length(320).nullable(),
    user: p.text().fieldName('user_json'),
    loginMethod: p.string().length(64).fieldName('login_method'),
    roles: p.text(),
    scope: p.text(),
    state: p.text().nullable(),
    authTime: p.bigint('number').fieldName('auth_time'),
    expiresAt: p.bigint('number').fieldName('expires_at'),
    createdAt: p.bigint('number').fieldName('created_at'),
  },
});

export const MfaOtpEntity = defineEntity({
  name: 'MfaOtp',
  tableName: 'mfa_otps',
  properties: {
    // `<user id>:<channel>`: one live code per user and channel (behaviour.md §4.4)
    id: p.string().length(96).primary(),
    userId: p.string().length(64).fieldName('user_id'),
    channel: p.string().length(16),
    digest: p.string().length(64),
    expiresAt: p.bigint('number').fieldName('expires_at'),
    sentAt: p.bigint('number').fieldName('sent_at'),
  },
});

/**
 * `mfa_attempt_slots` (issue 30 §1-§2): the OTP/TOTP lockouts' and the send caps' attempt slots,
 * claimed by conditional writes (libs/db `attempt-slots.ts`). Replaces `mfa_otp_failures`.
 */
export const MfaAttemptSlotEntity = attemptSlotEntity('mfa');

// issue 16: the factors (behaviour.md §4.3-§4.5)

export const MfaTotpEntity = defineEntity({
  name: 'MfaTotp',
  tableName: 'mfa_totp',
  properties: {
    // `<user id>:<slot>`: one active and one pending enrolment per user
    id: p.string().length(96).primary(),
    userId: p.string().length(64).fieldName('user_id'),
    slot: p.string().length(16),
    secretSealed: p.text().fieldName('secret_sealed'),
    lastStep: p.bigint('number').nullable().fieldName('last_step'),
    expiresAt: p.bigint('number').nullable().fieldName('expires_at'),
    createdAt: p.bigint('number').fieldName('created_at'),
  },
});

export const MfaRecoveryCodeEntity = defineEntity({
  name: 'MfaRecoveryCode',
  tableName: 'mfa_recovery_codes',
  properties: {
    id: p.uuid().primary(),
    userId: p.string().length(64).fieldName('user_id'),
    slot: p.string().length(16),
    codeHash: p.string().length(64).fieldName('code_hash'),
    usedAt: p.bigint('number').nullable().fieldName('used_at'),
    createdAt: p.bigint('number').fieldName('created_at'),
  },
});

export const MfaOtpEnrolmentEntity = defineEntity({
  name: 'MfaOtpEnrolment',
  tableName: 'mfa_otp_enrolments',
  properties: {
    // `<user id>:<channel>`
    id: p.string().length(96).primary(),
    userId: p.string().length(64).fieldName('user_id'),
    channel: p.string().length(16),
    verifiedAt: p.bigint('number').nullable().fieldName('verified_at'),
    createdAt: p.bigint('number').fieldName('created_at'),
  },
});

/** The schema handed to `openDatabase(options, mfaSchema, { logger })`. */
export const mfaSchema: ServiceSchema = {
  service: 'mfa',
  entities: [MfaSessionEntity, MfaOtpEntity, MfaAttemptSlotEntity, MfaTotpEntity, MfaRecoveryCodeEntity, MfaOtpEnrolmentEntity, ...passkeyEntities] as unknown as EntitySchema<any, any>[],
  migrations: [
    {
      name: '0001_mfa_sessions_otps_failures',
      async up({ ddl }) {
        await ddl.createTable('mfa_sessions', [
          { name: 'id', type: 'uuid', primary: true },
          { name: 'handle_hash', type: 'string', length: 64 },
          { name: 'user_id', type: 'string', length: 64 },
          { name: 'purpose', type: 'string', length: 32 },
          { name: 'channel', type: 'string', length: 16, nullable: true },
          { name: 'contact', type: 'string', length: 320, nullable: true },
          { name: 'user_json', type: 'text' },
          { name: 'login_method', type: 'string', length: 64 },
          { name: 'roles', type: 'text' },
          { name: 'scope', type: 'text' },
          { name: 'state', type: 'text', nullable: true },
          { name: 'auth_time', type: 'bigint' },
          { name: 'expires_at', type: 'bigint' },
          { name: 'created_at', type: 'bigint' },
        ]);
        await ddl.createIndex('mfa_sessions', 'mfa_sessions_handle_idx', ['handle_hash'], { unique: true });
        await ddl.createIndex('mfa_sessions', 'mfa_sessions_expiry_idx', ['expires_at']);
        await ddl.createTable('mfa_otps', [
          { name: 'id', type: 'string', length: 96, primary: true },
          { name: 'user_id', type: 'string', length: 64 },
          { name: 'channel', type: 'string', length: 16 },
          { name: 'digest', type: 'string', length: 64 },
          { name: 'expires_at', type: 'bigint' },
          { name: 'sent_at', type: 'bigint' },
        ]);
        await ddl.createTable('mfa_otp_failures', [
          { name: 'id', type: 'serial' },
          { name: 'failure_key', type: 'string', length: 128 },
          { name: 'failed_at', type: 'bigint' },
        ]);
        await ddl.createIndex('mfa_otp_failures', 'mfa_otp_failures_key_idx', ['failure_key', 'failed_at']);
      },
    },
    {
      name: '0002_mfa_factors',
      async up({ ddl }) {
        await ddl.createTable('mfa_totp', [
          { name: 'id', type: 'string', length: 96, primary: true },
          { name: 'user_id', type: 'string', length: 64 },
          { name: 'slot', type: 'string', length: 16 },
          { name: 'secret_sealed', type: 'text' },
          { name: 'last_step', type: 'bigint', nullable: true },
          { name: 'expires_at', type: 'bigint', nullable: true },
          { name: 'created_at', type: 'bigint' },
        ]);
        await ddl.createIndex('mfa_totp', 'mfa_totp_user_idx', ['user_id']);
        await ddl.createTable('mfa_recovery_codes', [
          { name: 'id', type: 'uuid', primary: true },
          { name: 'user_id', type: 'string', length: 64 },
          { name: 'slot', type: 'string', length: 16 },
          { name: 'code_hash', type: 'string', length: 64 },
          { name: 'used_at', type: 'bigint', nullable: true },
          { name: 'created_at', type: 'bigint' },
        ]);
        await ddl.createIndex('mfa_recovery_codes', 'mfa_recovery_codes_user_idx', ['user_id', 'code_hash']);
        await ddl.createTable('mfa_otp_enrolments', [
          { name: 'id', type: 'string', length: 96, primary: true },
          { name: 'user_id', type: 'string', length: 64 },
          { name: 'channel', type: 'string', length: 16 },
          { name: 'verified_at', type: 'bigint', nullable: true },
          { name: 'created_at', type: 'bigint' },
        ]);
        await ddl.createIndex('mfa_otp_enrolments', 'mfa_otp_enrolments_user_idx', ['user_id']);
      },
    },
    passkeyMigration,
    {
      // issue 23: the expiry columns the retention sweeper filters on (storage/mikro/retention.ts)
      name: '0004_mfa_retention_indexes',
      async up({ ddl }) {
        await ddl.createIndex('mfa_otps', 'mfa_otps_expiry_idx', ['expires_at']);
        await ddl.createIndex('mfa_otp_failures', 'mfa_otp_failures_failed_at_idx', ['failed_at']);
      },
    },
    {
      // issue 30 §1: attempts are claimed before they are judged, in slots taken by conditional
      // writes; the row-per-failure table (a count then an insert) could be outrun by concurrent calls
      name: '0005_mfa_attempt_slots',
      async up({ ddl }) {
        await attemptSlotsTable(ddl, 'mfa');
        await ddl.dropTable('mfa_otp_failures');
      },
    },
  ],
};
