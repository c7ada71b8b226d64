/**
 * @module @gatehouse/mfa/storage/mikro/schema
 * The mfa service's tables (`mfa_sessions`, `mfa_otps`, `mfa_otp_failures`): MikroORM entities and
 * the migrations that create them, as one libs/db ServiceSchema.
 */
import { defineEntity, p, type EntitySchema } from '@mikro-orm/core';
import type { ServiceSchema } from '@gatehouse/db';
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

export const MfaOtpFailureEntity = defineEntity({
  name: 'MfaOtpFailure',
  tableName: 'mfa_otp_failures',
  properties: {
    id: p.bigint('number').primary().autoincrement(),
    key: p.string().length(128).fieldName('failure_key'),
    failedAt: p.bigint('number').fieldName('failed_at'),
  },
});

/** The schema handed to `openDatabase(options, mfaSchema, { logger })`. */
export const mfaSchema: ServiceSchema = {
  service: 'mfa',
  entities: [MfaSessionEntity, MfaOtpEntity, MfaOtpFailureEntity, ...passkeyEntities] as unknown as EntitySchema<any, any>[],
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
    passkeyMigration,
  ],
};
