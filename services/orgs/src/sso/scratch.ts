/**
 * @module orgs/sso/scratch
 * The SSO store and its organizations on a throwaway database, for the SSO unit and integration
 * tests: SQLite in the unit run, PostgreSQL and MariaDB in the integration run.
 */
import { randomUUID } from 'node:crypto';
import { deriveEncryptionKey } from '@gatehouse/crypto';
import { openScratchService, type DatabaseType } from '@gatehouse/db';
import { orgsSchema } from '../storage/mikro/schema.ts';
import { createMikroOrgsStore } from '../storage/mikro/store.ts';
import type { SsoDeps } from './deps.ts';
import { samlSpKeyMigration, samlSpKeyRotationMigration, ssoEntities, ssoMigration } from './storage/schema.ts';
import { createMikroSsoStore } from './storage/store.ts';

export interface SsoScratch {
  d: SsoDeps;
  /** the clock `d.now()` reads (Unix seconds); tests move it */
  clock: { now: number };
  /** inserts an enabled organization; returns its id */
  newOrg(name?: string, enabled?: boolean): Promise<string>;
  /** marks `domain` verified by the org (behaviour.md §6.2) */
  verifyDomain(orgId: string, domain: string): Promise<void>;
  /** the names and data of the events in orgs' outbox, oldest first */
  outbox(): Promise<Array<{ name: string; data: unknown }>>;
  close(): Promise<void>;
}

/** Opens the orgs + SSO schema on a fresh database of `type` (`--url` https://auth.example.com). */
export async function openSsoScratch(type: DatabaseType, baseUrl = 'https://auth.example.com'): Promise<SsoScratch> {
  const scratch = await openScratchService(type, { ...orgsSchema, entities: [...orgsSchema.entities, ...ssoEntities], migrations: [...orgsSchema.migrations, ssoMigration, samlSpKeyMigration, samlSpKeyRotationMigration] });
  const clock = { now: Math.floor(Date.now() / 1000) };
  const orgs = createMikroOrgsStore(scratch.db, () => clock.now);
  return {
    d: { store: createMikroSsoStore(scratch.db), orgs, secretKey: deriveEncryptionKey('k'.repeat(32)), baseUrl, now: () => clock.now },
    clock,
    async newOrg(name = `org-${randomUUID().slice(0, 8)}`, enabled = true) {
      const id = randomUUID();
      await orgs.transaction(async (tx) => { await tx.organizations.insert({ id, name, displayName: null, enabled, createdAt: clock.now, updatedAt: clock.now }); });
      return id;
    },
    async verifyDomain(orgId, domain) {
      await orgs.transaction(async (tx) => {
        await tx.domains.upsert({ orgId, domain, verifiedAt: null, challengeToken: 't', challengeExpiresAt: clock.now + 60, createdAt: clock.now, updatedAt: clock.now });
        await tx.domains.markVerified(orgId, domain, clock.now);
      });
    },
    outbox: async () => (await scratch.outbox()).map((e) => ({ name: e.name, data: e.data })),
    close: () => scratch.close(),
  };
}
