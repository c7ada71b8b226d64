/**
 * @module orgs/scim/storage/schema
 * The SCIM tables of the orgs database (behaviour.md §6.4): `orgs_scim_endpoints`, `orgs_scim_users`
 * and `orgs_scim_groups`, as MikroORM entities and one migration, appended to the orgs service's
 * schema (`scimEntities`, `scimMigration`). Every table has an `org_id` column: deleting an org
 * deletes its rows (behaviour.md §6.1 delete_organization).
 */
import { defineEntity, p, type EntitySchema } from '@mikro-orm/core';
import type { MigrationDefinition } from '@gatehouse/db';

export const ScimEndpointEntity = defineEntity({
  name: 'OrgsScimEndpoint',
  tableName: 'orgs_scim_endpoints',
  properties: {
    id: p.uuid().primary(),
    orgId: p.string().length(64).fieldName('org_id'),
    tokenHash: p.string().length(64).fieldName('token_hash'),
    enabled: p.boolean(),
    createdAt: p.bigint('number').fieldName('created_at'),
    updatedAt: p.bigint('number').fieldName('updated_at'),
  },
});

export const ScimUserEntity = defineEntity({
  name: 'OrgsScimUser',
  tableName: 'orgs_scim_users',
  properties: {
    id: p.uuid().primary(),
    orgId: p.string().length(64).fieldName('org_id'),
    userId: p.string().length(64).fieldName('user_id'),
    externalId: p.string().length(255).fieldName('external_id').nullable(),
    createdAt: p.bigint('number').fieldName('created_at'),
    updatedAt: p.bigint('number').fieldName('updated_at'),
  },
});

export const ScimGroupEntity = defineEntity({
  name: 'OrgsScimGroup',
  tableName: 'orgs_scim_groups',
  properties: {
    id: p.uuid().primary(),
    orgId: p.string().length(64).fieldName('org_id'),
    displayName: p.string().length(255).fieldName('display_name'),
    /** lower-cased display name: the per-org unique key */
    displayKey: p.string().length(255).fieldName('display_key'),
    externalId: p.string().length(255).fieldName('external_id').nullable(),
    /** JSON array of user ids */
    memberIds: p.text().fieldName('member_ids'),
    createdAt: p.bigint('number').fieldName('created_at'),
    updatedAt: p.bigint('number').fieldName('updated_at'),
  },
});

/** The SCIM entities, for the orgs ServiceSchema. */
export const scimEntities = [ScimEndpointEntity, ScimUserEntity, ScimGroupEntity] as unknown as EntitySchema<any, any>[];

/** The tables that hold rows per org, for an organization's deletion (behaviour.md §6.1). */
export const SCIM_ORG_SCOPED_TABLES = ['orgs_scim_endpoints', 'orgs_scim_users', 'orgs_scim_groups'] as const;

/** issue 19: the SCIM endpoint, users' externalIds and groups. */
export const scimMigration: MigrationDefinition = {
  name: '0101_orgs_scim',
  async up({ ddl }) {
    await ddl.createTable('orgs_scim_endpoints', [
      { name: 'id', type: 'uuid', primary: true },
      { name: 'org_id', type: 'string', length: 64 },
      { name: 'token_hash', type: 'string', length: 64 },
      { name: 'enabled', type: 'boolean' },
      { name: 'created_at', type: 'bigint' },
      { name: 'updated_at', type: 'bigint' },
    ]);
    await ddl.createIndex('orgs_scim_endpoints', 'orgs_scim_endpoints_org_idx', ['org_id'], { unique: true });
    await ddl.createTable('orgs_scim_users', [
      { name: 'id', type: 'uuid', primary: true },
      { name: 'org_id', type: 'string', length: 64 },
      { name: 'user_id', type: 'string', length: 64 },
      { name: 'external_id', type: 'string', length: 255, nullable: true },
      { name: 'created_at', type: 'bigint' },
      { name: 'updated_at', type: 'bigint' },
    ]);
    await ddl.createIndex('orgs_scim_users', 'orgs_scim_users_org_user_idx', ['org_id', 'user_id'], { unique: true });
    await ddl.createIndex('orgs_scim_users', 'orgs_scim_users_external_idx', ['org_id', 'external_id']);
    await ddl.createTable('orgs_scim_groups', [
      { name: 'id', type: 'uuid', primary: true },
      { name: 'org_id', type: 'string', length: 64 },
      { name: 'display_name', type: 'string', length: 255 },
      { name: 'display_key', type: 'string', length: 255 },
      { name: 'external_id', type: 'string', length: 255, nullable: true },
      { name: 'member_ids', type: 'text' },
      { name: 'created_at', type: 'bigint' },
      { name: 'updated_at', type: 'bigint' },
    ]);
    await ddl.createIndex('orgs_scim_groups', 'orgs_scim_groups_name_idx', ['org_id', 'display_key'], { unique: true });
    await ddl.createIndex('orgs_scim_groups', 'orgs_scim_groups_external_idx', ['org_id', 'external_id']);
  },
};
