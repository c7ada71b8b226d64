/**
 * @module orgs/samlidp/storage/store
 * {@link SamlIdpStore} on MikroORM through libs/db (SQLite, PostgreSQL, MySQL/MariaDB, MongoDB), on a
 * database opened with the entities and migration of ./schema.ts.
 */
import { createHash } from 'node:crypto';
import type { Database } from '@gatehouse/db';
import { enqueueEvents } from '../../storage/mikro/outbox.ts';
import { unlessDuplicate } from '../../storage/mikro/unique.ts';
import type { IdpKeyRecord, IdpKeyStatus, SamlIdpStore, ServiceProviderRecord } from './ports.ts';
import { SamlIdpKeyEntity, SamlIdpLogoutEntity, SamlIdpParticipantEntity, SamlServiceProviderEntity } from './schema.ts';

type SpRow = typeof SamlServiceProviderEntity['~entity'];
type KeyRow = typeof SamlIdpKeyEntity['~entity'];

const entityKey = (entityId: string): string => createHash('sha256').update(entityId, 'utf8').digest('hex');
const participantKey = (orgId: string, sessionId: string, spId: string): string => entityKey(`${orgId}:${sessionId}:${spId}`);

const toSp = (r: SpRow): ServiceProviderRecord => ({
  id: r.id, orgId: r.orgId, name: r.name, entityId: r.entityId, acsUrl: r.acsUrl, spCertPem: r.spCertPem ?? null,
  spEncryptionCertPem: r.spEncryptionCertPem ?? null, sloUrl: r.sloUrl ?? null,
  nameIdFormat: r.nameIdFormat, mappedAttributes: r.mappedAttributes ?? null, allowIdpInitiated: Boolean(r.allowIdpInitiated),
  isActive: Boolean(r.isActive), createdAt: Number(r.createdAt), updatedAt: Number(r.updatedAt),
});
const spRow = (sp: ServiceProviderRecord) => ({ ...sp, entityKey: entityKey(sp.entityId) });
const toKey = (r: KeyRow): IdpKeyRecord => ({
  id: r.id, orgId: r.orgId, certPem: r.certPem, privateKeySealed: r.privateKeySealed, algorithm: 'RS256',
  status: r.status as IdpKeyStatus, createdAt: Number(r.createdAt), updatedAt: Number(r.updatedAt),
});

const NEWEST_FIRST = { createdAt: 'desc', id: 'asc' } as const;

/** Builds the SAML IdP store on `db`. */
export function createMikroSamlIdpStore(db: Database): SamlIdpStore {
  return {
    providers: {
      insert: (sp, events = []) => unlessDuplicate(() => db.transactional(async (em) => {
        enqueueEvents(db, em, events);
        await em.insert(SamlServiceProviderEntity, spRow(sp));
      })),
      async update(sp, events = []) {
        let n = 0;
        const ok = await unlessDuplicate(() => db.transactional(async (em) => {
          n = await em.nativeUpdate(SamlServiceProviderEntity, { id: sp.id }, spRow(sp));
          if (n > 0) enqueueEvents(db, em, events);
        }));
        if (!ok) return 'conflict';
        return n > 0 ? 'updated' : 'missing';
      },
      async delete(id, events = []) {
        return db.transactional(async (em) => {
          const n = await em.nativeDelete(SamlServiceProviderEntity, { id });
          if (n > 0) enqueueEvents(db, em, events);
          return n > 0;
        });
      },
      async get(id) {
        const r = await db.fork().findOne(SamlServiceProviderEntity, { id });
        return r ? toSp(r) : null;
      },
      async byEntityId(orgId, entityId) {
        const r = await db.fork().findOne(SamlServiceProviderEntity, { orgId, entityKey: entityKey(entityId) });
        return r ? toSp(r) : null;
      },
      async list(orgId, page) {
        const [rows, total] = await db.fork().findAndCount(SamlServiceProviderEntity, { orgId }, { orderBy: NEWEST_FIRST, offset: page.offset, limit: page.limit });
        return { rows: rows.map(toSp), total };
      },
    },
    keys: {
      async get(id) {
        const r = await db.fork().findOne(SamlIdpKeyEntity, { id });
        return r ? toKey(r) : null;
      },
      async list(orgId) {
        return (await db.fork().find(SamlIdpKeyEntity, { orgId }, { orderBy: NEWEST_FIRST })).map(toKey);
      },
      async rotate(key, at, onlyIfNone = false, events = []) {
        return db.transactional(async (em) => {
          const current = await em.find(SamlIdpKeyEntity, { orgId: key.orgId, status: 'current' });
          if (onlyIfNone && current.length > 0) return false;
          if (current.length > 0) await em.nativeUpdate(SamlIdpKeyEntity, { orgId: key.orgId, status: 'current' }, { status: 'active', updatedAt: at });
          enqueueEvents(db, em, events);
          await em.insert(SamlIdpKeyEntity, key);
          return true;
        });
      },
      async stage(key, at, events = []) {
        await db.transactional(async (em) => {
          await em.nativeUpdate(SamlIdpKeyEntity, { orgId: key.orgId, status: 'pending' }, { status: 'retired', updatedAt: at });
          enqueueEvents(db, em, events);
          await em.insert(SamlIdpKeyEntity, key);
        });
      },
      async promote(orgId, at, events) {
        return db.transactional(async (em) => {
          const pending = await em.findOne(SamlIdpKeyEntity, { orgId, status: 'pending' });
          if (!pending) return null;
          // compare-and-set: of two concurrent switches, one moves the keys
          if ((await em.nativeUpdate(SamlIdpKeyEntity, { id: pending.id, status: 'pending' }, { status: 'current', updatedAt: at })) === 0) return null;
          await em.nativeUpdate(SamlIdpKeyEntity, { orgId, status: 'current', id: { $ne: pending.id } }, { status: 'active', updatedAt: at });
          const key = { ...toKey(pending), status: 'current' as const, updatedAt: at };
          if (events) enqueueEvents(db, em, events(key));
          return key;
        });
      },
      async retire(id, at, events = []) {
        return db.transactional(async (em) => {
          const r = await em.findOne(SamlIdpKeyEntity, { id });
          if (!r) return null;
          const status = r.status as IdpKeyStatus;
          // compare-and-set: of two concurrent retires, one writes the row (and its audit row)
          const retirable = status === 'active' || status === 'pending';
          if (retirable && (await em.nativeUpdate(SamlIdpKeyEntity, { id, status }, { status: 'retired', updatedAt: at })) > 0) {
            enqueueEvents(db, em, events);
            return status;
          }
          return retirable ? 'retired' : status;
        });
      },
    },
    participants: {
      async record(p) {
        const id = participantKey(p.orgId, p.sessionId, p.spId);
        await db.transactional(async (em) => {
          await em.nativeDelete(SamlIdpParticipantEntity, { id });
          await em.insert(SamlIdpParticipantEntity, { id, ...p });
        });
      },
      async take(orgId, sessionId, now) {
        const em = db.fork();
        const rows = await em.find(SamlIdpParticipantEntity, { orgId, sessionId }, { orderBy: { issuedAt: 'asc', id: 'asc' } });
        const out = [];
        for (const r of rows) {
          // the delete decides: of two logouts of one session, each row goes to one of them
          if ((await em.nativeDelete(SamlIdpParticipantEntity, { id: r.id })) === 0 || Number(r.expiresAt) <= now) continue;
          out.push({
            orgId: r.orgId, sessionId: r.sessionId, spId: r.spId, nameId: r.nameId, nameIdFormat: r.nameIdFormat, sessionIndex: r.sessionIndex,
            issuedAt: Number(r.issuedAt), expiresAt: Number(r.expiresAt),
          });
        }
        return out;
      },
    },
    logouts: {
      async put(p) {
        await db.fork().insert(SamlIdpLogoutEntity, { id: p.requestId, orgId: p.orgId, data: p.data, expiresAt: p.expiresAt });
      },
      async take(requestId, now) {
        const em = db.fork();
        const r = await em.findOne(SamlIdpLogoutEntity, { id: requestId });
        if (!r) return null;
        // single use across replicas: the delete decides
        if ((await em.nativeDelete(SamlIdpLogoutEntity, { id: requestId })) === 0 || Number(r.expiresAt) <= now) return null;
        return { requestId: r.id, orgId: r.orgId, data: r.data, expiresAt: Number(r.expiresAt) };
      },
    },
  };
}
