/**
 * @module orgs/samlidp/storage/schema
 * The SAML identity-provider tables of the orgs database (behaviour.md §5.9):
 * `orgs_saml_service_providers` and `orgs_saml_idp_keys`, and (issue 31, Single Logout)
 * `orgs_saml_idp_participants` and `orgs_saml_idp_logouts`, as MikroORM entities and their migrations,
 * appended to the orgs service's schema. All have an `org_id` column and are registered as
 * org-scoped, so `delete_organization` removes them in its transaction (§6.1).
 */
import { defineEntity, p, type EntitySchema } from '@mikro-orm/core';
import type { MigrationDefinition } from '@gatehouse/db';

export const SamlServiceProviderEntity = defineEntity({
  name: 'OrgsSamlServiceProvider',
  tableName: 'orgs_saml_service_providers',
  properties: {
    id: p.uuid().primary(),
    orgId: p.string().length(64).fieldName('org_id'),
    name: p.string().length(255),
    entityId: p.string().length(1024).fieldName('entity_id'),
    /** SHA-256 hex of entity_id: the per-org unique key (entity ids may be longer than an index allows) */
    entityKey: p.string().length(64).fieldName('entity_key'),
    acsUrl: p.text().fieldName('acs_url'),
    spCertPem: p.text().fieldName('sp_cert_pem').nullable(),
    /** issue 31: the SP's encryption certificate (PEM); assertions to it are encrypted */
    spEncryptionCertPem: p.text().fieldName('sp_encryption_cert_pem').nullable(),
    /** issue 31: the SP's SingleLogoutService URL (the IdP's LogoutResponse goes there) */
    sloUrl: p.text().fieldName('slo_url').nullable(),
    nameIdFormat: p.string().length(255).fieldName('name_id_format'),
    /** JSON object of strings, as given */
    mappedAttributes: p.text().fieldName('mapped_attributes').nullable(),
    allowIdpInitiated: p.boolean().fieldName('allow_idp_initiated'),
    isActive: p.boolean().fieldName('is_active'),
    createdAt: p.bigint('number').fieldName('created_at'),
    updatedAt: p.bigint('number').fieldName('updated_at'),
  },
});

export const SamlIdpKeyEntity = defineEntity({
  name: 'OrgsSamlIdpKey',
  tableName: 'orgs_saml_idp_keys',
  properties: {
    id: p.uuid().primary(),
    orgId: p.string().length(64).fieldName('org_id'),
    certPem: p.text().fieldName('cert_pem'),
    /** the PKCS#8 PEM private key, AES-256-GCM sealed under --encryption-key (AAD: the key id) */
    privateKeySealed: p.text().fieldName('private_key_sealed'),
    algorithm: p.string().length(16),
    /** `pending` (issue 31: published, not yet signing), `current`, `active` or `retired` */
    status: p.string().length(16),
    createdAt: p.bigint('number').fieldName('created_at'),
    updatedAt: p.bigint('number').fieldName('updated_at'),
  },
});

/** issue 31: the SPs an assertion went to per browser session (SAML Profiles §4.4.1 session participants). */
export const SamlIdpParticipantEntity = defineEntity({
  name: 'OrgsSamlIdpParticipant',
  tableName: 'orgs_saml_idp_participants',
  properties: {
    /** SHA-256 hex of `<org id>:<session id>:<sp id>`: one row per session and SP */
    id: p.string().length(64).primary(),
    orgId: p.string().length(64).fieldName('org_id'),
    sessionId: p.string().length(64).fieldName('session_id'),
    spId: p.string().length(64).fieldName('sp_id'),
    nameId: p.text().fieldName('name_id'),
    nameIdFormat: p.string().length(255).fieldName('name_id_format'),
    sessionIndex: p.string().length(64).fieldName('session_index'),
    issuedAt: p.bigint('number').fieldName('issued_at'),
    /** the session's expiry (Unix s) */
    expiresAt: p.bigint('number').fieldName('expires_at'),
  },
});

/** issue 31: a Single Logout waiting for an SP's LogoutResponse (keyed by the sent LogoutRequest's ID). */
export const SamlIdpLogoutEntity = defineEntity({
  name: 'OrgsSamlIdpLogout',
  tableName: 'orgs_saml_idp_logouts',
  properties: {
    id: p.string().length(64).primary(),
    orgId: p.string().length(64).fieldName('org_id'),
    data: p.text(),
    expiresAt: p.bigint('number').fieldName('expires_at'),
  },
});

/** The SAML IdP entities, for the orgs ServiceSchema. */
export const samlIdpEntities = [SamlServiceProviderEntity, SamlIdpKeyEntity, SamlIdpParticipantEntity, SamlIdpLogoutEntity] as unknown as EntitySchema<any, any>[];

/** issue 20: service providers and IdP signing keys. */
export const samlIdpMigration: MigrationDefinition = {
  name: '0120_orgs_saml_idp',
  async up({ ddl }) {
    await ddl.createTable('orgs_saml_service_providers', [
      { name: 'id', type: 'uuid', primary: true },
      { name: 'org_id', type: 'string', length: 64 },
      { name: 'name', type: 'string', length: 255 },
      { name: 'entity_id', type: 'string', length: 1024 },
      { name: 'entity_key', type: 'string', length: 64 },
      { name: 'acs_url', type: 'text' },
      { name: 'sp_cert_pem', type: 'text', nullable: true },
      { name: 'name_id_format', type: 'string', length: 255 },
      { name: 'mapped_attributes', type: 'text', nullable: true },
      { name: 'allow_idp_initiated', type: 'boolean' },
      { name: 'is_active', type: 'boolean' },
      { name: 'created_at', type: 'bigint' },
      { name: 'updated_at', type: 'bigint' },
    ]);
    await ddl.createIndex('orgs_saml_service_providers', 'orgs_saml_sps_entity_idx', ['org_id', 'entity_key'], { unique: true });
    await ddl.createIndex('orgs_saml_service_providers', 'orgs_saml_sps_list_idx', ['org_id', 'created_at']);
    await ddl.createTable('orgs_saml_idp_keys', [
      { name: 'id', type: 'uuid', primary: true },
      { name: 'org_id', type: 'string', length: 64 },
      { name: 'cert_pem', type: 'text' },
      { name: 'private_key_sealed', type: 'text' },
      { name: 'algorithm', type: 'string', length: 16 },
      { name: 'status', type: 'string', length: 16 },
      { name: 'created_at', type: 'bigint' },
      { name: 'updated_at', type: 'bigint' },
    ]);
    await ddl.createIndex('orgs_saml_idp_keys', 'orgs_saml_idp_keys_org_idx', ['org_id', 'status']);
  },
};

/**
 * Issue 31: an SP's encryption certificate and SingleLogoutService URL (both nullable, so the rows of
 * 0120 stay valid). Key status `pending` needs no DDL (a string column).
 */
export const samlIdpSpSettingsMigration: MigrationDefinition = {
  name: '0121_orgs_saml_idp_sp_settings',
  async up({ ddl }) {
    await ddl.addColumn('orgs_saml_service_providers', { name: 'sp_encryption_cert_pem', type: 'text', nullable: true });
    await ddl.addColumn('orgs_saml_service_providers', { name: 'slo_url', type: 'text', nullable: true });
  },
};

/**
 * Issue 31, IdP-sent Single Logout: the session participants (one row per browser session and SP, until
 * the session's expiry) and the logouts waiting for an SP's LogoutResponse; both swept when expired.
 */
export const samlIdpSingleLogoutMigration: MigrationDefinition = {
  name: '0122_orgs_saml_idp_single_logout',
  async up({ ddl }) {
    await ddl.createTable('orgs_saml_idp_participants', [
      { name: 'id', type: 'string', length: 64, primary: true },
      { name: 'org_id', type: 'string', length: 64 },
      { name: 'session_id', type: 'string', length: 64 },
      { name: 'sp_id', type: 'string', length: 64 },
      { name: 'name_id', type: 'text' },
      { name: 'name_id_format', type: 'string', length: 255 },
      { name: 'session_index', type: 'string', length: 64 },
      { name: 'issued_at', type: 'bigint' },
      { name: 'expires_at', type: 'bigint' },
    ]);
    await ddl.createIndex('orgs_saml_idp_participants', 'orgs_saml_idp_participants_session_idx', ['org_id', 'session_id']);
    await ddl.createIndex('orgs_saml_idp_participants', 'orgs_saml_idp_participants_expires_idx', ['expires_at']);
    await ddl.createTable('orgs_saml_idp_logouts', [
      { name: 'id', type: 'string', length: 64, primary: true },
      { name: 'org_id', type: 'string', length: 64 },
      { name: 'data', type: 'text' },
      { name: 'expires_at', type: 'bigint' },
    ]);
    await ddl.createIndex('orgs_saml_idp_logouts', 'orgs_saml_idp_logouts_expires_idx', ['expires_at']);
  },
};

/** The SAML IdP migrations in order, for the orgs ServiceSchema and the tests' scratch databases. */
export const samlIdpMigrations: MigrationDefinition[] = [samlIdpMigration, samlIdpSpSettingsMigration, samlIdpSingleLogoutMigration];
