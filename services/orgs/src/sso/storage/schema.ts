/**
 * @module orgs/sso/storage/schema
 * The SSO tables of the orgs database (behaviour.md §6.3): `orgs_oidc_connections`,
 * `orgs_saml_connections` (one per org each, unique issuer / IdP entity id), `orgs_sso_pending` (logins
 * in flight) and `orgs_saml_assertions` (consumed assertion ids, the replay cache), as MikroORM
 * entities and one migration appended to the orgs schema. Every table has `org_id`: deleting an org
 * deletes its rows (§6.1).
 */
import { defineEntity, p, type EntitySchema } from '@mikro-orm/core';
import type { MigrationDefinition } from '@gatehouse/db';

export const OidcConnectionEntity = defineEntity({
  name: 'OrgsOidcConnection',
  tableName: 'orgs_oidc_connections',
  properties: {
    id: p.uuid().primary(),
    orgId: p.string().length(64).fieldName('org_id'),
    name: p.string().length(255),
    issuerUrl: p.string().length(2048).fieldName('issuer_url'),
    /** sha-256 hex of the issuer URL: the unique key (URLs are too long for a MySQL index) */
    issuerKey: p.string().length(64).fieldName('issuer_key'),
    clientId: p.string().length(512).fieldName('client_id'),
    clientSecretSealed: p.text().fieldName('client_secret_sealed'),
    scopes: p.string().length(1024).nullable(),
    redirectUri: p.string().length(2048).fieldName('redirect_uri').nullable(),
    isActive: p.boolean().fieldName('is_active'),
    createdAt: p.bigint('number').fieldName('created_at'),
    updatedAt: p.bigint('number').fieldName('updated_at'),
  },
});

export const SamlConnectionEntity = defineEntity({
  name: 'OrgsSamlConnection',
  tableName: 'orgs_saml_connections',
  properties: {
    id: p.uuid().primary(),
    orgId: p.string().length(64).fieldName('org_id'),
    name: p.string().length(255),
    idpEntityId: p.string().length(2048).fieldName('idp_entity_id'),
    /** sha-256 hex of the IdP entity id: the unique key */
    entityKey: p.string().length(64).fieldName('entity_key'),
    idpSsoUrl: p.string().length(2048).fieldName('idp_sso_url'),
    idpCertificate: p.text().fieldName('idp_certificate'),
    spEntityId: p.string().length(2048).fieldName('sp_entity_id').nullable(),
    acsUrl: p.string().length(2048).fieldName('acs_url').nullable(),
    attributeMapping: p.text().fieldName('attribute_mapping').nullable(),
    allowIdpInitiated: p.boolean().fieldName('allow_idp_initiated'),
    isActive: p.boolean().fieldName('is_active'),
    createdAt: p.bigint('number').fieldName('created_at'),
    updatedAt: p.bigint('number').fieldName('updated_at'),
    /** `HTTP-POST`, or null for HTTP-Redirect (issue 31 §1) */
    idpSsoBinding: p.string().length(16).fieldName('idp_sso_binding').nullable(),
    /** the IdP's SingleLogoutService URL (issue 31 §1) */
    idpSloUrl: p.string().length(2048).fieldName('idp_slo_url').nullable(),
    /** our SP certificate (PEM) of this connection (issue 31 §1) */
    spCertificate: p.text().fieldName('sp_certificate').nullable(),
    /** its private key, AES-256-GCM sealed (AAD `org_saml_connection:<id>`) */
    spPrivateKeySealed: p.text().fieldName('sp_private_key_sealed').nullable(),
    /** a staged SP key pair (rotation in place), sealed as the current one */
    spNextCertificate: p.text().fieldName('sp_next_certificate').nullable(),
    spNextPrivateKeySealed: p.text().fieldName('sp_next_private_key_sealed').nullable(),
    /** the SP key pair the last activation replaced, until retired */
    spPreviousCertificate: p.text().fieldName('sp_previous_certificate').nullable(),
    spPreviousPrivateKeySealed: p.text().fieldName('sp_previous_private_key_sealed').nullable(),
  },
});

export const SsoPendingEntity = defineEntity({
  name: 'OrgsSsoPending',
  tableName: 'orgs_sso_pending',
  properties: {
    id: p.string().length(64).primary(),
    orgId: p.string().length(64).fieldName('org_id'),
    kind: p.string().length(8),
    data: p.text(),
    expiresAt: p.bigint('number').fieldName('expires_at'),
  },
});

export const SamlAssertionEntity = defineEntity({
  name: 'OrgsSamlAssertion',
  tableName: 'orgs_saml_assertions',
  properties: {
    /** sha-256 hex of `<org id>:<assertion ID>` */
    id: p.string().length(64).primary(),
    orgId: p.string().length(64).fieldName('org_id'),
    expiresAt: p.bigint('number').fieldName('expires_at'),
  },
});

/** The SSO entities, for the orgs ServiceSchema. */
export const ssoEntities = [OidcConnectionEntity, SamlConnectionEntity, SsoPendingEntity, SamlAssertionEntity] as unknown as EntitySchema<any, any>[];

/** issue 20: SSO connections, pending logins and the SAML replay cache. */
export const ssoMigration: MigrationDefinition = {
  name: '0201_orgs_sso',
  async up({ ddl }) {
    await ddl.createTable('orgs_oidc_connections', [
      { name: 'id', type: 'uuid', primary: true },
      { name: 'org_id', type: 'string', length: 64 },
      { name: 'name', type: 'string', length: 255 },
      { name: 'issuer_url', type: 'string', length: 2048 },
      { name: 'issuer_key', type: 'string', length: 64 },
      { name: 'client_id', type: 'string', length: 512 },
      { name: 'client_secret_sealed', type: 'text' },
      { name: 'scopes', type: 'string', length: 1024, nullable: true },
      { name: 'redirect_uri', type: 'string', length: 2048, nullable: true },
      { name: 'is_active', type: 'boolean' },
      { name: 'created_at', type: 'bigint' },
      { name: 'updated_at', type: 'bigint' },
    ]);
    await ddl.createIndex('orgs_oidc_connections', 'orgs_oidc_connections_org_idx', ['org_id'], { unique: true });
    await ddl.createIndex('orgs_oidc_connections', 'orgs_oidc_connections_issuer_idx', ['issuer_key'], { unique: true });
    await ddl.createTable('orgs_saml_connections', [
      { name: 'id', type: 'uuid', primary: true },
      { name: 'org_id', type: 'string', length: 64 },
      { name: 'name', type: 'string', length: 255 },
      { name: 'idp_entity_id', type: 'string', length: 2048 },
      { name: 'entity_key', type: 'string', length: 64 },
      { name: 'idp_sso_url', type: 'string', length: 2048 },
      { name: 'idp_certificate', type: 'text' },
      { name: 'sp_entity_id', type: 'string', length: 2048, nullable: true },
      { name: 'acs_url', type: 'string', length: 2048, nullable: true },
      { name: 'attribute_mapping', type: 'text', nullable: true },
      { name: 'allow_idp_initiated', type: 'boolean' },
      { name: 'is_active', type: 'boolean' },
      { name: 'created_at', type: 'bigint' },
      { name: 'updated_at', type: 'bigint' },
    ]);
    await ddl.createIndex('orgs_saml_connections', 'orgs_saml_connections_org_idx', ['org_id'], { unique: true });
    await ddl.createIndex('orgs_saml_connections', 'orgs_saml_connections_entity_idx', ['entity_key'], { unique: true });
    await ddl.createTable('orgs_sso_pending', [
      { name: 'id', type: 'string', length: 64, primary: true },
      { name: 'org_id', type: 'string', length: 64 },
      { name: 'kind', type: 'string', length: 8 },
      { name: 'data', type: 'text' },
      { name: 'expires_at', type: 'bigint' },
    ]);
    await ddl.createIndex('orgs_sso_pending', 'orgs_sso_pending_expires_idx', ['expires_at']);
    await ddl.createTable('orgs_saml_assertions', [
      { name: 'id', type: 'string', length: 64, primary: true },
      { name: 'org_id', type: 'string', length: 64 },
      { name: 'expires_at', type: 'bigint' },
    ]);
    await ddl.createIndex('orgs_saml_assertions', 'orgs_saml_assertions_expires_idx', ['expires_at']);
  },
};

/** issue 31 §1: each SAML connection's SP key pair (signed AuthnRequests, encrypted assertions) and AuthnRequest binding. */
export const samlSpKeyMigration: MigrationDefinition = {
  name: '0202_orgs_saml_sp_keys',
  async up({ ddl }) {
    await ddl.addColumn('orgs_saml_connections', { name: 'idp_sso_binding', type: 'string', length: 16, nullable: true });
    await ddl.addColumn('orgs_saml_connections', { name: 'idp_slo_url', type: 'string', length: 2048, nullable: true });
    await ddl.addColumn('orgs_saml_connections', { name: 'sp_certificate', type: 'text', nullable: true });
    await ddl.addColumn('orgs_saml_connections', { name: 'sp_private_key_sealed', type: 'text', nullable: true });
  },
};

/**
 * issue 31: an SP key pair rotated in place: a staged (next) pair published beside the current one, and the
 * pair an activation replaced (previous), both decrypting until retired.
 */
export const samlSpKeyRotationMigration: MigrationDefinition = {
  name: '0203_orgs_saml_sp_key_rotation',
  async up({ ddl }) {
    for (const name of ['sp_next_certificate', 'sp_next_private_key_sealed', 'sp_previous_certificate', 'sp_previous_private_key_sealed']) {
      await ddl.addColumn('orgs_saml_connections', { name, type: 'text', nullable: true });
    }
  },
};
