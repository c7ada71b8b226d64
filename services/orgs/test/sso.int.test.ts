/**
 * @module sso.int.test: the SSO store on the machine's PostgreSQL and MariaDB (fresh database each):
 * one connection of each kind per org and globally unique issuers / IdP entity ids (unique indexes),
 * the secret sealed at rest, the SP key pair sealed at rest and made once on a first use, single-use
 * pending logins and the SAML replay cache.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import type { DatabaseType } from '@gatehouse/db';
import { selfSigned } from '@gatehouse/testing';
import { createOidcConnection, createSamlConnection, openSecret, updateOidcConnection } from '../src/sso/connections.ts';
import { openSsoScratch, type SsoScratch } from '../src/sso/scratch.ts';
import { spKeyOf } from '../src/sso/sp-keys.ts';

const cert = selfSigned('idp.example.com').cert;

describe.each(['postgres', 'mariadb'] as DatabaseType[])('SSO store on %s', (type) => {
  let s: SsoScratch;
  beforeAll(async () => { s = await openSsoScratch(type); }, 60_000);
  afterAll(async () => { await s?.close(); });

  it('keeps one OIDC connection per org and each issuer once; the secret opens after a round trip', async () => {
    const orgId = await s.newOrg();
    const issuer = `https://${randomUUID()}.example.com/${'p'.repeat(600)}`;
    const c = await createOidcConnection(s.d, { orgId, name: 'n', issuerUrl: issuer, clientId: 'c', clientSecret: 'secret-1' });
    expect(openSecret(s.d, (await s.d.store.oidc.byId(c.id))!)).toBe('secret-1');
    expect(await s.d.store.oidc.insert({ ...c, id: randomUUID(), issuerUrl: 'https://x.example.com' })).toBe('org');
    expect(await s.d.store.oidc.insert({ ...c, id: randomUUID(), orgId: await s.newOrg() })).toBe('issuer');
    const other = await createOidcConnection(s.d, { orgId: await s.newOrg(), name: 'n', issuerUrl: `https://${randomUUID()}.example.com`, clientId: 'c', clientSecret: 's' });
    await expect(updateOidcConnection(s.d, { id: other.id, issuerUrl: issuer })).rejects.toThrow(`issuer_url already registered: ${issuer}`);
  });

  it('keeps one SAML connection per org and each IdP entity id once', async () => {
    const orgId = await s.newOrg();
    const c = await createSamlConnection(s.d, { orgId, name: 'n', idpEntityId: `urn:${randomUUID()}`, idpSsoUrl: 'https://idp.example.com/sso', idpCertificate: cert });
    expect(await s.d.store.saml.insert({ ...c, id: randomUUID(), idpEntityId: 'urn:other' })).toBe('org');
    expect(await s.d.store.saml.insert({ ...c, id: randomUUID(), orgId: await s.newOrg() })).toBe('entity');
  });

  it('stores the SP key pair sealed; two concurrent first uses of a connection without one agree on one pair', async () => {
    const orgId = await s.newOrg();
    const c = await createSamlConnection(s.d, { orgId, name: 'n', idpEntityId: `urn:${randomUUID()}`, idpSsoUrl: 'https://idp.example.com/sso', idpCertificate: cert });
    const stored = (await s.d.store.saml.byId(c.id))!;
    expect(stored.spCertificate).toBe(c.spCertificate);
    expect(stored.spPrivateKeySealed).not.toContain('PRIVATE KEY');
    expect((await spKeyOf(s.d, stored)).keyPem).toContain('BEGIN PRIVATE KEY');
    const legacy = { ...c, id: randomUUID(), orgId: await s.newOrg(), idpEntityId: `urn:${randomUUID()}`, spCertificate: null, spPrivateKeySealed: null };
    expect(await s.d.store.saml.insert(legacy)).toBe('ok');
    const [a, b] = await Promise.all([spKeyOf(s.d, { ...legacy }), spKeyOf(s.d, { ...legacy })]);
    expect(a.certPem).toBe(b.certPem);
    expect((await s.d.store.saml.byId(legacy.id))!.spCertificate).toBe(a.certPem);
    // an update of the connection keeps the key
    await s.d.store.saml.update({ ...legacy, name: 'renamed', spCertificate: null, spPrivateKeySealed: null });
    expect((await s.d.store.saml.byId(legacy.id))!).toMatchObject({ name: 'renamed', spCertificate: a.certPem });
  });

  it('takes a pending login once and refuses a replayed assertion id', async () => {
    const orgId = await s.newOrg();
    const now = s.clock.now;
    await s.d.store.pending.put({ id: 'p', orgId, kind: 'saml', data: '{}', expiresAt: now + 60 });
    const [a, b] = await Promise.all([s.d.store.pending.take('p', now), s.d.store.pending.take('p', now)]);
    expect([a, b].filter(Boolean)).toHaveLength(1);
    const results = await Promise.all([1, 2, 3].map(() => s.d.store.consumeAssertion(orgId, '_x', now + 300, now)));
    expect(results.filter(Boolean)).toHaveLength(1);
  });
});
