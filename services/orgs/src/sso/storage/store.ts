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
  idpSsoBinding: r.idpSsoBinding === 'HTTP-POST' ? 'HTTP-POST' : 'HTTP-Redirect', idpSloUrl: r.idpSloUrl ?? null,
});
const samlRow = (c: SamlConnectionRecord) => ({ ...c, idpSloUrl: c.idpSloUrl ?? null, idpSsoBinding: c.idpSsoBinding === 'HTTP-POST' ? 'HTTP-POST' : null, spCertificate: c.spCertificate ?? null, spPrivateKeySealed: c.spPrivateKeySealed ?? null, entityKey: keyOf(c.idpEntityId) });
/** the columns an update writes: never the SP key (set once by setSpKey, and a concurrent first use may have set it) */
const samlUpdateRow = (c: SamlConnectionRecord) => {
  const { spCertificate: _cert, spPrivateKeySealed: _key, ...rest } = samlRow(c);
  return rest;
};

/** Builds the SSO store on `db`. */
export function createMikroSsoStore(db: Database): SsoStore {
  const one = async <T>(entity: any, where: object, map: (r: any) => T): Promise<T | null> => {
    const r = await db.fork().findOne(entity, where as never);
    return r ? map(r) : null;
  };
  return {
    oidc: {
      byId: (id) => one(OidcConnectionEntity, { id }, toOidc),
      byOrg: (orgId) => one(OidcConnectionEntity, { orgId }, toOidc),
      byIssuer: (issuerUrl) => one(OidcConnectionEntity, { issuerKey: keyOf(issuerUrl) }, toOidc),
      async insert(c) {
        if (await unlessDuplicate(() => db.fork().insert(OidcConnectionEntity, oidcRow(c)))) return 'ok';
        return (await db.fork().findOne(OidcConnectionEntity, { orgId: c.orgId })) ? 'org' : 'issuer';
      },
      async update(c) {
        return (await unlessDuplicate(() => db.fork().nativeUpdate(OidcConnectionEntity, { id: c.id }, oidcRow(c)))) ? 'ok' : 'issuer';
      },
      async delete(id) {
        return (await db.fork().nativeDelete(OidcConnectionEntity, { id })) > 0;
      },
    },
    saml: {
      byId: (id) => one(SamlConnectionEntity, { id }, toSaml),
      byOrg: (orgId) => one(SamlConnectionEntity, { orgId }, toSaml),
      byEntityId: (idpEntityId) => one(SamlConnectionEntity, { entityKey: keyOf(idpEntityId) }, toSaml),
      async insert(c) {
        if (await unlessDuplicate(() => db.fork().insert(SamlConnectionEntity, samlRow(c)))) return 'ok';
        return (await db.fork().findOne(SamlConnectionEntity, { orgId: c.orgId })) ? 'org' : 'entity';
      },
      async update(c) {
        return (await unlessDuplicate(() => db.fork().nativeUpdate(SamlConnectionEntity, { id: c.id }, samlUpdateRow(c)))) ? 'ok' : 'entity';
      },
      async setSpKey(id, certPem, privateKeySealed) {
        return (await db.fork().nativeUpdate(SamlConnectionEntity, { id, spPrivateKeySealed: null }, { spCertificate: certPem, spPrivateKeySealed: privateKeySealed })) > 0;
      },
      async delete(id) {
        return (await db.fork().nativeDelete(SamlConnectionEntity, { id })) > 0;
      },
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
