/**
 * @module @gatehouse/authn/storage/mikro/identities
 * IdentityLinkStore on MikroORM (`authn_identity_links`, issue 20), bound to a transaction's
 * EntityManager. The unique index on (issuer, subject) (migration 0008) makes a concurrent second
 * link of one upstream identity fail its transaction.
 */
import type { EntityManager } from '@mikro-orm/core';
import type { IdentityLinkRecord, IdentityLinkStore } from '../ports.ts';
import { IdentityLinkEntity } from './entities.ts';

type Row = Record<string, unknown>;
const E = IdentityLinkEntity as never;

function toRecord(r: Row): IdentityLinkRecord {
  return {
    id: String(r.id),
    issuer: String(r.issuer),
    subject: String(r.subject),
    userId: String(r.userId),
    method: String(r.method),
    createdAt: Number(r.createdAt),
  };
}

/** The IdentityLinkStore of one transaction (`em` is the transaction's EntityManager). */
export function createMikroIdentityLinkStore(em: EntityManager): IdentityLinkStore {
  return {
    async find(issuer, subject) {
      const row = await em.findOne(E, { issuer, subject } as never);
      return row ? toRecord(row as Row) : null;
    },
    async link(r) {
      em.persist(em.create(E, { ...r } as never));
      await em.flush();
    },
    async unlink(id) {
      await em.flush();
      await em.nativeDelete(E, { id } as never);
    },
    async deleteForUser(userId) {
      await em.flush();
      return em.nativeDelete(E, { userId } as never);
    },
  };
}
