/**
 * @module scim-store.int.test
 * The SCIM users' store (behaviour.md §6.4; issue 31) on SQLite, the machine's PostgreSQL and MariaDB (a
 * fresh database each): the filter grammar compiled to SQL runs in each dialect and selects the right
 * rows (value paths over the emails/phoneNumbers rows, and/or/not, case-insensitive strings, booleans,
 * instants), userName is unique per org case-insensitively, If-Match's versioned write refuses a stale
 * version, and members added outside SCIM are found for projection exactly once.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { openDatabase, openScratchService, type Database, type DatabaseType, type ScratchService } from '@gatehouse/db';
import { createLogger } from '@gatehouse/observability';
import { startFerretDb } from '@gatehouse/testing';
import { orgsSchema } from '../src/storage/mikro/schema.ts';
import { createMikroOrgsStore } from '../src/storage/mikro/store.ts';
import { compileFilter } from '../src/scim/filter.ts';
import { scimEntities, scimMigration, scimProjectionMigration } from '../src/scim/storage/schema.ts';
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
      scratch = await openScratchService(type, { ...orgsSchema, entities: [...orgsSchema.entities, ...scimEntities], migrations: [...orgsSchema.migrations, scimMigration, scimProjectionMigration] });
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
}

/** One database of `type` with orgs' and SCIM's schema: a scratch SQL database, or one on a FerretDB of its own. */
async function openScimDatabase(type: DatabaseType): Promise<{ db: Database; close(): Promise<void> }> {
  const schema = { ...orgsSchema, entities: [...orgsSchema.entities, ...scimEntities], migrations: [...orgsSchema.migrations, scimMigration, scimProjectionMigration] };
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
      const group = (n: number, orgId: string, memberIds: string[]) => ({ id: uid(500 + n), orgId, displayName: `g${n}`, externalId: null, memberIds, createdAt: n, updatedAt: n });
      expect(await store.users.put(user(1))).toBe(true);
      expect(await store.users.put(user(1, { orgId: ORG2 }))).toBe(true);
      expect(await store.users.put(user(2))).toBe(true);
      // uid(1) is also a prefix of no other id: uid(11) must stay where it is
      for (const g of [group(1, ORG, [uid(1), uid(2)]), group(2, ORG, [uid(11)]), group(3, ORG2, [uid(1)]), group(4, ORG, [uid(2), uid(1)])]) expect(await store.groups.insert(g)).toBe(true);

      expect((await store.groups.holding(ORG, uid(1))).map((g) => g.id)).toEqual([uid(501), uid(504)]);
      expect((await store.groups.holding(ORG2, uid(1))).map((g) => g.id)).toEqual([uid(503)]);

      await store.users.forget(uid(1));
      await store.users.forget(uid(1)); // a redelivered user.deleted changes nothing more
      expect([await store.users.get(ORG, uid(1)), await store.users.get(ORG2, uid(1))]).toEqual([null, null]);
      expect((await store.users.get(ORG, uid(2)))?.userId).toBe(uid(2));
      const members = async (orgId: string, n: number) => (await store.groups.get(orgId, uid(500 + n)))?.memberIds;
      expect([await members(ORG, 1), await members(ORG, 2), await members(ORG2, 3), await members(ORG, 4)]).toEqual([[uid(2)], [uid(11)], [], [uid(2)]]);
      expect(await store.groups.holding(ORG, uid(1))).toEqual([]);
    });
  });
}
