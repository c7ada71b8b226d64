/**
 * @module orgs/scim/storage/schema
 * The SCIM tables of the orgs database (behaviour.md §6.4): `orgs_scim_endpoints`, `orgs_scim_users`
 * and `orgs_scim_groups`, as MikroORM entities and one migration, appended to the orgs service's
 * schema (`scimEntities`, `scimMigration`). Every table has an `org_id` column: deleting an org
 * deletes its rows (behaviour.md §6.1 delete_organization).
 */
import { randomUUID } from 'node:crypto';
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
    /** created_at of the newest org member already given a SCIM row (issue 31) */
    membersSyncedAt: p.bigint('number').fieldName('members_synced_at').nullable(),
    /** and its member row id (the keyset is (created_at, id)) */
    membersSyncedId: p.string().length(64).fieldName('members_synced_id').nullable(),
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
    userName: p.string().length(320).fieldName('user_name').nullable(),
    /** lower-cased userName: the per-org unique key (RFC 7643 §4.1.1, caseExact false) */
    userNameKey: p.string().length(320).fieldName('user_name_key').nullable(),
    givenName: p.string().length(255).fieldName('given_name').nullable(),
    familyName: p.string().length(255).fieldName('family_name').nullable(),
    displayName: p.string().length(255).fieldName('display_name').nullable(),
    /** JSON arrays of {value, type, primary} */
    emails: p.text().nullable(),
    phoneNumbers: p.text().fieldName('phone_numbers').nullable(),
    active: p.boolean().nullable(),
    version: p.bigint('number').nullable(),
    createdAt: p.bigint('number').fieldName('created_at'),
    updatedAt: p.bigint('number').fieldName('updated_at'),
  },
});

/** One element of a user's `emails` or `phoneNumbers`: what value-path filters run on. */
export const ScimUserValueEntity = defineEntity({
  name: 'OrgsScimUserValue',
  tableName: 'orgs_scim_user_values',
  properties: {
    id: p.uuid().primary(),
    orgId: p.string().length(64).fieldName('org_id'),
    userId: p.string().length(64).fieldName('user_id'),
    /** `emails` or `phoneNumbers` */
    attr: p.string().length(16),
    type: p.string().length(64).nullable(),
    /** lower-cased value */
    valueKey: p.string().length(320).fieldName('value_key'),
    isPrimary: p.boolean().fieldName('is_primary'),
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
    /** `meta.version` (RFC 7644 §3.14); null on a row written before it (read as 1) */
    version: p.bigint('number').nullable(),
    createdAt: p.bigint('number').fieldName('created_at'),
    updatedAt: p.bigint('number').fieldName('updated_at'),
  },
});

/**
 * issue 31: one member of a SCIM group, a row each, so a PATCH that adds or removes members writes only
 * those rows and a user's groups are one indexed lookup, whatever the size of the group.
 */
export const ScimGroupMemberEntity = defineEntity({
  name: 'OrgsScimGroupMember',
  tableName: 'orgs_scim_group_members',
  properties: {
    id: p.uuid().primary(),
    orgId: p.string().length(64).fieldName('org_id'),
    groupId: p.string().length(64).fieldName('group_id'),
    userId: p.string().length(64).fieldName('user_id'),
    /** the order members were added in: milliseconds × 1000 + the index within one write */
    seq: p.bigint('number'),
  },
});

/** The SCIM entities, for the orgs ServiceSchema. */
export const scimEntities = [ScimEndpointEntity, ScimUserEntity, ScimUserValueEntity, ScimGroupEntity, ScimGroupMemberEntity] as unknown as EntitySchema<any, any>[];

/** The tables that hold rows per org, for an organization's deletion (behaviour.md §6.1). */
export const SCIM_ORG_SCOPED_TABLES = ['orgs_scim_endpoints', 'orgs_scim_users', 'orgs_scim_user_values', 'orgs_scim_groups', 'orgs_scim_group_members'] as const;

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

/**
 * issue 31: the SCIM projection of users (any userName, unique per org; names, emails and phone
 * numbers, active, a version for If-Match) and the child rows of emails/phoneNumbers, so list filters
 * run in the database. Members added outside SCIM get a row with a null userName when the SCIM server
 * next looks (`members_synced_at`), projected from authn on first sight.
 */
export const scimProjectionMigration: MigrationDefinition = {
  name: '0102_orgs_scim_projection',
  async up({ ddl, type }) {
    if (type === 'mongodb') return;
    const cols: Array<[string, 'string' | 'text' | 'boolean' | 'bigint', number?]> = [
      ['user_name', 'string', 320], ['user_name_key', 'string', 320], ['given_name', 'string', 255], ['family_name', 'string', 255],
      ['display_name', 'string', 255], ['emails', 'text'], ['phone_numbers', 'text'], ['active', 'boolean'], ['version', 'bigint'],
    ];
    for (const [name, t, length] of cols) await ddl.addColumn('orgs_scim_users', { name, type: t, ...(length ? { length } : {}), nullable: true });
    await ddl.createIndex('orgs_scim_users', 'orgs_scim_users_name_idx', ['org_id', 'user_name_key'], { unique: true });
    await ddl.createTable('orgs_scim_user_values', [
      { name: 'id', type: 'uuid', primary: true },
      { name: 'org_id', type: 'string', length: 64 },
      { name: 'user_id', type: 'string', length: 64 },
      { name: 'attr', type: 'string', length: 16 },
      { name: 'type', type: 'string', length: 64, nullable: true },
      { name: 'value_key', type: 'string', length: 320 },
      { name: 'is_primary', type: 'boolean' },
    ]);
    await ddl.createIndex('orgs_scim_user_values', 'orgs_scim_user_values_value_idx', ['org_id', 'attr', 'value_key']);
    await ddl.createIndex('orgs_scim_user_values', 'orgs_scim_user_values_user_idx', ['org_id', 'user_id']);
    // members added outside SCIM are projected lazily: the endpoint remembers how far it looked
    await ddl.addColumn('orgs_scim_endpoints', { name: 'members_synced_at', type: 'bigint', nullable: true });
    await ddl.addColumn('orgs_scim_endpoints', { name: 'members_synced_id', type: 'string', length: 64, nullable: true });
  },
};

/**
 * issue 31: a version per SCIM group (RFC 7644 §3.14 `meta.version`, `ETag`, `If-Match`), as users have.
 * Existing groups start at 1.
 */
export const scimGroupVersionMigration: MigrationDefinition = {
  name: '0103_orgs_scim_group_version',
  async up({ ddl, type, execute }) {
    if (type === 'mongodb') return;
    await ddl.addColumn('orgs_scim_groups', { name: 'version', type: 'bigint', nullable: true });
    await execute('update orgs_scim_groups set version = 1');
  },
};

/**
 * issue 31: a SCIM group's members move from the JSON list in its row (`member_ids`) to a row each in
 * `orgs_scim_group_members` (unique per group and user; looked up by user for `holding` and a deleted
 * user). The existing lists are carried over in their order, 500 groups per read, then the column is
 * dropped. On MongoDB the list of a group written before this release is not carried over.
 */
export const scimGroupMembersMigration: MigrationDefinition = {
  name: '0104_orgs_scim_group_members',
  async up({ ddl, type, execute }) {
    if (type === 'mongodb') return;
    await ddl.createTable('orgs_scim_group_members', [
      { name: 'id', type: 'uuid', primary: true },
      { name: 'org_id', type: 'string', length: 64 },
      { name: 'group_id', type: 'string', length: 64 },
      { name: 'user_id', type: 'string', length: 64 },
      { name: 'seq', type: 'bigint' },
    ]);
    await ddl.createIndex('orgs_scim_group_members', 'orgs_scim_group_members_group_user_idx', ['group_id', 'user_id'], { unique: true });
    await ddl.createIndex('orgs_scim_group_members', 'orgs_scim_group_members_group_seq_idx', ['group_id', 'seq']);
    await ddl.createIndex('orgs_scim_group_members', 'orgs_scim_group_members_user_idx', ['org_id', 'user_id']);
    // the lowest UUID: PostgreSQL compares the uuid column only with a UUID
    let after = '00000000-0000-0000-0000-000000000000';
    for (;;) {
      const groups = await execute<{ id: string; org_id: string; member_ids: string | null; created_at: number | string }>(
        'select id, org_id, member_ids, created_at from orgs_scim_groups where id > ? order by id limit 500', [after]);
      if (groups.length === 0) break;
      for (const g of groups) {
        let ids: unknown;
        try {
          ids = JSON.parse(g.member_ids ?? '[]');
        } catch {
          ids = [];
        }
        const unique = [...new Set(Array.isArray(ids) ? ids.filter((m): m is string => typeof m === 'string') : [])];
        const base = Number(g.created_at) * 1_000_000;
        for (let i = 0; i < unique.length; i += 200) {
          const chunk = unique.slice(i, i + 200);
          await execute(
            `insert into orgs_scim_group_members (id, org_id, group_id, user_id, seq) values ${chunk.map(() => '(?, ?, ?, ?, ?)').join(', ')}`,
            chunk.flatMap((userId, j) => [randomUUID(), g.org_id, String(g.id), userId, base + i + j]),
          );
        }
      }
      after = String(groups[groups.length - 1]!.id);
    }
    await execute(`alter table orgs_scim_groups drop column ${ddl.id('member_ids')}`);
  },
};
