/**
 * @module test/storage/sql-text.test
 * No value is ever placed into SQL text, at runtime (issue 30 §5). libs/db/src/bound-parameters.test.ts
 * reads our own source; this test watches what the drivers under MikroORM are actually given. It
 * records every SQL text at the driver's last step before the wire, in this process:
 * - better-sqlite3: `Database#prepare` / `Database#exec` (the text SQLite compiles; values are bound
 *   to the statement afterwards);
 * - pg: `Connection#query` (simple query) and `Connection#parse` (the Parse message of the extended
 *   protocol; values travel in Bind, PostgreSQL protocol §55.2.3);
 * - mysql2: every command a connection queues (`addCommand`): a COM_QUERY's final text, after mysql2's
 *   client-side formatting of `query(sql, values)`, or a COM_STMT_PREPARE's text (values travel in
 *   COM_STMT_EXECUTE).
 * It then drives the storage paths that take user values with a sentinel inside each value (user
 * lookups by email, sessions, login attempts, audit rows, SCIM users and filters, authz tuples) on
 * SQLite, PostgreSQL and MariaDB, checks the values came back (they reached the database), and
 * asserts no recorded SQL text contains the sentinel.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomBytes, randomUUID } from 'node:crypto';
import BetterSqlite3 from 'better-sqlite3';
import mysql from 'mysql2';
import { openScratchService, type ScratchService } from '@gatehouse/db';
import { authnSchema, createMikroAuthnStorage } from '../../services/authn/src/storage/mikro/index.ts';
import { sampleUser } from '../../services/authn/src/storage/ports.suite.ts';
import { adminSchema } from '../../services/admin/src/storage/mikro/schema.ts';
import { createMikroAdminStore } from '../../services/admin/src/storage/mikro/store.ts';
import { orgsSchema } from '../../services/orgs/src/storage/mikro/schema.ts';
import { createMikroOrgsStore } from '../../services/orgs/src/storage/mikro/store.ts';
import { scimEntities, scimGroupMembersMigration, scimGroupVersionMigration, scimMigration, scimProjectionMigration } from '../../services/orgs/src/scim/storage/schema.ts';
import { createMikroScimStore } from '../../services/orgs/src/scim/storage/store.ts';
import { compileFilter } from '../../services/orgs/src/scim/filter.ts';
import { USER_FILTER } from '../../services/orgs/src/scim/users.ts';
import { fgaMigrations, sqlPortOf } from '../../services/authz/src/storage/sql/db-port.ts';
import { createSqlStore } from '../../services/authz/src/storage/sql/store.ts';

/** Every SQL text a driver was given since the test started, per driver. */
const seen = { sqlite: [] as string[], postgres: [] as string[], mariadb: [] as string[] };

/** Replaces `proto[name]` with a function that records its SQL text first. */
function tap(proto: Record<string, unknown>, name: string, into: string[], textOf: (arg: unknown) => unknown): void {
  const original = proto[name] as (...args: unknown[]) => unknown;
  proto[name] = function recorded(this: unknown, ...args: unknown[]) {
    const text = textOf(args[0]);
    if (typeof text === 'string') into.push(text);
    return original.apply(this, args);
  };
}

const field = (key: string) => (arg: unknown): unknown => (arg !== null && typeof arg === 'object' ? (arg as Record<string, unknown>)[key] : undefined);

beforeAll(async () => {
  tap(BetterSqlite3.prototype as never, 'prepare', seen.sqlite, (a) => a);
  tap(BetterSqlite3.prototype as never, 'exec', seen.sqlite, (a) => a);
  // `pg` ships no types here; the module name is not a literal so tsc does not look for them
  const pgName = 'pg';
  const pg = (await import(pgName)) as { default: { Connection: { prototype: Record<string, unknown> } } };
  tap(pg.default.Connection.prototype, 'query', seen.postgres, (a) => a);
  tap(pg.default.Connection.prototype, 'parse', seen.postgres, field('text'));
  // a Query command carries its final text in `sql`, a Prepare command in `query`
  tap(mysql.Connection.prototype as never, 'addCommand', seen.mariadb, (cmd) => field('sql')(cmd) ?? field('query')(cmd));
});

for (const type of ['sqlite', 'postgres', 'mariadb'] as const) {
  describe(`on ${type}, values reach the driver bound, never in SQL text`, () => {
    // lower case: some stores keep a lower-cased key of a value next to it
    const S = `zq${randomBytes(6).toString('hex')}`;
    const texts = seen[type];
    const services: ScratchService[] = [];
    const open = async (schema: Parameters<typeof openScratchService>[1]) => {
      const s = await openScratchService(type, schema);
      services.push(s);
      return s.db;
    };
    afterAll(async () => {
      for (const s of services) await s.close();
    });
    const withSentinel = (): string[] => texts.filter((t) => t.toLowerCase().includes(S));

    it('authn: signup, login lookups by email, the admin user search, sessions, login attempts', async () => {
      const authn = createMikroAuthnStorage(await open(authnSchema));
      const email = `ada.${S}@example.com`;
      const user = sampleUser({ email, givenName: `Ada ${S}`, familyName: `O'Brien ${S}`, nickname: `a\\${S}`, appData: { note: S } });
      await authn.users.transaction(async (tx) => tx.users.create(user));
      expect((await authn.users.findByEmail(email))?.givenName).toBe(`Ada ${S}`);
      expect((await authn.users.findByEmail(`nobody.${S}@example.com`))).toBeNull();
      expect((await authn.users.search(S, { limit: 10, offset: 0 })).rows.map((r) => r.id)).toEqual([user.id]);
      const handleHash = `${S}${'a'.repeat(64 - S.length)}`;
      const sid = randomUUID();
      await authn.sessions.create({ id: sid, userId: user.id, handleHash, loginMethod: 'basic_auth', roles: [`role-${S}`], scope: ['openid'], authTime: 1, expiresAt: 2_000_000_000, createdAt: 1 });
      expect((await authn.sessions.findByHandleHash(handleHash))?.roles).toEqual([`role-${S}`]);
      expect((await authn.lockout.claim(`login:${email}`, 1_800_000_000, 5, 900)).claimed).not.toBeNull();
      expect(await authn.lockout.attemptsSince(`login:${email}`, 0)).toEqual([1_800_000_000]);
      expect(texts.some((t) => /insert into [`"]?authn_users/i.test(t))).toBe(true);
      expect(withSentinel()).toEqual([]);
    });

    it('admin: audit rows written and filtered', async () => {
      const admin = createMikroAdminStore(await open(adminSchema), () => 1_800_000_000);
      const row = {
        id: randomUUID(), actorId: `actor-${S}`, actorType: 'user', actorEmail: `ada.${S}@example.com`, action: 'user.login',
        resourceType: 'user', resourceId: `res-${S}`, ipAddress: '203.0.113.7', userAgent: `agent ${S}`, metadata: JSON.stringify({ note: S }), createdAt: 1_800_000_000,
      };
      expect(await admin.auditLogs.insert(row)).toBe(true);
      const page = await admin.auditLogs.list({ actorId: `actor-${S}`, resourceId: `res-${S}` }, { limit: 10, offset: 0 });
      expect(page.rows.map((r) => r.userAgent)).toEqual([`agent ${S}`]);
      expect(texts.some((t) => /insert into [`"]?admin_audit/i.test(t))).toBe(true);
      expect(withSentinel()).toEqual([]);
    });

    it('orgs: an organization and its member, a SCIM user written, found by userName and by a SCIM filter', async () => {
      const db = await open({ ...orgsSchema, entities: [...orgsSchema.entities, ...scimEntities], migrations: [...orgsSchema.migrations, scimMigration, scimProjectionMigration, scimGroupVersionMigration, scimGroupMembersMigration] });
      const scim = createMikroScimStore(db);
      const orgId = randomUUID();
      const userId = randomUUID();
      // SCIM lists the org's members only
      await createMikroOrgsStore(db).transaction(async (tx) => {
        await tx.organizations.insert({ id: orgId, name: `org-${S}`, displayName: `Org ${S}`, enabled: true, createdAt: 1, updatedAt: 1 });
        await tx.members.insert({ id: randomUUID(), orgId, userId, roles: [`role-${S}`], createdAt: 1, updatedAt: 1 });
      });
      const u = {
        orgId, userId, externalId: `ext-${S}`, userName: `ada.${S}@example.com`, givenName: `Ada ${S}`, familyName: null, displayName: `Ada's ${S}`,
        emails: [{ value: `ada.${S}@example.com`, type: 'work', primary: true }], phoneNumbers: [], active: true, version: 1, createdAt: 1, updatedAt: 1,
      };
      expect(await scim.users.put(u)).not.toBe(false);
      expect((await scim.users.byUserName(orgId, `ADA.${S}@example.com`))?.externalId).toBe(`ext-${S}`);
      const where = compileFilter(`userName eq "ada.${S}@example.com" or emails.value co "${S}"`, USER_FILTER);
      const found = await scim.users.search(orgId, where, null, { offset: 0, limit: 10 });
      expect(found.rows.map((r) => r.externalId)).toEqual([`ext-${S}`]);
      expect(withSentinel()).toEqual([]);
    });

    it('authz: tuples written, read by object and by user, deleted', async () => {
      const authz = createSqlStore(sqlPortOf(await open({ service: 'authz', entities: [], migrations: fgaMigrations })));
      const tuple = { user: `user:${S}`, relation: 'viewer', object: `doc:${S}` };
      await authz.writeTuples([tuple], []);
      expect(await authz.readByObject('doc', S, 'viewer')).toEqual([expect.objectContaining(tuple)]);
      expect(await authz.readByUser(`user:${S}`, 'viewer', 'doc')).toEqual([expect.objectContaining(tuple)]);
      expect((await authz.deleteUserTuples(`user:${S}`)).deleted).toEqual([expect.objectContaining(tuple)]);
      expect(texts.some((t) => /fga_tuples/i.test(t))).toBe(true);
      expect(withSentinel()).toEqual([]);
    });
  });
}
