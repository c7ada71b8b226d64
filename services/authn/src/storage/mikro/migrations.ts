/**
 * @module @gatehouse/authn/storage/mikro/migrations
 * authn's migrations (libs/db contract: `{ name, up(ctx) }`, applied once, never edited).
 * Email and phone are indexed but not unique: uniqueness is the application's (spec §2, §9).
 */
import { attemptSlotsTable, type MigrationDefinition } from '@gatehouse/db';

export const authnMigrations: MigrationDefinition[] = [
  {
    name: '0001_authn_users',
    async up({ ddl }) {
      await ddl.createTable('authn_users', [
        { name: 'id', type: 'uuid', primary: true },
        { name: 'email', type: 'string', length: 320, nullable: true },
        { name: 'email_verified_at', type: 'bigint', nullable: true },
        { name: 'password_hash', type: 'text', nullable: true },
        { name: 'signup_methods', type: 'string' },
        { name: 'given_name', type: 'string', length: 256, nullable: true },
        { name: 'family_name', type: 'string', length: 256, nullable: true },
        { name: 'middle_name', type: 'string', length: 256, nullable: true },
        { name: 'nickname', type: 'string', length: 256, nullable: true },
        { name: 'gender', type: 'string', length: 256, nullable: true },
        { name: 'birthdate', type: 'string', length: 256, nullable: true },
        { name: 'picture', type: 'text', nullable: true },
        { name: 'phone_number', type: 'string', length: 64, nullable: true },
        { name: 'phone_number_verified_at', type: 'bigint', nullable: true },
        { name: 'roles', type: 'text' },
        { name: 'created_at', type: 'bigint' },
        { name: 'updated_at', type: 'bigint' },
        { name: 'revoked_timestamp', type: 'bigint', nullable: true },
        { name: 'deactivated_at', type: 'bigint', nullable: true },
        { name: 'is_multi_factor_auth_enabled', type: 'boolean', nullable: true },
        { name: 'has_skipped_mfa_setup_at', type: 'bigint', nullable: true },
        { name: 'mfa_locked_at', type: 'bigint', nullable: true },
        { name: 'app_data', type: 'text', nullable: true },
      ]);
      await ddl.createIndex('authn_users', 'authn_users_email_idx', ['email']);
      await ddl.createIndex('authn_users', 'authn_users_phone_number_idx', ['phone_number']);
      await ddl.createIndex('authn_users', 'authn_users_created_at_idx', ['created_at', 'id']);
    },
  },
  {
    name: '0002_authn_sessions',
    async up({ ddl }) {
      await ddl.createTable('authn_sessions', [
        { name: 'id', type: 'uuid', primary: true },
        { name: 'user_id', type: 'uuid' },
        { name: 'handle_hash', type: 'string', length: 64 },
        { name: 'login_method', type: 'string', length: 64 },
        { name: 'roles', type: 'text' },
        { name: 'scope', type: 'text' },
        { name: 'auth_time', type: 'bigint' },
        { name: 'expires_at', type: 'bigint' },
        { name: 'refresh_token_id', type: 'string', length: 64, nullable: true },
        { name: 'created_at', type: 'bigint' },
      ]);
      await ddl.createIndex('authn_sessions', 'authn_sessions_handle_hash_idx', ['handle_hash']);
      await ddl.createIndex('authn_sessions', 'authn_sessions_user_id_idx', ['user_id']);
      await ddl.createIndex('authn_sessions', 'authn_sessions_expires_at_idx', ['expires_at']);
    },
  },
  {
    name: '0003_authn_login_failures',
    async up({ ddl }) {
      await ddl.createTable('authn_login_failures', [
        { name: 'seq', type: 'serial' },
        { name: 'lockout_key', type: 'string', length: 64 },
        { name: 'failed_at', type: 'bigint' },
      ]);
      await ddl.createIndex('authn_login_failures', 'authn_login_failures_key_idx', ['lockout_key', 'failed_at']);
    },
  },
  {
    name: '0004_authn_verification_requests',
    async up({ ddl }) {
      await ddl.createTable('authn_verification_requests', [
        { name: 'id', type: 'uuid', primary: true },
        { name: 'identifier', type: 'string', length: 32 },
        { name: 'email', type: 'string', length: 320 },
        { name: 'token_hash', type: 'string', length: 64 },
        { name: 'expires_at', type: 'bigint' },
        { name: 'redirect_uri', type: 'text', nullable: true },
        { name: 'state', type: 'text', nullable: true },
        { name: 'scope', type: 'text', nullable: true },
        { name: 'roles', type: 'text', nullable: true },
        { name: 'user_id', type: 'uuid', nullable: true },
        { name: 'consumed_at', type: 'bigint', nullable: true },
        { name: 'created_at', type: 'bigint' },
        { name: 'updated_at', type: 'bigint' },
      ]);
      await ddl.createIndex('authn_verification_requests', 'authn_verification_requests_token_hash_idx', ['token_hash'], { unique: true });
      await ddl.createIndex('authn_verification_requests', 'authn_verification_requests_email_idx', ['email', 'identifier', 'created_at']);
      await ddl.createIndex('authn_verification_requests', 'authn_verification_requests_created_at_idx', ['created_at', 'id']);
    },
  },
  {
    // issue 16: the second factor's `amr` survives session refresh (behaviour.md §2.1)
    name: '0005_authn_session_amr',
    async up({ ddl }) {
      await ddl.addColumn('authn_sessions', { name: 'amr', type: 'text', nullable: true });
    },
  },
  {
    // issue 18: the OAuth 2.0 / OpenID Provider (behaviour.md §2.2, §5.8; RFC 6749 §4.1; RFC 7523 §3)
    name: '0006_authn_oauth',
    async up({ ddl }) {
      await ddl.addColumn('authn_sessions', { name: 'previous_refresh_token_id', type: 'string', length: 64, nullable: true });
      await ddl.addColumn('authn_sessions', { name: 'refresh_rotated_at', type: 'bigint', nullable: true });
      await ddl.addColumn('authn_sessions', { name: 'client_id', type: 'string', length: 255, nullable: true });
      await ddl.createTable('authn_oauth_clients', [
        { name: 'id', type: 'uuid', primary: true },
        { name: 'name', type: 'string', length: 256 },
        { name: 'description', type: 'text', nullable: true },
        { name: 'allowed_scopes', type: 'text' },
        { name: 'is_active', type: 'boolean' },
        { name: 'secret_hash', type: 'string', length: 255, nullable: true },
        { name: 'redirect_uris', type: 'text' },
        { name: 'grant_types', type: 'text' },
        { name: 'is_public', type: 'boolean' },
        { name: 'post_logout_redirect_uris', type: 'text' },
        { name: 'created_at', type: 'bigint' },
        { name: 'updated_at', type: 'bigint' },
      ]);
      await ddl.createIndex('authn_oauth_clients', 'authn_oauth_clients_created_at_idx', ['created_at', 'id']);
      await ddl.createTable('authn_trusted_issuers', [
        { name: 'id', type: 'uuid', primary: true },
        { name: 'service_account_id', type: 'uuid' },
        { name: 'name', type: 'string', length: 256 },
        { name: 'issuer_url', type: 'string', length: 512 },
        { name: 'key_source_type', type: 'string', length: 32 },
        { name: 'jwks_url', type: 'text', nullable: true },
        { name: 'expected_aud', type: 'string', length: 512 },
        { name: 'subject_claim', type: 'string', length: 128 },
        { name: 'allowed_subjects', type: 'text', nullable: true },
        { name: 'issuer_type', type: 'string', length: 32 },
        { name: 'is_active', type: 'boolean' },
        { name: 'spiffe_refresh_hint_seconds', type: 'bigint', nullable: true },
        { name: 'enable_token_review', type: 'boolean' },
        { name: 'kubernetes_api_server_url', type: 'text', nullable: true },
        { name: 'created_at', type: 'bigint' },
        { name: 'updated_at', type: 'bigint' },
      ]);
      await ddl.createIndex('authn_trusted_issuers', 'authn_trusted_issuers_issuer_url_idx', ['issuer_url'], { unique: true });
      await ddl.createIndex('authn_trusted_issuers', 'authn_trusted_issuers_sa_idx', ['service_account_id', 'created_at']);
      await ddl.createTable('authn_authorization_codes', [
        { name: 'code_hash', type: 'string', length: 64, primary: true },
        { name: 'client_id', type: 'string', length: 255 },
        { name: 'redirect_uri', type: 'text' },
        { name: 'code_challenge', type: 'string', length: 128, nullable: true },
        { name: 'user_id', type: 'uuid' },
        { name: 'session_id', type: 'uuid' },
        { name: 'grant_json', type: 'text' },
        { name: 'expires_at', type: 'bigint' },
        { name: 'consumed_at', type: 'bigint', nullable: true },
        { name: 'issued_session_id', type: 'uuid', nullable: true },
      ]);
      await ddl.createTable('authn_used_jtis', [
        { name: 'jti_key', type: 'string', length: 255, primary: true },
        { name: 'expires_at', type: 'bigint' },
      ]);
      await ddl.createIndex('authn_used_jtis', 'authn_used_jtis_expires_at_idx', ['expires_at']);
    },
  },
  {
    // issue 23: the expiry columns the retention sweeper filters on (storage/mikro/retention.ts)
    name: '0007_authn_retention_indexes',
    async up({ ddl }) {
      await ddl.createIndex('authn_login_failures', 'authn_login_failures_failed_at_idx', ['failed_at']);
      await ddl.createIndex('authn_verification_requests', 'authn_verification_requests_expires_at_idx', ['expires_at']);
      await ddl.createIndex('authn_authorization_codes', 'authn_authorization_codes_expires_at_idx', ['expires_at']);
    },
  },
  {
    // issue 20: upstream identities (social, org OIDC, SAML) linked to users; deleted with the user
    name: '0008_authn_identity_links',
    async up({ ddl }) {
      await ddl.createTable('authn_identity_links', [
        { name: 'id', type: 'uuid', primary: true },
        { name: 'issuer', type: 'string', length: 512 },
        { name: 'subject', type: 'string', length: 255 },
        { name: 'user_id', type: 'uuid' },
        { name: 'method', type: 'string', length: 32 },
        { name: 'created_at', type: 'bigint' },
      ]);
      await ddl.createIndex('authn_identity_links', 'authn_identity_links_issuer_subject_idx', ['issuer', 'subject'], { unique: true });
      await ddl.createIndex('authn_identity_links', 'authn_identity_links_user_id_idx', ['user_id']);
    },
  },
  {
    // issue 30 §1: attempts are claimed before they are judged, in slots taken by conditional
    // writes; the row-per-failure table (a count then an insert) could be outrun by concurrent calls
    name: '0009_authn_attempt_slots',
    async up({ ddl }) {
      await attemptSlotsTable(ddl, 'authn');
      await ddl.dropTable('authn_login_failures');
    },
  },
  {
    // issue 34: first-party clients skip consent; remembered grants and the pending consent pages
    name: '0010_authn_consent',
    async up({ ddl }) {
      await ddl.addColumn('authn_oauth_clients', { name: 'is_first_party', type: 'boolean', default: false });
      await ddl.createTable('authn_consent_grants', [
        { name: 'id', type: 'uuid', primary: true },
        { name: 'user_id', type: 'uuid' },
        { name: 'client_id', type: 'string', length: 255 },
        { name: 'scope', type: 'text' },
        { name: 'created_at', type: 'bigint' },
        { name: 'updated_at', type: 'bigint' },
      ]);
      await ddl.createIndex('authn_consent_grants', 'authn_consent_grants_user_idx', ['user_id', 'created_at']);
      await ddl.createIndex('authn_consent_grants', 'authn_consent_grants_client_idx', ['client_id']);
      await ddl.createTable('authn_consent_requests', [
        { name: 'ticket_hash', type: 'string', length: 64, primary: true },
        { name: 'session_id', type: 'uuid' },
        { name: 'user_id', type: 'uuid' },
        { name: 'client_id', type: 'string', length: 255 },
        { name: 'params_json', type: 'text' },
        { name: 'expires_at', type: 'bigint' },
        { name: 'consumed_at', type: 'bigint', nullable: true },
      ]);
      await ddl.createIndex('authn_consent_requests', 'authn_consent_requests_expires_at_idx', ['expires_at']);
    },
  },
  {
    // issue 34: clients registered through RFC 7591 (their RFC 7592 token's MAC and where they came from)
    name: '0011_authn_client_registration',
    async up({ ddl }) {
      await ddl.addColumn('authn_oauth_clients', { name: 'registration_token_hash', type: 'string', length: 255, nullable: true });
      await ddl.addColumn('authn_oauth_clients', { name: 'registered_ip', type: 'string', length: 64, nullable: true });
      await ddl.createIndex('authn_oauth_clients', 'authn_oauth_clients_registered_ip_idx', ['registered_ip', 'created_at']);
    },
  },
  {
    // issue 34 §5: RFC 8628 device authorizations, from /oauth/device_authorization until the device
    // code is redeemed or expires; shared by every replica (the user answers on one, the device polls another)
    name: '0012_authn_device_authorizations',
    async up({ ddl }) {
      await ddl.createTable('authn_device_authorizations', [
        { name: 'device_code_hash', type: 'string', length: 64, primary: true },
        { name: 'user_code_hash', type: 'string', length: 64 },
        { name: 'client_id', type: 'string', length: 255 },
        { name: 'scope', type: 'text' },
        { name: 'status', type: 'string', length: 16 },
        { name: 'user_id', type: 'uuid', nullable: true },
        { name: 'grant_json', type: 'text', nullable: true },
        { name: 'poll_interval', type: 'bigint' },
        { name: 'last_polled_at', type: 'bigint', nullable: true },
        { name: 'expires_at', type: 'bigint' },
        { name: 'consumed_at', type: 'bigint', nullable: true },
      ]);
      await ddl.createIndex('authn_device_authorizations', 'authn_device_authorizations_user_code_idx', ['user_code_hash']);
      await ddl.createIndex('authn_device_authorizations', 'authn_device_authorizations_expires_at_idx', ['expires_at']);
    },
  },
  {
    // issue 34 §6: `sid` names the browser's sign-on session; the clients each one reached, and their
    // OIDC Back-Channel / Front-Channel Logout 1.0 metadata, so logout reaches them
    name: '0013_authn_logout',
    async up({ ddl }) {
      await ddl.addColumn('authn_sessions', { name: 'sid', type: 'string', length: 64, nullable: true });
      await ddl.addColumn('authn_oauth_clients', { name: 'backchannel_logout_uri', type: 'text', nullable: true });
      await ddl.addColumn('authn_oauth_clients', { name: 'backchannel_logout_session_required', type: 'boolean', default: false });
      await ddl.addColumn('authn_oauth_clients', { name: 'frontchannel_logout_uri', type: 'text', nullable: true });
      await ddl.addColumn('authn_oauth_clients', { name: 'frontchannel_logout_session_required', type: 'boolean', default: false });
      await ddl.createTable('authn_session_clients', [
        { name: 'session_id', type: 'uuid', primary: true },
        { name: 'sid', type: 'string', length: 64 },
        { name: 'user_id', type: 'uuid' },
        { name: 'client_id', type: 'string', length: 255 },
        { name: 'expires_at', type: 'bigint' },
      ]);
      await ddl.createIndex('authn_session_clients', 'authn_session_clients_sid_idx', ['sid']);
      await ddl.createIndex('authn_session_clients', 'authn_session_clients_user_idx', ['user_id']);
      await ddl.createIndex('authn_session_clients', 'authn_session_clients_expires_at_idx', ['expires_at']);
    },
  },
  {
    // issue 34 §4: RFC 9126 §6 per-client `require_pushed_authorization_requests`
    name: '0014_authn_client_require_par',
    async up({ ddl }) {
      await ddl.addColumn('authn_oauth_clients', { name: 'require_pushed_authorization_requests', type: 'boolean', default: false });
    },
  },
  {
    // issue 33: the user's session list shows the device that opened each session and its last use
    // (written at most once a minute, never per request)
    name: '0015_authn_session_device',
    async up({ ddl }) {
      await ddl.addColumn('authn_sessions', { name: 'user_agent', type: 'string', length: 512, nullable: true });
      await ddl.addColumn('authn_sessions', { name: 'ip_address', type: 'string', length: 64, nullable: true });
      await ddl.addColumn('authn_sessions', { name: 'last_used_at', type: 'bigint', nullable: true });
    },
  },
];
