/**
 * @module orgs/sso/storage/store
 * {@link SsoStore} on MikroORM through libs/db (SQLite, PostgreSQL, MySQL/MariaDB and MongoDB), on a
 * database opened with the SSO entities and migration of ./schema.ts. The unique keys (org, issuer,
 * IdP entity id, assertion id) are unique indexes, so two replicas cannot both win a race.
 */
import { createHash } from 'node:crypto';
import type { Database } from '@gatehouse/db';
import type { OidcConnectionRecord, PendingLoginRecord, SamlConnectionRecord, SsoStore } from './ports.ts';
import { unlessDuplicate } from '../../storage/mikro/unique.ts';
import { enqueueEvents, type TxManager } from '../../storage/mikro/outbox.ts';
import type { OutboxEvent } from '../../storage/ports.ts';
import { OidcConnectionEntity, SamlAssertionEntity, SamlConnectionEntity, SsoPendingEntity } from './schema.ts';

type OidcRow = typeof OidcConnectionEntity['~entity'];
type SamlRow = typeof SamlConnectionEntity['~entity'];

/** sha-256 hex: the indexed key of a long unique string */
export const keyOf = (s: string): string => createHash('sha256').update(s, 'utf8').digest('hex');

const toOidc = (r: OidcRow): OidcConnectionRecord => ({
  id: r.id, orgId: r.orgId, name: r.name, issuerUrl: r.issuerUrl, clientId: r.clientId, clientSecretSealed: r.clientSecretSealed,
  scopes: r.scopes ?? null, redirectUri: r.redirectUri ?? null, isActive: Boolean(r.isActive), createdAt: Number(r.createdAt), updatedAt: Number(r.updatedAt),
});
const oidcRow = (c: OidcConnectionRecord) => ({ ...c, issuerKey: keyOf(c.issuerUrl) });
const toSaml = (r: SamlRow): SamlConnectionRecord => ({
  id: r.id, orgId: r.orgId, name: r.name, idpEntityId: r.idpEntityId, idpSsoUrl: r.idpSsoUrl, idpCertificate: r.idpCertificate,
  spEntityId: r.spEntityId ?? null, acsUrl: r.acsUrl ?? null, attributeMapping: r.attributeMapping ?? null,
  allowIdpInitiated: Boolean(r.allowIdpInitiated), isActive: Boolean(r.isActive), createdAt: Number(r.createdAt), updatedAt: Number(r.updatedAt),
  spCertificate: r.spCertificate ?? null, spPrivateKeySealed: r.spPrivateKeySealed ?? null,
  spNextCertificate: r.spNextCertificate ?? null, spNextPrivateKeySealed: r.spNextPrivateKeySealed ?? null,
  spPreviousCertificate: r.spPreviousCertificate ?? null, spPreviousPrivateKeySealed: r.spPreviousPrivateKeySealed ?? null,
  idpSsoBinding: r.idpSsoBinding === 'HTTP-POST' ? 'HTTP-POST' : 'HTTP-Redirect', idpSloUrl: r.idpSloUrl ?? null,
});
const samlRow = (c: SamlConnectionRecord) => ({ ...c, idpSloUrl: c.idpSloUrl ?? null, idpSsoBinding: c.idpSsoBinding === 'HTTP-POST' ? 'HTTP-POST' : null, spCertificate: c.spCertificate ?? null, spPrivateKeySealed: c.spPrivateKeySealed ?? null,
  spNextCertificate: c.spNextCertificate ?? null, spNextPrivateKeySealed: c.spNextPrivateKeySealed ?? null,
  spPreviousCertificate: c.spPreviousCertificate ?? null, spPreviousPrivateKeySealed: c.spPreviousPrivateKeySealed ?? null, entityKey: keyOf(c.idpEntityId) });
/**
 * the columns an update writes: never the SP keys (set by setSpKey and rotateSpKey only, and a concurrent
 * first use or rotation step may have set them)
 */
const samlUpdateRow = (c: SamlConnectionRecord) => {
  const {
    spCertificate: _cert, spPrivateKeySealed: _key, spNextCertificate: _nc, spNextPrivateKeySealed: _nk, spPreviousCertificate: _pc, spPreviousPrivateKeySealed: _pk, ...rest
  } = samlRow(c);
  return rest;
};

/** Builds the SSO store on `db`. */
export function createMikroSsoStore(db: Database): SsoStore {
  const one = async <T>(entity: any, where: object, map: (r: any) => T): Promise<T | null> => {
    const r = await db.fork().findOne(entity, where as never);
    return r ? map(r) : null;
  };
  /** `write` and `events` in one transaction (issue 32 §1: the audit row commits with the change) */
  const inTx = (events: readonly OutboxEvent[], write: (em: TxManager) => Promise<unknown>): Promise<unknown> => db.transactional(async (em) => {
    enqueueEvents(db, em, events);
    return write(em);
  });
  /** a delete (or a conditional update) and its events in one transaction; the events only when a row went (or changed) */
  const deleteWith = (events: readonly OutboxEvent[], remove: (em: TxManager) => Promise<number>): Promise<boolean> => db.transactional(async (em) => {
    const n = await remove(em);
    if (n > 0) enqueueEvents(db, em, events);
    return n > 0;
  });
  return {
    oidc: {
      byId: (id) => one(OidcConnectionEntity, { id }, toOidc),
      byOrg: (orgId) => one(OidcConnectionEntity, { orgId }, toOidc),
      byIssuer: (issuerUrl) => one(OidcConnectionEntity, { issuerKey: keyOf(issuerUrl) }, toOidc),
      async insert(c, events = []) {
        if (await unlessDuplicate(() => inTx(events, (em) => em.insert(OidcConnectionEntity, oidcRow(c))))) return 'ok';
        return (await db.fork().findOne(OidcConnectionEntity, { orgId: c.orgId })) ? 'org' : 'issuer';
      },
      async update(c, events = []) {
        return (await unlessDuplicate(() => inTx(events, (em) => em.nativeUpdate(OidcConnectionEntity, { id: c.id }, oidcRow(c))))) ? 'ok' : 'issuer';
      },
      delete: (id, events = []) => deleteWith(events, (em) => em.nativeDelete(OidcConnectionEntity, { id })),
    },
    saml: {
      byId: (id) => one(SamlConnectionEntity, { id }, toSaml),
      byOrg: (orgId) => one(SamlConnectionEntity, { orgId }, toSaml),
      byEntityId: (idpEntityId) => one(SamlConnectionEntity, { entityKey: keyOf(idpEntityId) }, toSaml),
      async insert(c, events = []) {
        if (await unlessDuplicate(() => inTx(events, (em) => em.insert(SamlConnectionEntity, samlRow(c))))) return 'ok';
        return (await db.fork().findOne(SamlConnectionEntity, { orgId: c.orgId })) ? 'org' : 'entity';
      },
      async update(c, events = []) {
        return (await unlessDuplicate(() => inTx(events, (em) => em.nativeUpdate(SamlConnectionEntity, { id: c.id }, samlUpdateRow(c))))) ? 'ok' : 'entity';
      },
      async setSpKey(id, certPem, privateKeySealed) {
        return (await db.fork().nativeUpdate(SamlConnectionEntity, { id, spPrivateKeySealed: null }, { spCertificate: certPem, spPrivateKeySealed: privateKeySealed })) > 0;
      },
      async rotateSpKey(id, step, fresh, events = []) {
        const em = db.fork();
        const r = await em.findOne(SamlConnectionEntity, { id });
        if (!r || !r.spCertificate || !r.spPrivateKeySealed) return false;
        let change: Partial<typeof r>;
        if (step === 'stage') {
          // one rotation at a time: a pair still kept as previous is retired before the next is staged
          if (r.spNextPrivateKeySealed || r.spPreviousPrivateKeySealed || !fresh) return false;
          change = { spNextCertificate: fresh.certPem, spNextPrivateKeySealed: fresh.privateKeySealed };
        } else if (step === 'activate') {
          if (!r.spNextCertificate || !r.spNextPrivateKeySealed) return false;
          change = {
            spCertificate: r.spNextCertificate, spPrivateKeySealed: r.spNextPrivateKeySealed, spNextCertificate: null, spNextPrivateKeySealed: null,
            spPreviousCertificate: r.spCertificate, spPreviousPrivateKeySealed: r.spPrivateKeySealed,
          };
        } else {
          if (!r.spPreviousPrivateKeySealed) return false;
          change = { spPreviousCertificate: null, spPreviousPrivateKeySealed: null };
        }
        // the row as read: a concurrent step in between changes the sealed keys, and this one writes nothing
        const where = {
          id, spPrivateKeySealed: r.spPrivateKeySealed, spNextPrivateKeySealed: r.spNextPrivateKeySealed ?? null, spPreviousPrivateKeySealed: r.spPreviousPrivateKeySealed ?? null,
        };
        return deleteWith(events, (tx) => tx.nativeUpdate(SamlConnectionEntity, where, change));
      },
      delete: (id, events = []) => deleteWith(events, (em) => em.nativeDelete(SamlConnectionEntity, { id })),
    },
    pending: {
      async put(p) {
        await db.fork().insert(SsoPendingEntity, p);
      },
      async take(id, now) {
        const em = db.fork();
        const r = await em.findOne(SsoPendingEntity, { id });
        if (!r) return null;
        // the delete decides: of two replicas taking the same row, one deletes it and wins
        if ((await em.nativeDelete(SsoPendingEntity, { id })) === 0) return null;
        if (Number(r.expiresAt) <= now) return null;
        return { id: r.id, orgId: r.orgId, kind: r.kind as PendingLoginRecord['kind'], data: r.data, expiresAt: Number(r.expiresAt) };
      },
    },
    async consumeAssertion(orgId, assertionId, expiresAt, now) {
      const id = keyOf(`${orgId}:${assertionId}`);
      // an expired entry no longer blocks (the assertion itself is expired by then)
      await db.fork().nativeDelete(SamlAssertionEntity, { id, expiresAt: { $lte: now } });
      return unlessDuplicate(() => db.fork().insert(SamlAssertionEntity, { id, orgId, expiresAt }));
    },
  };
}
