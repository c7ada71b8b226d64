/**
 * @module @gatehouse/authn/storage/mikro/entities
 * MikroORM entities of the tables authn owns: `authn_users`, `authn_sessions`, `authn_login_failures`,
 * `authn_verification_requests`.
 * Lists and maps are stored as JSON text so every dialect behaves the same.
 */
import { defineEntity, p } from '@mikro-orm/core';

export const UserEntity = defineEntity({
  name: 'AuthnUser',
  tableName: 'authn_users',
  properties: {
    id: p.uuid().primary(),
    email: p.string().length(320).nullable(),
    emailVerifiedAt: p.bigint('number').fieldName('email_verified_at').nullable(),
    passwordHash: p.text().fieldName('password_hash').nullable(),
    signupMethods: p.string().length(255).fieldName('signup_methods'),
    givenName: p.string().length(256).fieldName('given_name').nullable(),
    familyName: p.string().length(256).fieldName('family_name').nullable(),
    middleName: p.string().length(256).fieldName('middle_name').nullable(),
    nickname: p.string().length(256).nullable(),
    gender: p.string().length(256).nullable(),
    birthdate: p.string().length(256).nullable(),
    picture: p.text().nullable(),
    phoneNumber: p.string().length(64).fieldName('phone_number').nullable(),
    phoneNumberVerifiedAt: p.bigint('number').fieldName('phone_number_verified_at').nullable(),
    roles: p.text(),
    createdAt: p.bigint('number').fieldName('created_at'),
    updatedAt: p.bigint('number').fieldName('updated_at'),
    revokedTimestamp: p.bigint('number').fieldName('revoked_timestamp').nullable(),
    deactivatedAt: p.bigint('number').fieldName('deactivated_at').nullable(),
    isMultiFactorAuthEnabled: p.boolean().fieldName('is_multi_factor_auth_enabled').nullable(),
    hasSkippedMfaSetupAt: p.bigint('number').fieldName('has_skipped_mfa_setup_at').nullable(),
    mfaLockedAt: p.bigint('number').fieldName('mfa_locked_at').nullable(),
    appData: p.text().fieldName('app_data').nullable(),
  },
});

export const SessionEntity = defineEntity({
  name: 'AuthnSession',
  tableName: 'authn_sessions',
  properties: {
    id: p.uuid().primary(),
    userId: p.uuid().fieldName('user_id'),
    handleHash: p.string().length(64).fieldName('handle_hash'),
    loginMethod: p.string().length(64).fieldName('login_method'),
    roles: p.text(),
    scope: p.text(),
    authTime: p.bigint('number').fieldName('auth_time'),
    expiresAt: p.bigint('number').fieldName('expires_at'),
    refreshTokenId: p.string().length(64).fieldName('refresh_token_id').nullable(),
    createdAt: p.bigint('number').fieldName('created_at'),
    // migration 0005 (issue 16): JSON array of the second factor's RFC 8176 values, or null
    amr: p.text().nullable(),
  },
});

export const LoginFailureEntity = defineEntity({
  name: 'AuthnLoginFailure',
  tableName: 'authn_login_failures',
  properties: {
    seq: p.bigint('number').primary().autoincrement(),
    /** sha256 hex of the normalised identifier */
    key: p.string().length(64).fieldName('lockout_key'),
    failedAt: p.bigint('number').fieldName('failed_at'),
  },
});

export const VerificationRequestEntity = defineEntity({
  name: 'AuthnVerificationRequest',
  tableName: 'authn_verification_requests',
  properties: {
    id: p.uuid().primary(),
    identifier: p.string().length(32),
    email: p.string().length(320),
    /** sha256 hex of the opaque token (behaviour.md §2.1: stored hashed) */
    tokenHash: p.string().length(64).fieldName('token_hash'),
    expiresAt: p.bigint('number').fieldName('expires_at'),
    redirectUri: p.text().fieldName('redirect_uri').nullable(),
    state: p.text().nullable(),
    /** JSON list */
    scope: p.text().nullable(),
    /** JSON list */
    roles: p.text().nullable(),
    userId: p.uuid().fieldName('user_id').nullable(),
    consumedAt: p.bigint('number').fieldName('consumed_at').nullable(),
    createdAt: p.bigint('number').fieldName('created_at'),
    updatedAt: p.bigint('number').fieldName('updated_at'),
  },
});
