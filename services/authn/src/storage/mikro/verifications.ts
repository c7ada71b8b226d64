/**
 * @module @gatehouse/authn/storage/mikro/verifications
 * VerificationStore on MikroORM (`authn_verification_requests`), bound to a transaction's EntityManager.
 */
import type { EntityManager } from '@mikro-orm/core';
import type { VerificationPurpose, VerificationRequestRecord, VerificationStore } from '../ports.ts';
import { VerificationRequestEntity } from './entities.ts';

type Row = Record<string, unknown>;

const num = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));
const list = (v: unknown): string[] | null => (v === null || v === undefined ? null : (JSON.parse(String(v)) as string[]));

export function toRecord(r: Row): VerificationRequestRecord {
  return {
    id: String(r.id),
    identifier: String(r.identifier) as VerificationPurpose,
    email: String(r.email),
    tokenHash: String(r.tokenHash),
    expiresAt: Number(r.expiresAt),
    redirectUri: (r.redirectUri as string | null) ?? null,
    state: (r.state as string | null) ?? null,
    scope: list(r.scope),
    roles: list(r.roles),
    userId: (r.userId as string | null) ?? null,
    consumedAt: num(r.consumedAt),
    createdAt: Number(r.createdAt),
    updatedAt: Number(r.updatedAt),
  };
}

function toRow(v: VerificationRequestRecord): Row {
  return { ...v, scope: v.scope === null ? null : JSON.stringify(v.scope), roles: v.roles === null ? null : JSON.stringify(v.roles) };
}

const E = VerificationRequestEntity as never;
/** inside a transaction: re-read rows a nativeUpdate may have changed */
const READ = { refresh: true };

/** The VerificationStore of one transaction (`em` is the transaction's EntityManager). */
export function createMikroVerificationStore(em: EntityManager): VerificationStore {
  return {
    async issue(r) {
      await em.flush();
      await em.nativeUpdate(E, { email: r.email, identifier: r.identifier, consumedAt: null } as never, { consumedAt: r.createdAt, updatedAt: r.createdAt } as never);
      em.persist(em.create(E, toRow(r) as never));
      await em.flush();
    },
    async findByTokenHash(tokenHash) {
      const row = await em.findOne(E, { tokenHash } as never, READ as never);
      return row ? toRecord(row as Row) : null;
    },
    async findPending(email, identifier) {
      const rows = await em.find(E, { email, identifier, consumedAt: null } as never, { ...READ, orderBy: { createdAt: 'desc' }, limit: 1 } as never);
      return rows[0] ? toRecord(rows[0] as Row) : null;
    },
    async lastIssuedAt(email, identifier) {
      const rows = await em.find(E, { email, identifier } as never, { ...READ, orderBy: { createdAt: 'desc' }, limit: 1 } as never);
      return rows[0] ? Number((rows[0] as Row).createdAt) : null;
    },
    async consume(id, at) {
      const n = await em.nativeUpdate(E, { id, consumedAt: null } as never, { consumedAt: at, updatedAt: at } as never);
      return n === 1;
    },
    async deleteForUser(userId, emails) {
      await em.flush();
      const or: Row[] = [{ userId }, ...(emails.length > 0 ? [{ email: { $in: [...emails] } }] : [])];
      return em.nativeDelete(E, { $or: or } as never);
    },
  };
}
