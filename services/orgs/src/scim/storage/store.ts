/**
 * @module orgs/scim/storage/store
 * {@link ScimStore} on MikroORM through libs/db (SQLite, PostgreSQL, MySQL, MariaDB), on a database
 * opened with the SCIM entities and migration of ./schema.ts.
 */
import { randomUUID } from 'node:crypto';
import type { Database } from '@gatehouse/db';
import { unlessDuplicate } from '../../storage/mikro/unique.ts';
import { enqueueEvents, type TxManager } from '../../storage/mikro/outbox.ts';
import { MemberEntity } from '../../storage/mikro/schema.ts';
import type { ScimEndpointRecord, ScimGroupRecord, ScimMemberChange, ScimMultiValue, ScimOutboxEvent, ScimStore, ScimUserRecord } from './ports.ts';
import { ScimEndpointEntity, ScimGroupEntity, ScimGroupMemberEntity, ScimUserEntity, ScimUserValueEntity } from './schema.ts';

type EndpointRow = typeof ScimEndpointEntity['~entity'];
type UserRow = typeof ScimUserEntity['~entity'];
type GroupRow = typeof ScimGroupEntity['~entity'];

const toEndpoint = (r: EndpointRow): ScimEndpointRecord => ({
  id: r.id, orgId: r.orgId, tokenHash: r.tokenHash, enabled: Boolean(r.enabled), createdAt: Number(r.createdAt), updatedAt: Number(r.updatedAt),
});
const multi = (text: string | null | undefined): ScimMultiValue[] => (text ? JSON.parse(text) as ScimMultiValue[] : []);
const toUser = (r: UserRow): ScimUserRecord => ({
  orgId: r.orgId, userId: r.userId, externalId: r.externalId ?? null, userName: r.userName ?? null,
  givenName: r.givenName ?? null, familyName: r.familyName ?? null, displayName: r.displayName ?? null,
  emails: multi(r.emails), phoneNumbers: multi(r.phoneNumbers),
  // a legacy row (null) is a member not projected yet: active until authn says otherwise
  active: r.active === null || r.active === undefined ? true : Boolean(r.active), version: Number(r.version ?? 0),
  createdAt: Number(r.createdAt), updatedAt: Number(r.updatedAt),
});
const userRow = (u: ScimUserRecord) => ({
  orgId: u.orgId, userId: u.userId, externalId: u.externalId, userName: u.userName, userNameKey: u.userName?.toLowerCase() ?? null,
  givenName: u.givenName, familyName: u.familyName, displayName: u.displayName,
  emails: JSON.stringify(u.emails), phoneNumbers: JSON.stringify(u.phoneNumbers), active: u.active, version: u.version,
  createdAt: u.createdAt, updatedAt: u.updatedAt,
});
/** A raw row of `select u.* from orgs_scim_users u` (snake_case columns) as a record. */
const fromColumns = (r: Record<string, unknown>): ScimUserRecord => toUser({
  id: r['id'], orgId: r['org_id'], userId: r['user_id'], externalId: r['external_id'], userName: r['user_name'], userNameKey: r['user_name_key'],
  givenName: r['given_name'], familyName: r['family_name'], displayName: r['display_name'], emails: r['emails'], phoneNumbers: r['phone_numbers'],
  active: r['active'] === null || r['active'] === undefined ? null : r['active'] === true || Number(r['active']) === 1, version: r['version'],
  createdAt: r['created_at'], updatedAt: r['updated_at'],
} as UserRow);
const toGroup = (r: GroupRow): ScimGroupRecord => ({
  id: r.id, orgId: r.orgId, displayName: r.displayName, externalId: r.externalId ?? null,
  version: Number(r.version ?? 1), createdAt: Number(r.createdAt), updatedAt: Number(r.updatedAt),
});
const groupRow = (g: ScimGroupRecord) => ({
  id: g.id, orgId: g.orgId, displayName: g.displayName, displayKey: g.displayName.toLowerCase(), externalId: g.externalId,
  version: g.version, createdAt: g.createdAt, updatedAt: g.updatedAt,
});
/** Ids in slices of `n` (the bound parameters of one `in (…)` stay few). */
const slices = <T>(ids: readonly T[], n = 500): T[][] => {
  const out: T[][] = [];
  for (let i = 0; i < ids.length; i += n) out.push(ids.slice(i, i + n));
  return out;
};
/** The stored version `v` of a group: a row from before versions (null) counts as 1. */
const groupVersionIs = (v: number) => (v === 1 ? { $or: [{ version: 1 }, { version: null }] } : { version: v });

const OLDEST_FIRST = { createdAt: 'asc', id: 'asc' } as const;

/** A versioned write found another version (If-Match lost a race): rolls the transaction back. */
class StaleVersion extends Error {}

/** Builds the SCIM store on `db`. */
export function createMikroScimStore(db: Database): ScimStore {
  // the transactional outbox: the relay publishes what the transaction committed (ARCHITECTURE §4)
  const enqueue = (em: TxManager, events: readonly ScimOutboxEvent[], at: number): void => enqueueEvents(db, em, events, at);
  /** Applies `change` to the member rows of group `g` (inside the write's transaction). */
  const applyMembers = async (em: TxManager, g: ScimGroupRecord, change: ScimMemberChange): Promise<void> => {
    if (change.remove === 'all') await em.nativeDelete(ScimGroupMemberEntity, { groupId: g.id, orgId: g.orgId });
    else for (const ids of slices(change.remove)) await em.nativeDelete(ScimGroupMemberEntity, { groupId: g.id, orgId: g.orgId, userId: { $in: ids as string[] } });
    const wanted = [...new Set(change.add)];
    if (wanted.length === 0) return;
    const present = new Set<string>();
    if (change.remove !== 'all') {
      for (const ids of slices(wanted)) {
        for (const r of await em.find(ScimGroupMemberEntity, { groupId: g.id, userId: { $in: ids } }, { fields: ['userId'] })) present.add(r.userId);
      }
    }
    const base = Date.now() * 1000;
    const rows = wanted.filter((id) => !present.has(id)).map((userId, i) => ({ id: randomUUID(), orgId: g.orgId, groupId: g.id, userId, seq: base + i }));
    for (const chunk of slices(rows, 200)) await em.insertMany(ScimGroupMemberEntity, chunk);
  };
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
      async byUserName(orgId, userName) {
        const r = await db.fork().findOne(ScimUserEntity, { orgId, userNameKey: userName.toLowerCase() });
        return r ? toUser(r) : null;
      },
      put: (u, expectVersion, events = []) => unlessDuplicate(async () => {
        await db.transactional(async (em) => {
          enqueue(em, events, u.updatedAt);
          const where = { orgId: u.orgId, userId: u.userId, ...(expectVersion !== undefined ? { version: expectVersion } : {}) };
          const n = await em.nativeUpdate(ScimUserEntity, where, userRow(u));
          if (n === 0) {
            if (expectVersion !== undefined) throw new StaleVersion();
            await em.insert(ScimUserEntity, { id: randomUUID(), ...userRow(u) });
          }
          await em.nativeDelete(ScimUserValueEntity, { orgId: u.orgId, userId: u.userId });
          const values = [
            ...u.emails.map((e) => ({ attr: 'emails', e })), ...u.phoneNumbers.map((e) => ({ attr: 'phoneNumbers', e })),
          ].map(({ attr, e }) => ({ id: randomUUID(), orgId: u.orgId, userId: u.userId, attr, type: e.type, valueKey: e.value.toLowerCase(), isPrimary: e.primary }));
          if (values.length > 0) await em.insertMany(ScimUserValueEntity, values);
        });
      }).catch((err: unknown) => {
        if (err instanceof StaleVersion) return false;
        throw err;
      }),
      async delete(orgId, userId, events = []) {
        return db.transactional(async (em) => {
          enqueue(em, events, Math.floor(Date.now() / 1000));
          await em.nativeDelete(ScimUserValueEntity, { orgId, userId });
          return (await em.nativeDelete(ScimUserEntity, { orgId, userId })) > 0;
        });
      },
      async forget(userId) {
        await db.transactional(async (em) => {
          await em.nativeDelete(ScimUserValueEntity, { userId });
          await em.nativeDelete(ScimUserEntity, { userId });
          const held = await em.find(ScimGroupMemberEntity, { userId }, { fields: ['groupId', 'orgId'] });
          for (const m of held) {
            const r = await em.findOne(ScimGroupEntity, { id: m.groupId, orgId: m.orgId });
            if (r) await em.nativeUpdate(ScimGroupEntity, { id: r.id, orgId: r.orgId }, { version: Number(r.version ?? 1) + 1 });
          }
          await em.nativeDelete(ScimGroupMemberEntity, { userId });
        });
      },
      async membersAmong(orgId, userIds) {
        const out = new Set<string>();
        const em = db.fork();
        for (let i = 0; i < userIds.length; i += 500) {
          const rows = await em.find(MemberEntity, { orgId, userId: { $in: userIds.slice(i, i + 500) as string[] } }, { fields: ['userId'] });
          for (const r of rows) out.add(r.userId);
        }
        return out;
      },
      async unprojected(orgId, limit) {
        const em = db.fork();
        const endpoint = await em.findOne(ScimEndpointEntity, { orgId });
        const since = Number(endpoint?.membersSyncedAt ?? -1);
        // the lowest UUID: PostgreSQL compares the uuid column only with a UUID
        const sinceId = endpoint?.membersSyncedId ?? '00000000-0000-0000-0000-000000000000';
        // members that joined after the last look (outside SCIM, e.g. invitations) and have no row get
        // one; keyset on (created_at, id), the members' list index
        // read before the look: members that join meanwhile are after it, and found next time
        const newest = await em.findOne(MemberEntity, { orgId }, { orderBy: { createdAt: 'desc', id: 'desc' }, fields: ['id', 'createdAt'] });
        let joined: Array<{ id: string; userId: string; createdAt: number }>;
        if (db.type === 'mongodb') {
          const after = await em.find(MemberEntity, { orgId, $or: [{ createdAt: { $gt: since } }, { createdAt: since, id: { $gt: sinceId } }] },
            { orderBy: { createdAt: 'asc', id: 'asc' }, limit: 1000, fields: ['id', 'userId', 'createdAt'] });
          const known = new Set((await em.find(ScimUserEntity, { orgId, userId: { $in: after.map((m) => m.userId) } }, { fields: ['userId'] })).map((r) => r.userId));
          joined = after.filter((m) => !known.has(m.userId)).map((m) => ({ id: m.id, userId: m.userId, createdAt: Number(m.createdAt) }));
        } else {
          const rows = await em.getConnection().execute<Array<Record<string, unknown>>>(
            `select m.id, m.user_id, m.created_at from orgs_members m where m.org_id = ? and (m.created_at > ? or (m.created_at = ? and m.id > ?))
              and not exists (select 1 from orgs_scim_users u where u.org_id = ? and u.user_id = m.user_id)
              order by m.created_at asc, m.id asc limit 1000`, [orgId, since, since, sinceId, orgId]);
          joined = rows.map((r: Record<string, unknown>) => ({ id: String(r['id']), userId: String(r['user_id']), createdAt: Number(r['created_at']) }));
        }
        for (const m of joined) {
          await unlessDuplicate(() => em.fork().insert(ScimUserEntity, {
            id: randomUUID(), orgId, userId: m.userId, externalId: null, createdAt: m.createdAt, updatedAt: m.createdAt,
          }));
        }
        // caught up: the mark moves to the newest member (a full batch: to the last one handled)
        const last = joined.length === 1000 ? joined[joined.length - 1]! : newest;
        if (endpoint && last && (Number(last.createdAt) !== since || last.id !== sinceId)) {
          await em.nativeUpdate(ScimEndpointEntity, { orgId }, { membersSyncedAt: Number(last.createdAt), membersSyncedId: last.id });
        }
        const rows = await em.find(ScimUserEntity, { orgId, userNameKey: null }, { limit, fields: ['userId'] });
        return rows.map((r) => r.userId);
      },
      async search(orgId, where, evaluate, page) {
        if (db.type === 'mongodb' || !where) {
          const em = db.fork();
          if (!evaluate && db.type !== 'mongodb') return this.search(orgId, { sql: '1 = 1', params: [] }, null, page);
          if (!evaluate) {
            const [rows, total] = await em.findAndCount(ScimUserEntity, { orgId, userNameKey: { $ne: null } }, { orderBy: OLDEST_FIRST, offset: page.offset, limit: page.limit });
            return { total, rows: rows.map(toUser) };
          }
          const all = (await em.find(ScimUserEntity, { orgId, userNameKey: { $ne: null } }, { orderBy: OLDEST_FIRST })).map(toUser).filter(evaluate);
          return { total: all.length, rows: all.slice(page.offset, page.offset + page.limit) };
        }
        const conn = db.fork().getConnection();
        // a member removed outside SCIM (an admin, a deleted account) is no SCIM resource any more
        const base = `from orgs_scim_users u where u.org_id = ? and u.user_name_key is not null and (${where.sql})
          and exists (select 1 from orgs_members m where m.org_id = ? and m.user_id = u.user_id)`;
        const params = [orgId, ...where.params, orgId];
        const [count] = await conn.execute<Array<{ n: number | string }>>(`select count(*) as n ${base}`, params);
        const total = Number(count?.n ?? 0);
        if (total === 0 || page.limit === 0) return { total, rows: [] };
        const rows = await conn.execute<Array<Record<string, unknown>>>(
          `select u.* ${base} order by u.created_at asc, u.id asc limit ${Math.floor(page.limit)} offset ${Math.floor(page.offset)}`, params);
        return { total, rows: rows.map(fromColumns) };
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
      async members(orgId, groupIds) {
        const out = new Map<string, string[]>(groupIds.map((id) => [id, []]));
        const em = db.fork();
        for (const ids of slices(groupIds)) {
          const rows = await em.find(ScimGroupMemberEntity, { orgId, groupId: { $in: ids as string[] } }, { orderBy: { seq: 'asc', id: 'asc' }, fields: ['groupId', 'userId'] });
          for (const r of rows) out.get(r.groupId)?.push(r.userId);
        }
        return out;
      },
      async membersAmong(orgId, groupId, userIds) {
        const out = new Set<string>();
        const em = db.fork();
        for (const ids of slices(userIds)) {
          for (const r of await em.find(ScimGroupMemberEntity, { orgId, groupId, userId: { $in: ids as string[] } }, { fields: ['userId'] })) out.add(r.userId);
        }
        return out;
      },
      async holding(orgId, userId) {
        const em = db.fork();
        const ids = (await em.find(ScimGroupMemberEntity, { orgId, userId }, { fields: ['groupId'] })).map((r) => r.groupId);
        if (ids.length === 0) return [];
        return (await em.find(ScimGroupEntity, { orgId, id: { $in: ids } }, { orderBy: OLDEST_FIRST })).map(toGroup);
      },
      async list(orgId) {
        return (await db.fork().find(ScimGroupEntity, { orgId }, { orderBy: OLDEST_FIRST })).map(toGroup);
      },
      async search(orgId, where, evaluate, page) {
        if (db.type === 'mongodb' || !where) {
          const all = (await db.fork().find(ScimGroupEntity, { orgId }, { orderBy: OLDEST_FIRST })).map(toGroup).filter((g) => !evaluate || evaluate(g));
          return { total: all.length, rows: all.slice(page.offset, page.offset + page.limit) };
        }
        const conn = db.fork().getConnection();
        const base = `from orgs_scim_groups g where g.org_id = ? and (${where.sql})`;
        const [count] = await conn.execute<Array<{ n: number | string }>>(`select count(*) as n ${base}`, [orgId, ...where.params]);
        const total = Number(count?.n ?? 0);
        if (total === 0 || page.limit === 0) return { total, rows: [] };
        const rows = await conn.execute<Array<Record<string, unknown>>>(
          `select g.* ${base} order by g.created_at asc, g.id asc limit ${Math.floor(page.limit)} offset ${Math.floor(page.offset)}`, [orgId, ...where.params]);
        return {
          total,
          rows: rows.map((r: Record<string, unknown>) => toGroup({
            id: r['id'], orgId: r['org_id'], displayName: r['display_name'], displayKey: r['display_key'], externalId: r['external_id'],
            version: r['version'], createdAt: r['created_at'], updatedAt: r['updated_at'],
          } as GroupRow)),
        };
      },
      insert: (g, memberIds = [], events = []) => unlessDuplicate(() => db.transactional(async (em) => {
        enqueueEvents(db, em, events);
        await em.insert(ScimGroupEntity, groupRow(g));
        await applyMembers(em, g, { remove: 'all', add: memberIds });
      })),
      async update(g, change = { remove: [], add: [] }, events = [], expectVersion) {
        try {
          const written = await unlessDuplicate(() => db.transactional(async (em) => {
            enqueueEvents(db, em, events);
            const where = { id: g.id, orgId: g.orgId, ...(expectVersion !== undefined ? groupVersionIs(expectVersion) : {}) };
            const n = await em.nativeUpdate(ScimGroupEntity, where, groupRow(g));
            if (n === 0 && expectVersion !== undefined) throw new StaleVersion();
            if (n > 0) await applyMembers(em, g, change);
          }));
          return written ? 'updated' : 'taken';
        } catch (err) {
          if (err instanceof StaleVersion) return 'stale';
          throw err;
        }
      },
      async delete(orgId, id, events = []) {
        return db.transactional(async (em) => {
          const n = await em.nativeDelete(ScimGroupEntity, { orgId, id });
          if (n > 0) enqueueEvents(db, em, events);
          await em.nativeDelete(ScimGroupMemberEntity, { orgId, groupId: id });
          return n > 0;
        });
      },
    },
  };
}
