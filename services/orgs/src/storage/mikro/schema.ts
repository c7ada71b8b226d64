/**
 * @module @gatehouse/orgs/storage/mikro/schema
 * The orgs service's tables (`orgs_organizations`, `orgs_members`, `orgs_domains`,
 * `orgs_domain_attempts`): MikroORM entities and the migration that creates them, as one libs/db
 * ServiceSchema. Later parts (SCIM, SSO) append their own migrations and entities to `orgsSchema`
 * and register their org-scoped tables with {@link registerOrgScopedTable}.
 */
import { defineEntity, p, type EntitySchema } from '@mikro-orm/core';
import type { MigrationDefinition, ServiceSchema } from '@gatehouse/db';

export const OrganizationEntity = defineEntity({
  name: 'OrgsOrganization',
  tableName: 'orgs_organizations',
  properties: {
    id: p.uuid().primary(),
    name: p.string().length(255),
    displayName: p.string().length(255).fieldName('display_name').nullable(),
    enabled: p.boolean(),
    createdAt: p.bigint('number').fieldName('created_at'),
    updatedAt: p.bigint('number').fieldName('updated_at'),
  },
});

export const MemberEntity = defineEntity({
  name: 'OrgsMember',
  tableName: 'orgs_members',
  properties: {
    id: p.uuid().primary(),
    orgId: p.uuid().fieldName('org_id'),
    userId: p.string().length(64).fieldName('user_id'),
    /** a JSON array of strings */
    roles: p.text(),
    /** roles include `service:org_admin`: the gate's indexed lookup (behaviour.md §5.1) */
    isOrgAdmin: p.boolean().fieldName('is_org_admin'),
    createdAt: p.bigint('number').fieldName('created_at'),
    updatedAt: p.bigint('number').fieldName('updated_at'),
  },
});

export const DomainEntity = defineEntity({
  name: 'OrgsDomain',
  tableName: 'orgs_domains',
  properties: {
    id: p.uuid().primary(),
    orgId: p.uuid().fieldName('org_id'),
    domain: p.string().length(253),
    /** the domain while verified, else null: its unique index makes the first verifier win (§6.2) */
    verifiedDomain: p.string().length(253).fieldName('verified_domain').nullable(),
    verifiedAt: p.bigint('number').fieldName('verified_at').nullable(),
    challengeToken: p.string().length(64).fieldName('challenge_token').nullable(),
    challengeExpiresAt: p.bigint('number').fieldName('challenge_expires_at').nullable(),
    createdAt: p.bigint('number').fieldName('created_at'),
    updatedAt: p.bigint('number').fieldName('updated_at'),
  },
});

export const DomainAttemptEntity = defineEntity({
  name: 'OrgsDomainAttempt',
  tableName: 'orgs_domain_attempts',
  properties: {
    id: p.uuid().primary(),
    orgId: p.uuid().fieldName('org_id'),
    kind: p.string().length(16),
    createdAt: p.bigint('number').fieldName('created_at'),
  },
});

/** issue 19: organizations, members, domains and the domain attempt counters. */
const organizationsMembersDomains: MigrationDefinition = {
  name: '0001_orgs_organizations_members_domains',
  async up({ ddl }) {
    await ddl.createTable('orgs_organizations', [
      { name: 'id', type: 'uuid', primary: true },
      { name: 'name', type: 'string', length: 255 },
      { name: 'display_name', type: 'string', length: 255, nullable: true },
      { name: 'enabled', type: 'boolean' },
      { name: 'created_at', type: 'bigint' },
      { name: 'updated_at', type: 'bigint' },
    ]);
    await ddl.createIndex('orgs_organizations', 'orgs_organizations_name_idx', ['name'], { unique: true });
    await ddl.createIndex('orgs_organizations', 'orgs_organizations_created_idx', ['created_at', 'id']);
    await ddl.createTable('orgs_members', [
      { name: 'id', type: 'uuid', primary: true },
      { name: 'org_id', type: 'uuid' },
      { name: 'user_id', type: 'string', length: 64 },
      { name: 'roles', type: 'text' },
      { name: 'is_org_admin', type: 'boolean' },
      { name: 'created_at', type: 'bigint' },
      { name: 'updated_at', type: 'bigint' },
    ]);
    await ddl.createIndex('orgs_members', 'orgs_members_org_user_idx', ['org_id', 'user_id'], { unique: true });
    await ddl.createIndex('orgs_members', 'orgs_members_user_idx', ['user_id', 'org_id']);
    await ddl.createIndex('orgs_members', 'orgs_members_created_idx', ['org_id', 'created_at', 'id']);
    await ddl.createTable('orgs_domains', [
      { name: 'id', type: 'uuid', primary: true },
      { name: 'org_id', type: 'uuid' },
      { name: 'domain', type: 'string', length: 253 },
      { name: 'verified_domain', type: 'string', length: 253, nullable: true },
      { name: 'verified_at', type: 'bigint', nullable: true },
      { name: 'challenge_token', type: 'string', length: 64, nullable: true },
      { name: 'challenge_expires_at', type: 'bigint', nullable: true },
      { name: 'created_at', type: 'bigint' },
      { name: 'updated_at', type: 'bigint' },
    ]);
    await ddl.createIndex('orgs_domains', 'orgs_domains_org_domain_idx', ['org_id', 'domain'], { unique: true });
    await ddl.createIndex('orgs_domains', 'orgs_domains_verified_idx', ['verified_domain'], { unique: true });
    await ddl.createIndex('orgs_domains', 'orgs_domains_domain_idx', ['domain']);
    await ddl.createTable('orgs_domain_attempts', [
      { name: 'id', type: 'uuid', primary: true },
      { name: 'org_id', type: 'uuid' },
      { name: 'kind', type: 'string', length: 16 },
      { name: 'created_at', type: 'bigint' },
    ]);
    await ddl.createIndex('orgs_domain_attempts', 'orgs_domain_attempts_org_idx', ['org_id', 'kind', 'created_at']);
  },
};

/** issue 23: the expiry columns the retention sweeper filters on (storage/mikro/retention.ts). */
const retentionIndexes: MigrationDefinition = {
  name: '0002_orgs_retention_indexes',
  async up({ ddl }) {
    await ddl.createIndex('orgs_domains', 'orgs_domains_challenge_expires_idx', ['challenge_expires_at']);
    await ddl.createIndex('orgs_domain_attempts', 'orgs_domain_attempts_created_idx', ['created_at']);
  },
};

/** A table whose rows belong to one organization and go with it (behaviour.md §6.1 delete). */
export interface OrgScopedTable {
  /** the MikroORM entity (also listed in `orgsSchema.entities`) */
  entity: EntitySchema<any, any>;
  /** the entity's property holding the org id */
  orgProperty: string;
}

const orgScoped: OrgScopedTable[] = [
  { entity: MemberEntity as unknown as EntitySchema<any, any>, orgProperty: 'orgId' },
  { entity: DomainEntity as unknown as EntitySchema<any, any>, orgProperty: 'orgId' },
  { entity: DomainAttemptEntity as unknown as EntitySchema<any, any>, orgProperty: 'orgId' },
];

/**
 * Registers a further org-scoped table (SCIM endpoints and groups, SSO connections): deleting an
 * organization removes its rows there in the same transaction. Call at module load, beside the
 * entity's definition, and add the entity and its migration to `orgsSchema`.
 */
export function registerOrgScopedTable(table: OrgScopedTable): void {
  orgScoped.push(table);
}

/** The org-scoped tables, in deletion order (registered ones after the built-in ones). */
export function orgScopedTables(): readonly OrgScopedTable[] {
  return orgScoped;
}

/** The schema handed to `openDatabase(options, orgsSchema, { logger })`; append new migrations. */
export const orgsSchema: ServiceSchema = {
  service: 'orgs',
  entities: [OrganizationEntity, MemberEntity, DomainEntity, DomainAttemptEntity] as unknown as EntitySchema<any, any>[],
  migrations: [organizationsMembersDomains, retentionIndexes],
};
