/**
 * @module @gatehouse/orgs/storage/ports.suite
 * Conformance suite every {@link OrgsStore} implementation passes (STYLE §8): SQLite (unit run),
 * PostgreSQL and MariaDB (integration run). Titles use behaviour.md §6.1, §6.2 and §10.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Envelope } from '@gatehouse/bus';
import { ORG_ADMIN_ROLE, type DomainRecord, type MemberRecord, type OrganizationRecord, type OrgsStore } from './ports.ts';

export interface OrgsStoreHandle {
  readonly store: OrgsStore;
  /** every envelope committed so far, in commit order (the rows of `orgs_outbox`) */
  outbox(): Promise<Envelope[]>;
  close(): Promise<void>;
}

/** `open` gets the clock (Unix seconds) the store must stamp on the envelopes it writes. */
export type OpenOrgsStore = (clock: () => number) => Promise<OrgsStoreHandle>;

/** A year-2100 time: past 2^31, so 32-bit columns would not hold it. */
const Y2100 = 4_102_444_800;
const T0 = 1_700_000_000;

const org = (over: Partial<OrganizationRecord> = {}): OrganizationRecord => ({
  id: randomUUID(), name: `org-${randomUUID().slice(0, 8)}`, displayName: 'Acme', enabled: true, createdAt: T0, updatedAt: T0, ...over,
});
const member = (orgId: string, over: Partial<MemberRecord> = {}): MemberRecord => ({
  id: randomUUID(), orgId, userId: randomUUID(), roles: [], createdAt: T0, updatedAt: T0, ...over,
});
const pending = (orgId: string, domain: string, over: Partial<DomainRecord> = {}): DomainRecord => ({
  orgId, domain, verifiedAt: null, challengeToken: 'a'.repeat(52), challengeExpiresAt: T0 + 86_400, createdAt: T0, updatedAt: T0, ...over,
});
const W = { offset: 0, limit: 100 };

/** Registers the suite for one implementation. `open` runs once in beforeAll; tests share the store. */
export function describeOrgsStore(name: string, open: OpenOrgsStore): void {
  describe(`OrgsStore conformance: ${name}`, () => {
    let h: OrgsStoreHandle;
    let s: OrgsStore;
    beforeAll(async () => {
      h = await open(() => Y2100);
      s = h.store;
    });
    afterAll(async () => { await h?.close(); });

    const addOrg = async (over: Partial<OrganizationRecord> = {}): Promise<OrganizationRecord> => {
      const o = org(over);
      expect(await s.transaction((tx) => tx.organizations.insert(o))).toBe(true);
      return o;
    };

    describe('organizations (behaviour.md §6.1)', () => {
      it('stores an organization with a year-2100 time and reads it by id and by name', async () => {
        const o = await addOrg({ createdAt: Y2100, updatedAt: Y2100, displayName: null });
        expect(await s.organizations.get(o.id)).toEqual(o);
        expect(await s.organizations.byName(o.name)).toEqual(o);
        expect(await s.organizations.get(randomUUID())).toBeNull();
      });

      it('refuses a second organization with the same name', async () => {
        const o = await addOrg();
        expect(await s.transaction((tx) => tx.organizations.insert(org({ name: o.name })))).toBe(false);
      });

      it('update replaces the row, reports a taken name and an unknown id', async () => {
        const a = await addOrg();
        const b = await addOrg();
        const renamed = { ...a, name: `${a.name}-x`, enabled: false, updatedAt: T0 + 5 };
        expect(await s.transaction((tx) => tx.organizations.update(renamed))).toBe('updated');
        expect(await s.organizations.get(a.id)).toEqual(renamed);
        expect(await s.transaction((tx) => tx.organizations.update({ ...renamed, name: b.name }))).toBe('conflict');
        expect(await s.transaction((tx) => tx.organizations.update(org()))).toBe('missing');
      });

      it('lists newest first with the total (§10)', async () => {
        const older = await addOrg({ createdAt: T0 + 100 });
        const newer = await addOrg({ createdAt: T0 + 200 });
        const all = await s.organizations.list({ offset: 0, limit: 1000 });
        const ids = all.rows.map((o) => o.id);
        expect(ids.indexOf(newer.id)).toBeLessThan(ids.indexOf(older.id));
        expect(all.total).toBe(all.rows.length);
        expect((await s.organizations.list({ offset: all.total, limit: 10 })).rows).toEqual([]);
      });

      it('delete removes the organization with its members, domains and attempts, in one transaction with its event', async () => {
        const o = await addOrg();
        const m = member(o.id, { roles: [ORG_ADMIN_ROLE] });
        await s.transaction(async (tx) => {
          await tx.members.insert(m);
          await tx.domains.upsert(pending(o.id, `${o.name}.example`));
          await tx.attempts.record(o.id, 'request', T0);
        });
        expect(await s.transaction(async (tx) => {
          tx.events.emit('organization.deleted', { org_id: o.id });
          return tx.organizations.delete(o.id);
        })).toBe(true);
        expect(await s.organizations.get(o.id)).toBeNull();
        expect(await s.members.get(o.id, m.userId)).toBeNull();
        expect(await s.domains.get(o.id, `${o.name}.example`)).toBeNull();
        expect(await s.transaction((tx) => tx.attempts.count(o.id, 'request', 0))).toBe(0);
        expect((await h.outbox()).filter((e) => e.name === 'organization.deleted').map((e) => e.data)).toContainEqual({ org_id: o.id });
        expect(await s.transaction((tx) => tx.organizations.delete(o.id))).toBe(false);
      });

      it('a failed transaction writes nothing, its events included', async () => {
        const o = org();
        await expect(s.transaction(async (tx) => {
          await tx.organizations.insert(o);
          tx.events.emit('organization.deleted', { org_id: o.id });
          throw new Error('boom');
        })).rejects.toThrow('boom');
        expect(await s.organizations.get(o.id)).toBeNull();
        expect((await h.outbox()).some((e) => (e.data as { org_id?: string }).org_id === o.id)).toBe(false);
      });
    });

    describe('members (behaviour.md §6.1)', () => {
      it('stores a membership with its roles, refuses a duplicate, and answers the org-admin lookup', async () => {
        const o = await addOrg();
        const admin = member(o.id, { roles: ['billing', ORG_ADMIN_ROLE] });
        const plain = member(o.id, { roles: ['admin'] });
        await s.transaction(async (tx) => {
          expect(await tx.members.insert(admin)).toBe(true);
          expect(await tx.members.insert(plain)).toBe(true);
        });
        expect(await s.transaction((tx) => tx.members.insert(member(o.id, { userId: admin.userId })))).toBe(false);
        expect(await s.members.get(o.id, admin.userId)).toEqual(admin);
        expect(await s.members.isOrgAdmin(admin.userId, o.id)).toBe(true);
        expect(await s.members.isOrgAdmin(plain.userId, o.id)).toBe(false);
        expect(await s.members.isOrgAdmin(admin.userId, randomUUID())).toBe(false);
        expect(await s.transaction((tx) => tx.members.countAdmins(o.id))).toBe(1);
      });

      it('replaces a membership\'s roles and the org-admin flag that follows them', async () => {
        const o = await addOrg();
        const m = member(o.id, { roles: ['billing', ORG_ADMIN_ROLE] });
        await s.transaction(async (tx) => { await tx.members.insert(m); });
        const next = { ...m, roles: ['viewer'], updatedAt: m.updatedAt + 1 };
        expect(await s.transaction((tx) => tx.members.update(next))).toBe(true);
        expect(await s.members.get(o.id, m.userId)).toEqual(next);
        expect(await s.members.isOrgAdmin(m.userId, o.id)).toBe(false);
        expect(await s.transaction((tx) => tx.members.countAdmins(o.id))).toBe(0);
        expect(await s.transaction((tx) => tx.members.update({ ...next, userId: randomUUID() }))).toBe(false);
      });

      it('lists an org\'s members newest first, and a user\'s memberships with their organizations', async () => {
        const a = await addOrg();
        const b = await addOrg();
        const userId = randomUUID();
        const m1 = member(a.id, { userId, createdAt: T0 + 1, roles: ['x'] });
        const m2 = member(b.id, { userId, createdAt: T0 + 2 });
        const other = member(a.id, { createdAt: T0 + 3 });
        await s.transaction(async (tx) => {
          for (const m of [m1, m2, other]) await tx.members.insert(m);
        });
        expect(await s.members.list(a.id, W)).toEqual({ rows: [other, m1], total: 2 });
        expect(await s.members.list(a.id, { offset: 1, limit: 1 })).toEqual({ rows: [m1], total: 2 });
        expect(await s.members.ofUser(userId, W)).toEqual({ rows: [{ organization: b, member: m2 }, { organization: a, member: m1 }], total: 2 });
      });

      it('deletes one membership, and every membership of a deleted user', async () => {
        const a = await addOrg();
        const b = await addOrg();
        const userId = randomUUID();
        await s.transaction(async (tx) => {
          await tx.members.insert(member(a.id, { userId }));
          await tx.members.insert(member(b.id, { userId }));
        });
        expect(await s.transaction((tx) => tx.members.delete(a.id, userId))).toBe(true);
        expect(await s.transaction((tx) => tx.members.delete(a.id, userId))).toBe(false);
        expect(await s.transaction((tx) => tx.members.deleteUser(userId))).toEqual([b.id]);
        expect((await s.members.ofUser(userId, W)).total).toBe(0);
      });
    });

    describe('domains (behaviour.md §6.2)', () => {
      it('upserts a pending entry, replacing its challenge on repeat', async () => {
        const o = await addOrg();
        const d = pending(o.id, `${o.name}.example`);
        await s.transaction((tx) => tx.domains.upsert(d));
        const again = { ...d, challengeToken: 'b'.repeat(52), challengeExpiresAt: Y2100, updatedAt: T0 + 9 };
        await s.transaction((tx) => tx.domains.upsert(again));
        expect(await s.domains.get(o.id, d.domain)).toEqual(again);
        expect(await s.domains.verified(d.domain)).toBeNull();
      });

      it('first verifier wins; the other orgs\' pending entries are removed', async () => {
        const a = await addOrg();
        const b = await addOrg();
        const c = await addOrg();
        const domain = `${a.name}.race.example`;
        await s.transaction(async (tx) => {
          for (const o of [a, b, c]) await tx.domains.upsert(pending(o.id, domain));
        });
        expect(await s.transaction((tx) => tx.domains.markVerified(a.id, domain, T0 + 10))).toBe('verified');
        expect(await s.domains.verified(domain)).toEqual({
          orgId: a.id, domain, verifiedAt: T0 + 10, challengeToken: null, challengeExpiresAt: null, createdAt: T0, updatedAt: T0 + 10,
        });
        expect(await s.domains.get(b.id, domain)).toBeNull();
        expect(await s.domains.get(c.id, domain)).toBeNull();
        await s.transaction((tx) => tx.domains.upsert(pending(b.id, domain)));
        await expect(s.transaction((tx) => tx.domains.markVerified(b.id, domain, T0 + 11))).resolves.toBe('lost');
        expect(await s.transaction((tx) => tx.domains.markVerified(c.id, domain, T0 + 11))).toBe('missing');
      });

      it('two concurrent verifications of one domain: exactly one wins', async () => {
        const a = await addOrg();
        const b = await addOrg();
        const domain = `${a.name}.concurrent.example`;
        await s.transaction(async (tx) => {
          await tx.domains.upsert(pending(a.id, domain));
          await tx.domains.upsert(pending(b.id, domain));
        });
        const outcomes = await Promise.all([a, b].map((o) => s.transaction((tx) => tx.domains.markVerified(o.id, domain, T0 + 20)).catch((e: unknown) => e)));
        expect(outcomes.filter((o) => o === 'verified')).toHaveLength(1);
        const winner = outcomes[0] === 'verified' ? a : b;
        expect((await s.domains.verified(domain))?.orgId).toBe(winner.id);
        expect(await s.domains.get(winner === a ? b.id : a.id, domain).then((d) => d?.verifiedAt ?? null)).toBeNull();
      });

      it('lists verified and unexpired pending entries only', async () => {
        const o = await addOrg();
        const live = pending(o.id, `live.${o.name}.example`, { challengeExpiresAt: T0 + 100, createdAt: T0 + 2 });
        const expired = pending(o.id, `old.${o.name}.example`, { challengeExpiresAt: T0 - 1 });
        const done = pending(o.id, `done.${o.name}.example`, { createdAt: T0 + 1 });
        await s.transaction(async (tx) => {
          for (const d of [live, expired, done]) await tx.domains.upsert(d);
          await tx.domains.markVerified(o.id, done.domain, T0 + 1);
        });
        const listed = await s.domains.list(o.id, T0, W);
        expect(listed.total).toBe(2);
        expect(listed.rows.map((d) => d.domain)).toEqual([live.domain, done.domain]);
        expect(await s.transaction((tx) => tx.domains.delete(o.id, live.domain))).toBe(true);
        expect(await s.transaction((tx) => tx.domains.delete(o.id, live.domain))).toBe(false);
      });

      it('counts the per-org hourly attempts by kind (§10)', async () => {
        const o = await addOrg();
        await s.transaction(async (tx) => {
          await tx.attempts.record(o.id, 'request', T0);
          await tx.attempts.record(o.id, 'request', T0 + 3600);
          await tx.attempts.record(o.id, 'verify', T0 + 3600);
        });
        expect(await s.transaction((tx) => tx.attempts.count(o.id, 'request', T0 + 1))).toBe(1);
        expect(await s.transaction((tx) => tx.attempts.count(o.id, 'request', T0))).toBe(2);
        expect(await s.transaction((tx) => tx.attempts.count(o.id, 'verify', 0))).toBe(1);
      });
    });
  });
}
