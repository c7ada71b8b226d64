/**
 * @module scim-store.int.test
 * The SCIM users' store (behaviour.md §6.4; issue 31) on SQLite, the machine's PostgreSQL and MariaDB (a
 * fresh database each): the filter grammar compiled to SQL runs in each dialect and selects the right
 * rows (value paths over the emails/phoneNumbers rows, and/or/not, case-insensitive strings, booleans,
 * instants), userName is unique per org case-insensitively, If-Match's versioned write refuses a stale
 * version, and members added outside SCIM are found for projection exactly once. Groups (issue 31): a
 * member row each, a change of a few members of a 20,000-member group touching only their rows, and the
 * migration from the JSON member list of earlier releases keeping every group's members in order.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { createScratchDatabase, openDatabase, openScratchService, type Database, type DatabaseType, type ScratchService } from '@gatehouse/db';
import { createLogger } from '@gatehouse/observability';
import { startFerretDb } from '@gatehouse/testing';
import { orgsSchema } from '../src/storage/mikro/schema.ts';
import { createMikroOrgsStore } from '../src/storage/mikro/store.ts';
import { compileFilter } from '../src/scim/filter.ts';
import { scimEntities, scimGroupMembersMigration, scimGroupVersionMigration, scimMigration, scimProjectionMigration } from '../src/scim/storage/schema.ts';
import { createMikroScimStore } from '../src/scim/storage/store.ts';
import type { ScimUserRecord } from '../src/scim/storage/ports.ts';
import { USER_FILTER } from '../src/scim/users.ts';

const ORG = '6b6b6b6b-0000-4000-8000-000000000001';
const uid = (n: number) => `6b6b6b6b-0000-4000-8000-${String(n).padStart(12, '0')}`;
const user = (n: number, o: Partial<ScimUserRecord> = {}): ScimUserRecord => ({
  orgId: ORG, userId: uid(n), externalId: `ext-${n}`, userName: `User-${n}`, givenName: n % 2 ? 'Ada' : 'Grace', familyName: 'Test', displayName: null,
  emails: [{ value: `u${n}@Work.example`, type: 'work', primary: true }, ...(n === 3 ? [{ value: 'three@home.example', type: 'home', primary: false }] : [])],
  phoneNumbers: n === 2 ? [{ value: '+12015550123', type: 'work', primary: true }] : [], active: n !== 4, version: 1, createdAt: 1000 + n, updatedAt: 2000 + n, ...o,
});

for (const type of ['sqlite', 'postgres', 'mariadb'] as DatabaseType[]) {
  describe(`SCIM users store on ${type}`, () => {
    let scratch: ScratchService;
    beforeAll(async () => {
      scratch = await openScratchService(type, { ...orgsSchema, entities: [...orgsSchema.entities, ...scimEntities], migrations: [...orgsSchema.migrations, scimMigration, scimProjectionMigration, scimGroupVersionMigration, scimGroupMembersMigration] });
    }, 60_000);
    afterAll(async () => { await scratch?.close(); });

    it('runs the filter grammar in the database; userName unique per org; versioned writes; pending members found once', async () => {
      const store = createMikroScimStore(scratch.db);
      const orgs = createMikroOrgsStore(scratch.db, () => 1);
      await orgs.transaction((tx) => tx.organizations.insert({ id: ORG, name: `scim-${type}`, displayName: null, enabled: true, createdAt: 1, updatedAt: 1 }));
      await store.endpoints.insert({ id: '6b6b6b6b-0000-4000-8000-0000000000e1', orgId: ORG, tokenHash: 'h'.repeat(64), enabled: true, createdAt: 1, updatedAt: 1 });
      for (let n = 1; n <= 5; n++) {
        await orgs.transaction((tx) => tx.members.insert({ id: uid(100 + n), orgId: ORG, userId: uid(n), roles: [], createdAt: 1000 + n, updatedAt: 1000 + n }));
        if (n <= 4) expect(await store.users.put(user(n))).toBe(true);
      }
      // member 5 joined outside SCIM: found once for projection, then only while it stays unprojected
      expect(await store.users.unprojected(ORG, 10)).toEqual([uid(5)]);
      expect(await store.users.unprojected(ORG, 10)).toEqual([uid(5)]);
      expect(await store.users.put(user(5, { userName: 'user-1' }))).toBe(false);
      expect(await store.users.put(user(5))).toBe(true);
      expect(await store.users.unprojected(ORG, 10)).toEqual([]);

      const ids = async (f: string) => (await store.users.search(ORG, compileFilter(f, USER_FILTER), null, { offset: 0, limit: 100 })).rows.map((r) => r.userId);
      expect(await ids('userName eq "USER-2"')).toEqual([uid(2)]);
      expect(await ids('emails[type eq "home" and value co "THREE@"]')).toEqual([uid(3)]);
      expect(await ids('emails.value ew "@work.example" and not (name.givenName eq "ada")')).toEqual([uid(2), uid(4)]);
      expect(await ids('phoneNumbers pr or active eq false')).toEqual([uid(2), uid(4)]);
      expect(await ids('(userName sw "user-1" or userName sw "user-5") and externalId eq "ext-5"')).toEqual([uid(5)]);
      expect(await ids('externalId eq "EXT-5"')).toEqual([]);
      expect(await ids('meta.lastModified gt "1970-01-01T00:33:22Z"')).toEqual([uid(3), uid(4), uid(5)]);
      expect(await ids('userName co "100%_!"')).toEqual([]);
      const page = await store.users.search(ORG, compileFilter('userName sw "user"', USER_FILTER), null, { offset: 1, limit: 2 });
      expect([page.total, page.rows.map((r) => r.userId)]).toEqual([5, [uid(2), uid(3)]]);
      expect((await store.users.search(ORG, null, null, { offset: 0, limit: 0 })).total).toBe(5);
      // a group's member values are checked against the org's members in one query (skipped when not members)
      expect([...(await store.users.membersAmong(ORG, [uid(2), uid(9), uid(5), uid(2)]))].sort()).toEqual([uid(2), uid(5)]);
      // a member removed outside SCIM is no resource
      await orgs.transaction((tx) => tx.members.delete(ORG, uid(1)));
      expect(await ids('userName sw "user"')).toEqual([uid(2), uid(3), uid(4), uid(5)]);

      const two = (await store.users.get(ORG, uid(2)))!;
      expect(two).toMatchObject({ userName: 'User-2', phoneNumbers: [{ value: '+12015550123', type: 'work', primary: true }], active: true, version: 1 });
      expect(await store.users.put({ ...two, givenName: 'New', version: 2 }, 1)).toBe(true);
      expect(await store.users.put({ ...two, givenName: 'Stale', version: 2 }, 1)).toBe(false);
      expect((await store.users.get(ORG, uid(2)))?.givenName).toBe('New');
      expect((await store.users.byUserName(ORG, 'user-3'))?.userId).toBe(uid(3));
      expect(await store.users.delete(ORG, uid(3))).toBe(true);
      expect(await ids('emails[type eq "home"]')).toEqual([]);
    });
  });

  describe(`SCIM groups store on ${type}: group.* events commit with the group row (issue 32 §1)`, () => {
    let scratch: ScratchService;
    beforeAll(async () => {
      scratch = await openScratchService(type, { ...orgsSchema, entities: [...orgsSchema.entities, ...scimEntities], migrations: [...orgsSchema.migrations, scimMigration, scimProjectionMigration, scimGroupVersionMigration, scimGroupMembersMigration] });
    }, 60_000);
    afterAll(async () => { await scratch?.close(); });

    it('insert, update and delete write their event in the same transaction; a refused write writes none', async () => {
      const store = createMikroScimStore(scratch.db);
      await createMikroOrgsStore(scratch.db, () => 1).transaction((tx) => tx.organizations.insert({ id: ORG, name: `groups-${type}`, displayName: null, enabled: true, createdAt: 1, updatedAt: 1 }));
      const before = (await scratch.outbox()).length;
      const g = { id: uid(601), orgId: ORG, displayName: 'Eng', externalId: null, version: 1, createdAt: 1, updatedAt: 1 };
      const other = { ...g, id: uid(602), displayName: 'Ops' };
      const event = (name: 'group.created' | 'group.updated' | 'group.deleted', id: string) => [{ name, data: { group_id: id, org_id: ORG } }];
      const members = async (id: string) => (await store.groups.members(ORG, [id])).get(id);
      expect(await store.groups.insert(g, [uid(1)], event('group.created', g.id))).toBe(true);
      expect(await store.groups.insert(other, [uid(2)], event('group.created', other.id))).toBe(true);
      // the display name is taken: nothing is written, its event neither, its members neither
      expect(await store.groups.insert({ ...g, id: uid(603), displayName: 'eng' }, [uid(3)], event('group.created', uid(603)))).toBe(false);
      expect(await members(uid(603))).toEqual([]);
      expect(await store.groups.update({ ...other, displayName: 'ENG' }, { remove: 'all', add: [] }, event('group.updated', other.id))).toBe('taken');
      expect(await members(other.id)).toEqual([uid(2)]);
      // RFC 7644 §3.14: a write expecting version 1 lands once; a second expecting 1 finds 2 and writes nothing
      expect(await store.groups.update({ ...g, version: 2 }, { remove: [uid(1)], add: [uid(4)] }, event('group.updated', g.id), 1)).toBe('updated');
      expect(await store.groups.update({ ...g, version: 2 }, { remove: 'all', add: [uid(9)] }, event('group.updated', g.id), 1)).toBe('stale');
      expect(await store.groups.get(ORG, g.id)).toMatchObject({ version: 2 });
      expect(await members(g.id)).toEqual([uid(4)]);
      expect(await store.groups.delete(ORG, g.id, event('group.deleted', g.id))).toBe(true);
      expect(await store.groups.delete(ORG, g.id, event('group.deleted', g.id))).toBe(false);
      const rows = (await scratch.outbox()).slice(before).map((e) => [e.name, (e.data as { group_id: string }).group_id]);
      expect(rows).toEqual([['group.created', g.id], ['group.created', other.id], ['group.updated', g.id], ['group.deleted', g.id]]);
      expect((await store.groups.get(ORG, other.id))?.displayName).toBe('Ops');
      // the deleted group's member rows went with it
      expect(await members(g.id)).toEqual([]);
    });

    it('a group of 20,000 members: a change of a few members writes their rows only, and reads find them (issue 31)', async () => {
      const store = createMikroScimStore(scratch.db);
      const big = { id: uid(700), orgId: ORG, displayName: 'Everyone', externalId: null, version: 1, createdAt: 5, updatedAt: 5 };
      const many = Array.from({ length: 20_000 }, (_, i) => uid(10_000 + i));
      expect(await store.groups.insert(big, many)).toBe(true);
      const t0 = performance.now();
      expect(await store.groups.membersAmong(ORG, big.id, [uid(10_000), uid(29_999), uid(9)])).toEqual(new Set([uid(10_000), uid(29_999)]));
      // an add of one already there and one new, and a remove, as a PATCH of Entra ID sends them
      expect(await store.groups.update({ ...big, version: 2 }, { remove: [uid(10_005)], add: [uid(10_000), uid(40_000)] }, [], 1)).toBe('updated');
      const ms = performance.now() - t0;
      const after = (await store.groups.members(ORG, [big.id])).get(big.id)!;
      expect(after).toHaveLength(20_000);
      expect(after[0]).toBe(uid(10_000));
      expect(after[after.length - 1]).toBe(uid(40_000));
      expect(after).not.toContain(uid(10_005));
      expect((await store.groups.holding(ORG, uid(40_000))).map((x) => x.id)).toEqual([big.id]);
      // a check of three ids and a write of two rows: not proportional to the group (generous for a loaded machine)
      expect(ms).toBeLessThan(2_000);
    }, 120_000);
  });

  describe(`SCIM groups on ${type}: the migration to member rows carries existing groups over (issue 31)`, () => {
    it('a group stored with a JSON member list before 0104 has the same members, in order, after it', async () => {
      const scratch = await createScratchDatabase(type);
      const before = { ...orgsSchema, entities: [...orgsSchema.entities, ...scimEntities], migrations: [...orgsSchema.migrations, scimMigration, scimProjectionMigration, scimGroupVersionMigration] };
      const old = await openDatabase(scratch.options, before, { logger: createLogger('silent') });
      try {
        const list = [uid(3), uid(1), uid(2), uid(1)];
        await old.fork().getConnection().execute(
          'insert into orgs_scim_groups (id, org_id, display_name, display_key, external_id, member_ids, version, created_at, updated_at) values (?, ?, ?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?, ?, ?)',
          [uid(801), ORG, 'Old', 'old', null, JSON.stringify(list), 3, 10, 10, uid(802), ORG, 'Empty', 'empty', 'x', '[]', 1, 11, 11]);
      } finally {
        await old.close();
      }
      const db = await openDatabase(scratch.options, { ...before, migrations: [...before.migrations, scimGroupMembersMigration] }, { logger: createLogger('silent') });
      try {
        const store = createMikroScimStore(db);
        expect(await store.groups.get(ORG, uid(801))).toMatchObject({ displayName: 'Old', version: 3 });
        expect(Object.fromEntries(await store.groups.members(ORG, [uid(801), uid(802)]))).toEqual({ [uid(801)]: [uid(3), uid(1), uid(2)], [uid(802)]: [] });
        expect((await store.groups.holding(ORG, uid(2))).map((x) => x.id)).toEqual([uid(801)]);
        // written after the migration: the next member goes last
        expect(await store.groups.update({ ...(await store.groups.get(ORG, uid(801)))!, version: 4 }, { remove: [], add: [uid(4)] }, [], 3)).toBe('updated');
        expect((await store.groups.members(ORG, [uid(801)])).get(uid(801))).toEqual([uid(3), uid(1), uid(2), uid(4)]);
      } finally {
        await db.close();
        await scratch.drop();
      }
    }, 60_000);
  });
}

/** One database of `type` with orgs' and SCIM's schema: a scratch SQL database, or one on a FerretDB of its own. */
async function openScimDatabase(type: DatabaseType): Promise<{ db: Database; close(): Promise<void> }> {
  const schema = { ...orgsSchema, entities: [...orgsSchema.entities, ...scimEntities], migrations: [...orgsSchema.migrations, scimMigration, scimProjectionMigration, scimGroupVersionMigration, scimGroupMembersMigration] };
  if (type !== 'mongodb') {
    const scratch = await openScratchService(type, schema);
    return { db: scratch.db, close: () => scratch.close() };
  }
  const ferret = await startFerretDb();
  const db = await openDatabase({ type, url: ferret.url(`scim_${randomBytes(6).toString('hex')}`) }, schema, { logger: createLogger('silent') });
  return { db, async close() { await db.close(); await ferret.stop(); } };
}

for (const type of ['sqlite', 'postgres', 'mariadb', 'mongodb'] as DatabaseType[]) {
  describe(`SCIM store on ${type}: a deleted user is forgotten (issue 32 §3)`, () => {
    let opened: Awaited<ReturnType<typeof openScimDatabase>>;
    beforeAll(async () => { opened = await openScimDatabase(type); }, 60_000);
    afterAll(async () => { await opened?.close(); });

    it('holding finds the groups that list a user; forget drops its rows in every org and takes it out of every group', async () => {
      const store = createMikroScimStore(opened.db);
      const ORG2 = '6b6b6b6b-0000-4000-8000-000000000002';
      const group = (n: number, orgId: string, memberIds: string[]) => ({ g: { id: uid(500 + n), orgId, displayName: `g${n}`, externalId: null, version: 1, createdAt: n, updatedAt: n }, memberIds });
      expect(await store.users.put(user(1))).toBe(true);
      expect(await store.users.put(user(1, { orgId: ORG2 }))).toBe(true);
      expect(await store.users.put(user(2))).toBe(true);
      // uid(1) is also a prefix of no other id: uid(11) must stay where it is
      for (const { g, memberIds } of [group(1, ORG, [uid(1), uid(2)]), group(2, ORG, [uid(11)]), group(3, ORG2, [uid(1)]), group(4, ORG, [uid(2), uid(1)])]) expect(await store.groups.insert(g, memberIds)).toBe(true);

      expect((await store.groups.holding(ORG, uid(1))).map((g) => g.id)).toEqual([uid(501), uid(504)]);
      expect((await store.groups.holding(ORG2, uid(1))).map((g) => g.id)).toEqual([uid(503)]);

      await store.users.forget(uid(1));
      await store.users.forget(uid(1)); // a redelivered user.deleted changes nothing more
      expect([await store.users.get(ORG, uid(1)), await store.users.get(ORG2, uid(1))]).toEqual([null, null]);
      expect((await store.users.get(ORG, uid(2)))?.userId).toBe(uid(2));
      const members = async (orgId: string, n: number) => (await store.groups.members(orgId, [uid(500 + n)])).get(uid(500 + n));
      expect([await members(ORG, 1), await members(ORG, 2), await members(ORG2, 3), await members(ORG, 4)]).toEqual([[uid(2)], [uid(11)], [], [uid(2)]]);
      expect(await store.groups.holding(ORG, uid(1))).toEqual([]);
      // a group that lost the user is at its next version (RFC 7644 §3.14); one that never held it is not
      expect([(await store.groups.get(ORG, uid(501)))?.version, (await store.groups.get(ORG, uid(502)))?.version]).toEqual([2, 1]);
    });
  });
}
