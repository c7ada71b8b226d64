/**
 * @module orgs/scim/storage/store
 * {@link ScimStore} on MikroORM through libs/db (SQLite, PostgreSQL, MySQL, MariaDB), on a database
 * opened with the SCIM entities and migration of ./schema.ts.
 */
import { randomUUID } from 'node:crypto';
import type { Database } from '@gatehouse/db';
import { unlessDuplicate } from '../../storage/mikro/unique.ts';
import type { ScimEndpointRecord, ScimGroupRecord, ScimStore, ScimUserRecord } from './ports.ts';
import { ScimEndpointEntity, ScimGroupEntity, ScimUserEntity } from './schema.ts';

type EndpointRow = typeof ScimEndpointEntity['~entity'];
type UserRow = typeof ScimUserEntity['~entity'];
type GroupRow = typeof ScimGroupEntity['~entity'];

const toEndpoint = (r: EndpointRow): ScimEndpointRecord => ({
  id: r.id, orgId: r.orgId, tokenHash: r.tokenHash, enabled: Boolean(r.enabled), createdAt: Number(r.createdAt), updatedAt: Number(r.updatedAt),
});
const toUser = (r: UserRow): ScimUserRecord => ({
  orgId: r.orgId, userId: r.userId, externalId: r.externalId ?? null, createdAt: Number(r.createdAt), updatedAt: Number(r.updatedAt),
});
const toGroup = (r: GroupRow): ScimGroupRecord => ({
  id: r.id, orgId: r.orgId, displayName: r.displayName, externalId: r.externalId ?? null,
  // written by this store from a string array
  memberIds: JSON.parse(r.memberIds) as string[], createdAt: Number(r.createdAt), updatedAt: Number(r.updatedAt),
});
const groupRow = (g: ScimGroupRecord) => ({
  id: g.id, orgId: g.orgId, displayName: g.displayName, displayKey: g.displayName.toLowerCase(), externalId: g.externalId,
  memberIds: JSON.stringify(g.memberIds), createdAt: g.createdAt, updatedAt: g.updatedAt,
});

const OLDEST_FIRST = { createdAt: 'asc', id: 'asc' } as const;

/** Builds the SCIM store on `db`. */
export function createMikroScimStore(db: Database): ScimStore {
  return {
    endpoints: {
      async byOrg(orgId) {
        const r = await db.fork().findOne(ScimEndpointEntity, { orgId });
        return r ? toEndpoint(r) : null;
      },
      async byId(id) {
        const r = await db.fork().findOne(ScimEndpointEntity, { id });
        return r ? toEndpoint(r) : null;
      },
      insert: (e) => unlessDuplicate(() => db.fork().insert(ScimEndpointEntity, e)),
      async update(e) {
        await db.fork().nativeUpdate(ScimEndpointEntity, { id: e.id }, { tokenHash: e.tokenHash, enabled: e.enabled, updatedAt: e.updatedAt });
      },
      async delete(orgId) {
        return (await db.fork().nativeDelete(ScimEndpointEntity, { orgId })) > 0;
      },
    },
    users: {
      async get(orgId, userId) {
        const r = await db.fork().findOne(ScimUserEntity, { orgId, userId });
        return r ? toUser(r) : null;
      },
      async byExternalId(orgId, externalId) {
        const r = await db.fork().findOne(ScimUserEntity, { orgId, externalId }, { orderBy: OLDEST_FIRST });
        return r ? toUser(r) : null;
      },
      async put(u) {
        await db.transactional(async (em) => {
          const n = await em.nativeUpdate(ScimUserEntity, { orgId: u.orgId, userId: u.userId }, { externalId: u.externalId, updatedAt: u.updatedAt });
          if (n === 0) await em.insert(ScimUserEntity, { id: randomUUID(), ...u });
        });
      },
      async list(orgId) {
        return (await db.fork().find(ScimUserEntity, { orgId }, { orderBy: OLDEST_FIRST })).map(toUser);
      },
    },
    groups: {
      async get(orgId, id) {
        const r = await db.fork().findOne(ScimGroupEntity, { orgId, id });
        return r ? toGroup(r) : null;
      },
      async byDisplayName(orgId, displayName) {
        const r = await db.fork().findOne(ScimGroupEntity, { orgId, displayKey: displayName.toLowerCase() });
        return r ? toGroup(r) : null;
      },
      async byExternalId(orgId, externalId) {
        const r = await db.fork().findOne(ScimGroupEntity, { orgId, externalId }, { orderBy: OLDEST_FIRST });
        return r ? toGroup(r) : null;
      },
      async list(orgId) {
        return (await db.fork().find(ScimGroupEntity, { orgId }, { orderBy: OLDEST_FIRST })).map(toGroup);
      },
      insert: (g) => unlessDuplicate(() => db.fork().insert(ScimGroupEntity, groupRow(g))),
      update: (g) => unlessDuplicate(() => db.fork().nativeUpdate(ScimGroupEntity, { id: g.id, orgId: g.orgId }, groupRow(g))),
      async delete(orgId, id) {
        return (await db.fork().nativeDelete(ScimGroupEntity, { orgId, id })) > 0;
      },
    },
  };
}
