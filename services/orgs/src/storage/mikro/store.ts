/**
 * @module @gatehouse/orgs/storage/mikro/store
 * {@link OrgsStore} on MikroORM through libs/db (SQLite, PostgreSQL, MySQL, MariaDB).
 */
import { randomUUID } from 'node:crypto';
import { IsolationLevel, LockMode, UniqueConstraintViolationException, type EntityManager } from '@mikro-orm/core';
import { newEnvelope } from '@gatehouse/bus';
import type { Database } from '@gatehouse/db';
import {
  ORG_ADMIN_ROLE, type DomainRecord, type MemberRecord, type OrganizationRecord, type OrgsStore, type OrgsTransaction,
  type PageOf, type PageWindow,
} from '../ports.ts';
import { DomainAttemptEntity, DomainEntity, MemberEntity, OrganizationEntity, orgScopedTables } from './schema.ts';

type OrgRow = typeof OrganizationEntity['~entity'];
type MemberRow = typeof MemberEntity['~entity'];
type DomainRow = typeof DomainEntity['~entity'];

const toOrg = (r: OrgRow): OrganizationRecord => ({
  id: r.id, name: r.name, displayName: r.displayName ?? null, enabled: Boolean(r.enabled),
  createdAt: Number(r.createdAt), updatedAt: Number(r.updatedAt),
});
const toMember = (r: MemberRow): MemberRecord => ({
  id: r.id, orgId: r.orgId, userId: r.userId,
  // written by this store from a string array
  roles: JSON.parse(r.roles) as string[],
  createdAt: Number(r.createdAt), updatedAt: Number(r.updatedAt),
});
const memberRow = (m: MemberRecord) => ({ ...m, roles: JSON.stringify(m.roles), isOrgAdmin: m.roles.includes(ORG_ADMIN_ROLE) });
const toDomain = (r: DomainRow): DomainRecord => ({
  orgId: r.orgId, domain: r.domain, verifiedAt: r.verifiedAt == null ? null : Number(r.verifiedAt),
  challengeToken: r.challengeToken ?? null, challengeExpiresAt: r.challengeExpiresAt == null ? null : Number(r.challengeExpiresAt),
  createdAt: Number(r.createdAt), updatedAt: Number(r.updatedAt),
});

const NEWEST_FIRST = { createdAt: 'desc', id: 'desc' } as const;

async function page<R extends object, T>(
  em: EntityManager, entity: any, where: object, window: PageWindow, map: (r: R) => T,
): Promise<PageOf<T>> {
  const [rows, total] = await em.findAndCount(entity, where as never, { orderBy: NEWEST_FIRST as never, offset: window.offset, limit: window.limit });
  return { rows: (rows as R[]).map(map), total };
}

/** Runs an insert; false when a unique index refused it. */
async function insertUnique(em: EntityManager, entity: any, row: object): Promise<boolean> {
  try {
    await em.insert(entity, row);
    return true;
  } catch (err) {
    if (err instanceof UniqueConstraintViolationException) return false;
    throw err;
  }
}

function readsOf(em: () => EntityManager) {
  return {
    async org(id: string) {
      const r = await em().findOne(OrganizationEntity, { id });
      return r ? toOrg(r) : null;
    },
    async member(orgId: string, userId: string) {
      const r = await em().findOne(MemberEntity, { orgId, userId });
      return r ? toMember(r) : null;
    },
    async domain(orgId: string, domain: string) {
      const r = await em().findOne(DomainEntity, { orgId, domain });
      return r ? toDomain(r) : null;
    },
    async verified(domain: string) {
      const r = await em().findOne(DomainEntity, { verifiedDomain: domain });
      return r ? toDomain(r) : null;
    },
  };
}

/**
 * Builds the store on a database opened with `orgsSchema`.
 * @param clock Unix seconds, stamped on outbox envelopes
 */
export function createMikroOrgsStore(db: Database, clock: () => number = () => Math.floor(Date.now() / 1000)): OrgsStore {
  const reads = readsOf(() => db.fork());
  return {
    organizations: {
      get: reads.org,
      async byName(name) {
        const r = await db.fork().findOne(OrganizationEntity, { name });
        return r ? toOrg(r) : null;
      },
      list: (w) => page<OrgRow, OrganizationRecord>(db.fork(), OrganizationEntity, {}, w, toOrg),
    },
    members: {
      get: reads.member,
      async isOrgAdmin(userId, orgId) {
        return (await db.fork().count(MemberEntity, { orgId, userId, isOrgAdmin: true })) > 0;
      },
      list: (orgId, w) => page<MemberRow, MemberRecord>(db.fork(), MemberEntity, { orgId }, w, toMember),
      async ofUser(userId, w) {
        const em = db.fork();
        const members = await page<MemberRow, MemberRecord>(em, MemberEntity, { userId }, w, toMember);
        const orgs = members.rows.length === 0 ? [] : await em.find(OrganizationEntity, { id: { $in: members.rows.map((m) => m.orgId) } });
        const byId = new Map(orgs.map((o) => [o.id, toOrg(o)]));
        const rows = members.rows.flatMap((member) => {
          const organization = byId.get(member.orgId);
          return organization ? [{ organization, member }] : [];
        });
        return { rows, total: members.total };
      },
    },
    domains: {
      get: reads.domain,
      verified: reads.verified,
      list(orgId, now, w) {
        const where = { orgId, $or: [{ verifiedAt: { $ne: null } }, { challengeExpiresAt: { $gt: now } }] };
        return page<DomainRow, DomainRecord>(db.fork(), DomainEntity, where, w, toDomain);
      },
    },
    transaction(fn) {
      return db.transactional((em) => fn(transactionOf(db, em, clock)), { isolationLevel: IsolationLevel.READ_COMMITTED });
    },
  };
}

function transactionOf(db: Database, em: EntityManager, clock: () => number): OrgsTransaction {
  const reads = readsOf(() => em);
  return {
    organizations: {
      get: reads.org,
      insert: (o) => insertUnique(em, OrganizationEntity, o),
      async update(o) {
        const other = await em.findOne(OrganizationEntity, { name: o.name, id: { $ne: o.id } });
        if (other) return 'conflict';
        const { id, ...rest } = o;
        try {
          return (await em.nativeUpdate(OrganizationEntity, { id }, rest)) === 1 ? 'updated' : 'missing';
        } catch (err) {
          if (err instanceof UniqueConstraintViolationException) return 'conflict';
          throw err;
        }
      },
      async delete(id) {
        for (const t of orgScopedTables()) await em.nativeDelete(t.entity, { [t.orgProperty]: id });
        return (await em.nativeDelete(OrganizationEntity, { id })) === 1;
      },
    },
    members: {
      get: reads.member,
      insert: (m) => insertUnique(em, MemberEntity, memberRow(m)),
      async delete(orgId, userId) {
        return (await em.nativeDelete(MemberEntity, { orgId, userId })) === 1;
      },
      async update(m) {
        const { roles, isOrgAdmin } = memberRow(m);
        return (await em.nativeUpdate(MemberEntity, { orgId: m.orgId, userId: m.userId }, { roles, isOrgAdmin, updatedAt: m.updatedAt })) === 1;
      },
      countAdmins: (orgId) => em.count(MemberEntity, { orgId, isOrgAdmin: true }),
      async deleteUser(userId) {
        const rows = await em.find(MemberEntity, { userId });
        await em.nativeDelete(MemberEntity, { userId });
        return rows.map((r) => r.orgId);
      },
    },
    domains: {
      get: reads.domain,
      verified: reads.verified,
      async upsert(d) {
        const row = { ...d, verifiedDomain: d.verifiedAt === null ? null : d.domain };
        const updated = await em.nativeUpdate(DomainEntity, { orgId: d.orgId, domain: d.domain }, row);
        if (updated === 0) await em.insert(DomainEntity, { id: randomUUID(), ...row });
      },
      async markVerified(orgId, domain, at) {
        // every entry of the domain, locked in one order: concurrent verifiers queue here instead of
        // deadlocking on each other's rows (SQLite serialises writers by itself)
        if (db.type !== 'sqlite') await em.find(DomainEntity, { domain }, { orderBy: { id: 'asc' }, lockMode: LockMode.PESSIMISTIC_WRITE });
        const own = await em.findOne(DomainEntity, { orgId, domain }, { refresh: true });
        if (!own) return 'missing';
        const holder = await em.findOne(DomainEntity, { verifiedDomain: domain }, { refresh: true });
        if (holder && holder.orgId !== orgId) return 'lost';
        try {
          const updated = await em.nativeUpdate(DomainEntity, { orgId, domain, verifiedAt: null }, {
            verifiedDomain: domain, verifiedAt: at, challengeToken: null, challengeExpiresAt: null, updatedAt: at,
          });
          // the pending entry was removed meanwhile by another org's verification, which committed first
          if (updated !== 1) return own.verifiedAt === null ? 'lost' : 'verified';
        } catch (err) {
          // a concurrent verification by another org committed first (the unique index decides)
          if (err instanceof UniqueConstraintViolationException) return 'lost';
          throw err;
        }
        await em.nativeDelete(DomainEntity, { domain, orgId: { $ne: orgId }, verifiedAt: null });
        return 'verified';
      },
      async delete(orgId, domain) {
        return (await em.nativeDelete(DomainEntity, { orgId, domain })) === 1;
      },
    },
    attempts: {
      async record(orgId, kind, at) {
        await em.insert(DomainAttemptEntity, { id: randomUUID(), orgId, kind, createdAt: at });
      },
      count: (orgId, kind, since) => em.count(DomainAttemptEntity, { orgId, kind, createdAt: { $gte: since } }),
    },
    events: {
      emit(name, data) {
        db.outbox.enqueue(em, { ...newEnvelope(name, 'orgs', data), occurredAt: clock() });
      },
    },
  };
}
