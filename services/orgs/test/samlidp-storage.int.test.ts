/**
 * @module samlidp-storage.int.test
 * The SAML IdP store (behaviour.md §5.9) on the machine's PostgreSQL and MariaDB (a fresh database
 * each), as the unit run checks it on SQLite: entity_id unique per org, newest-first pages, the
 * rotate/retire state machine (with issue 31's staged key and switch), the SP's encryption certificate
 * and SLO URL, and the rows going with their organization (§6.1); issue 31's session participants and
 * waiting Single Logouts, also on MongoDB (a FerretDB of its own).
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { openDatabase, openScratchService, type Database, type DatabaseType, type ScratchService } from '@gatehouse/db';
import { createLogger } from '@gatehouse/observability';
import { startFerretDb } from '@gatehouse/testing';
import { orgsSchema, registerOrgScopedTable } from '../src/storage/mikro/schema.ts';
import { createMikroOrgsStore } from '../src/storage/mikro/store.ts';
import { SamlIdpKeyEntity, SamlServiceProviderEntity, samlIdpEntities, samlIdpMigrations } from '../src/samlidp/storage/schema.ts';
import { createMikroSamlIdpStore } from '../src/samlidp/storage/store.ts';
import type { IdpKeyRecord, ServiceProviderRecord } from '../src/samlidp/storage/ports.ts';
import { checkSingleLogoutStorage } from '../src/samlidp/storage/single-logout.suite.ts';

// as main.ts registers them
for (const entity of [SamlServiceProviderEntity, SamlIdpKeyEntity]) registerOrgScopedTable({ entity: entity as never, orgProperty: 'orgId' });

const ORG = '5a5a5a5a-0000-4000-8000-000000000001';
const sp = (id: string, entityId: string, at: number): ServiceProviderRecord => ({
  id, orgId: ORG, name: 'SP', entityId, acsUrl: 'https://sp.example/acs', spCertPem: null, spEncryptionCertPem: null, sloUrl: null, nameIdFormat: 'urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress',
  mappedAttributes: null, allowIdpInitiated: false, isActive: true, createdAt: at, updatedAt: at,
});
const key = (id: string, at: number): IdpKeyRecord => ({
  id, orgId: ORG, certPem: 'cert', privateKeySealed: 'v1.sealed', algorithm: 'RS256', status: 'current', createdAt: at, updatedAt: at,
});

for (const type of ['postgres', 'mariadb'] as DatabaseType[]) {
  describe(`SAML IdP store on ${type}`, () => {
    let scratch: ScratchService;
    beforeAll(async () => {
      scratch = await openScratchService(type, { ...orgsSchema, entities: [...orgsSchema.entities, ...samlIdpEntities], migrations: [...orgsSchema.migrations, ...samlIdpMigrations] });
    }, 60_000);
    afterAll(async () => { await scratch?.close(); });

    it('keeps entity_id unique per org, pages newest first, rotates and retires, and goes with the org', async () => {
      const store = createMikroSamlIdpStore(scratch.db);
      const orgs = createMikroOrgsStore(scratch.db, () => 1);
      await orgs.transaction((tx) => tx.organizations.insert({ id: ORG, name: 'acme', displayName: null, enabled: true, createdAt: 1, updatedAt: 1 }));
      const long = `urn:${'x'.repeat(900)}`;
      expect(await store.providers.insert(sp('5a5a5a5a-0000-4000-8000-0000000000a1', long, 10))).toBe(true);
      expect(await store.providers.insert(sp('5a5a5a5a-0000-4000-8000-0000000000a2', long, 11))).toBe(false);
      expect(await store.providers.insert(sp('5a5a5a5a-0000-4000-8000-0000000000a3', 'urn:b', 12))).toBe(true);
      expect(await store.providers.update({ ...sp('5a5a5a5a-0000-4000-8000-0000000000a3', long, 12) })).toBe('conflict');
      expect((await store.providers.byEntityId(ORG, long))?.id).toBe('5a5a5a5a-0000-4000-8000-0000000000a1');
      const page = await store.providers.list(ORG, { offset: 0, limit: 1 });
      expect([page.total, page.rows.map((r) => r.entityId)]).toEqual([2, ['urn:b']]);

      expect(await store.keys.rotate(key('5a5a5a5a-0000-4000-8000-0000000000b1', 20), 20, true)).toBe(true);
      expect(await store.keys.rotate(key('5a5a5a5a-0000-4000-8000-0000000000b9', 20), 20, true)).toBe(false);
      expect(await store.keys.rotate(key('5a5a5a5a-0000-4000-8000-0000000000b2', 21), 21)).toBe(true);
      expect((await store.keys.list(ORG)).map((k) => k.status)).toEqual(['current', 'active']);
      expect(await store.keys.retire('5a5a5a5a-0000-4000-8000-0000000000b2', 22)).toBe('current');
      expect(await store.keys.retire('5a5a5a5a-0000-4000-8000-0000000000b1', 22)).toBe('active');
      expect(await store.keys.retire('5a5a5a5a-0000-4000-8000-0000000000b1', 23)).toBe('retired');

      // issue 31: a staged key, replaced by a second staging, switched to, and the SP's new columns
      expect(await store.keys.promote(ORG, 24)).toBeNull();
      await store.keys.stage({ ...key('5a5a5a5a-0000-4000-8000-0000000000c1', 24), status: 'pending' }, 24);
      await store.keys.stage({ ...key('5a5a5a5a-0000-4000-8000-0000000000c2', 25), status: 'pending' }, 25);
      const byId = async () => Object.fromEntries((await store.keys.list(ORG)).map((k) => [k.id.slice(-2), k.status]));
      expect(await byId()).toEqual({ b1: 'retired', b2: 'current', c1: 'retired', c2: 'pending' });
      expect((await store.keys.promote(ORG, 26))?.id).toBe('5a5a5a5a-0000-4000-8000-0000000000c2');
      expect(await byId()).toEqual({ b1: 'retired', b2: 'active', c1: 'retired', c2: 'current' });
      const withSettings = { ...sp('5a5a5a5a-0000-4000-8000-0000000000a1', long, 10), spEncryptionCertPem: 'enc', sloUrl: 'https://sp.example/slo' };
      expect(await store.providers.update(withSettings)).toBe('updated');
      expect(await store.providers.get(withSettings.id)).toMatchObject({ spEncryptionCertPem: 'enc', sloUrl: 'https://sp.example/slo' });

      expect(await orgs.transaction((tx) => tx.organizations.delete(ORG))).toBe(true);
      expect([(await store.providers.list(ORG, { offset: 0, limit: 10 })).total, (await store.keys.list(ORG)).length]).toEqual([0, 0]);
    });

    it('issue 31: one session participant per session and SP, taken once; a waiting logout taken once, expired ones refused', async () => {
      await checkSingleLogoutStorage(createMikroSamlIdpStore(scratch.db));
    });
  });
}

describe('SAML IdP store on mongodb (issue 31: Single Logout rows)', () => {
  let db: Database;
  let ferret: Awaited<ReturnType<typeof startFerretDb>>;
  beforeAll(async () => {
    ferret = await startFerretDb();
    db = await openDatabase({ type: 'mongodb', url: ferret.url(`samlidp_${randomBytes(6).toString('hex')}`) },
      { ...orgsSchema, entities: [...orgsSchema.entities, ...samlIdpEntities], migrations: [...orgsSchema.migrations, ...samlIdpMigrations] }, { logger: createLogger('silent') });
  }, 60_000);
  afterAll(async () => {
    await db?.close();
    await ferret?.stop();
  });

  it('one session participant per session and SP, taken once; a waiting logout taken once, expired ones refused', async () => {
    await checkSingleLogoutStorage(createMikroSamlIdpStore(db));
  });
});
