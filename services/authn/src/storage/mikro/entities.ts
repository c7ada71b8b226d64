/**
 * @module @gatehouse/authn/storage/mikro/entities
 * MikroORM entities of the tables authn owns: `authn_users`, `authn_sessions`, `authn_attempt_slots`,
 * `authn_verification_requests`.
 * Lists and maps are stored as JSON text so every dialect behaves the same.
 */
import { defineEntity, p } from '@mikro-orm/core';
import { attemptSlotEntity } from '@gatehouse/db';

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
    // migration 0006 (issue 18): refresh rotation (behaviour.md §2.2) and the OAuth client
    previousRefreshTokenId: p.string().length(64).fieldName('previous_refresh_token_id').nullable(),
    refreshRotatedAt: p.bigint('number').fieldName('refresh_rotated_at').nullable(),
    clientId: p.string().length(255).fieldName('client_id').nullable(),
    // migration 0013 (issue 34 §6): the sign-on session an OAuth grant was made in (`sid`), or null
    sid: p.string().length(64).nullable(),
    // migration 0015 (issue 33): the device that opened the session and its last use (Unix s)
    userAgent: p.string().length(512).fieldName('user_agent').nullable(),
    ipAddress: p.string().length(64).fieldName('ip_address').nullable(),
    lastUsedAt: p.bigint('number').fieldName('last_used_at').nullable(),
  },
});

/**
 * `authn_attempt_slots` (issue 30 §1-§2): the login lockout's and the send caps' attempt slots,
 * claimed by conditional writes (libs/db `attempt-slots.ts`). Replaces `authn_login_failures`.
 */
export const AttemptSlotEntity = attemptSlotEntity('authn');

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

// ---- issue 18: the OAuth 2.0 / OpenID Provider (migration 0006) ----

export const OAuthClientEntity = defineEntity({
  name: 'AuthnOAuthClient',
  tableName: 'authn_oauth_clients',
  properties: {
    id: p.uuid().primary(),
    name: p.string().length(256),
    description: p.text().nullable(),
    allowedScopes: p.text().fieldName('allowed_scopes'),
    isActive: p.boolean().fieldName('is_active'),
    secretHash: p.string().length(255).fieldName('secret_hash').nullable(),
    redirectUris: p.text().fieldName('redirect_uris'),
    grantTypes: p.text().fieldName('grant_types'),
    isPublic: p.boolean().fieldName('is_public'),
    postLogoutRedirectUris: p.text().fieldName('post_logout_redirect_uris'),
    isFirstParty: p.boolean().fieldName('is_first_party').default(false),
    // migration 0013 (issue 34 §6): OIDC Back-Channel / Front-Channel Logout 1.0 client metadata
    backchannelLogoutUri: p.text().fieldName('backchannel_logout_uri').nullable(),
    backchannelLogoutSessionRequired: p.boolean().fieldName('backchannel_logout_session_required').default(false),
    frontchannelLogoutUri: p.text().fieldName('frontchannel_logout_uri').nullable(),
    frontchannelLogoutSessionRequired: p.boolean().fieldName('frontchannel_logout_session_required').default(false),
    // migration 0014 (issue 34 §4): RFC 9126 §6
    requirePushedAuthorizationRequests: p.boolean().fieldName('require_pushed_authorization_requests').default(false),
    registrationTokenHash: p.string().length(255).fieldName('registration_token_hash').nullable(),
    registeredIp: p.string().length(64).fieldName('registered_ip').nullable(),
    createdAt: p.bigint('number').fieldName('created_at'),
    updatedAt: p.bigint('number').fieldName('updated_at'),
  },
});

export const TrustedIssuerEntity = defineEntity({
  name: 'AuthnTrustedIssuer',
  tableName: 'authn_trusted_issuers',
  properties: {
    id: p.uuid().primary(),
    serviceAccountId: p.uuid().fieldName('service_account_id'),
    name: p.string().length(256),
    issuerUrl: p.string().length(512).fieldName('issuer_url'),
    keySourceType: p.string().length(32).fieldName('key_source_type'),
    jwksUrl: p.text().fieldName('jwks_url').nullable(),
    expectedAud: p.string().length(512).fieldName('expected_aud'),
    subjectClaim: p.string().length(128).fieldName('subject_claim'),
    allowedSubjects: p.text().fieldName('allowed_subjects').nullable(),
    issuerType: p.string().length(32).fieldName('issuer_type'),
    isActive: p.boolean().fieldName('is_active'),
    spiffeRefreshHintSeconds: p.bigint('number').fieldName('spiffe_refresh_hint_seconds').nullable(),
    enableTokenReview: p.boolean().fieldName('enable_token_review'),
    kubernetesApiServerUrl: p.text().fieldName('kubernetes_api_server_url').nullable(),
    createdAt: p.bigint('number').fieldName('created_at'),
    updatedAt: p.bigint('number').fieldName('updated_at'),
  },
});

export const AuthorizationCodeEntity = defineEntity({
  name: 'AuthnAuthorizationCode',
  tableName: 'authn_authorization_codes',
  properties: {
    codeHash: p.string().length(64).fieldName('code_hash').primary(),
    clientId: p.string().length(255).fieldName('client_id'),
    redirectUri: p.text().fieldName('redirect_uri'),
    codeChallenge: p.string().length(128).fieldName('code_challenge').nullable(),
    userId: p.uuid().fieldName('user_id'),
    sessionId: p.uuid().fieldName('session_id'),
    grant: p.text().fieldName('grant_json'),
    expiresAt: p.bigint('number').fieldName('expires_at'),
    consumedAt: p.bigint('number').fieldName('consumed_at').nullable(),
    issuedSessionId: p.uuid().fieldName('issued_session_id').nullable(),
  },
});

export const UsedJtiEntity = defineEntity({
  name: 'AuthnUsedJti',
  tableName: 'authn_used_jtis',
  properties: {
    key: p.string().length(255).fieldName('jti_key').primary(),
    expiresAt: p.bigint('number').fieldName('expires_at'),
  },
});

// ---- issue 34: consent (migration 0009) ----

export const ConsentGrantEntity = defineEntity({
  name: 'AuthnConsentGrant',
  tableName: 'authn_consent_grants',
  indexes: [{ properties: ['userId', 'createdAt'], name: 'authn_consent_grants_user_idx' }, { properties: ['clientId'], name: 'authn_consent_grants_client_idx' }],
  properties: {
    id: p.uuid().primary(),
    userId: p.uuid().fieldName('user_id'),
    clientId: p.string().length(255).fieldName('client_id'),
    scope: p.text(),
    createdAt: p.bigint('number').fieldName('created_at'),
    updatedAt: p.bigint('number').fieldName('updated_at'),
  },
});

export const ConsentRequestEntity = defineEntity({
  name: 'AuthnConsentRequest',
  tableName: 'authn_consent_requests',
  indexes: [{ properties: ['expiresAt'], name: 'authn_consent_requests_expires_at_idx' }],
  properties: {
    ticketHash: p.string().length(64).fieldName('ticket_hash').primary(),
    sessionId: p.uuid().fieldName('session_id'),
    userId: p.uuid().fieldName('user_id'),
    clientId: p.string().length(255).fieldName('client_id'),
    params: p.text().fieldName('params_json'),
    expiresAt: p.bigint('number').fieldName('expires_at'),
    consumedAt: p.bigint('number').fieldName('consumed_at').nullable(),
  },
});

// ---- issue 34 §5: RFC 8628 device authorization (migration 0012) ----

export const DeviceAuthorizationEntity = defineEntity({
  name: 'AuthnDeviceAuthorization',
  tableName: 'authn_device_authorizations',
  indexes: [
    { properties: ['userCodeHash'], name: 'authn_device_authorizations_user_code_idx' },
    { properties: ['expiresAt'], name: 'authn_device_authorizations_expires_at_idx' },
  ],
  properties: {
    deviceCodeHash: p.string().length(64).fieldName('device_code_hash').primary(),
    userCodeHash: p.string().length(64).fieldName('user_code_hash'),
    clientId: p.string().length(255).fieldName('client_id'),
    scope: p.text(),
    status: p.string().length(16),
    userId: p.uuid().fieldName('user_id').nullable(),
    grant: p.text().fieldName('grant_json').nullable(),
    interval: p.bigint('number').fieldName('poll_interval'),
    lastPolledAt: p.bigint('number').fieldName('last_polled_at').nullable(),
    expiresAt: p.bigint('number').fieldName('expires_at'),
    consumedAt: p.bigint('number').fieldName('consumed_at').nullable(),
  },
});

// ---- issue 20: federated login (migration 0008) ----

export const IdentityLinkEntity = defineEntity({
  name: 'AuthnIdentityLink',
  tableName: 'authn_identity_links',
  // MongoDB builds its indexes from here (ensureIndexes); SQL databases from migration 0008
  uniques: [{ properties: ['issuer', 'subject'], name: 'authn_identity_links_issuer_subject_idx' }],
  indexes: [{ properties: ['userId'], name: 'authn_identity_links_user_id_idx' }],
  properties: {
    id: p.uuid().primary(),
    /** provider name, OIDC issuer URL or SAML IdP entity ID */
    issuer: p.string().length(512),
    /** the upstream's stable user id */
    subject: p.string().length(255),
    userId: p.uuid().fieldName('user_id'),
    method: p.string().length(32),
    createdAt: p.bigint('number').fieldName('created_at'),
  },
});

// ---- issue 34 §6: the relying parties of each sign-on session (migration 0013) ----

export const SessionClientEntity = defineEntity({
  name: 'AuthnSessionClient',
  tableName: 'authn_session_clients',
  indexes: [
    { properties: ['sid'], name: 'authn_session_clients_sid_idx' },
    { properties: ['userId'], name: 'authn_session_clients_user_idx' },
    { properties: ['expiresAt'], name: 'authn_session_clients_expires_at_idx' },
  ],
  properties: {
    /** the grant's own session */
    sessionId: p.uuid().fieldName('session_id').primary(),
    sid: p.string().length(64),
    userId: p.uuid().fieldName('user_id'),
    clientId: p.string().length(255).fieldName('client_id'),
    expiresAt: p.bigint('number').fieldName('expires_at'),
  },
});
