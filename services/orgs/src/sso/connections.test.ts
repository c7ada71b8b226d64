/**
 * The SSO connection administration of behaviour.md §6.3 on the MikroORM store over SQLite: the
 * records, defaults and exact refusal messages; the client secret sealed with AES-256-GCM under the
 * encryption key (never stored in clear, opened only with the right key and record); the IdP
 * certificate checked as PEM X.509; blank secret/certificate = keep; and the replay cache and pending
 * logins the login flows rely on.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { deriveEncryptionKey } from '@gatehouse/crypto';
import { selfSigned } from '@gatehouse/testing';
import {
  createOidcConnection, createSamlConnection, deleteOidcConnection, deleteSamlConnection, getOidcConnection, getSamlConnection, openSecret, updateOidcConnection,
  updateSamlConnection,
} from './connections.ts';
import type { SsoDeps } from './deps.ts';
import { openSsoScratch, type SsoScratch } from './scratch.ts';

let scratch: SsoScratch;
let d: SsoDeps;
const cert = selfSigned('idp.example.com').cert;
const newOrg = (): Promise<string> => scratch.newOrg();

const refusal = async (p: Promise<unknown>): Promise<string> => p.then(() => 'resolved', (e: { code: string; message: string }) => `${e.code}: ${e.message}`);

beforeAll(async () => {
  scratch = await openSsoScratch('sqlite');
  d = scratch.d;
});
afterAll(async () => { await scratch?.close(); });

describe('OIDC connections (behaviour.md §6.3)', () => {
  it('creates one per org with the defaults, the secret sealed and openable only with the key', async () => {
    const orgId = await newOrg();
    const c = await createOidcConnection(d, { orgId, name: 'Okta', issuerUrl: 'https://idp1.example.com', clientId: 'cid', clientSecret: 's3cret' });
    expect(c).toMatchObject({ orgId, name: 'Okta', issuerUrl: 'https://idp1.example.com', clientId: 'cid', scopes: null, redirectUri: null, isActive: true });
    expect(c.clientSecretSealed).not.toContain('s3cret');
    expect(openSecret(d, c)).toBe('s3cret');
    expect(() => openSecret({ ...d, secretKey: deriveEncryptionKey('other') }, c)).toThrow('internal error');
    // bound to its record: a sealed secret copied onto another connection does not open
    expect(() => openSecret(d, { ...c, id: randomUUID() })).toThrow('internal error');
    expect(await refusal(createOidcConnection(d, { orgId, name: 'x', issuerUrl: 'https://idp2.example.com', clientId: 'c', clientSecret: 's' })))
      .toBe('already_exists: an OIDC connection already exists for this organization');
    expect(await refusal(createOidcConnection(d, { orgId: await newOrg(), name: 'x', issuerUrl: 'https://idp1.example.com', clientId: 'c', clientSecret: 's' })))
      .toBe('already_exists: issuer_url already registered: https://idp1.example.com');
  });

  it.each([
    [{ issuerUrl: 'http://idp.example.com' }, 'invalid_argument: issuer_url must be a valid https URL'],
    [{ issuerUrl: 'not a url' }, 'invalid_argument: issuer_url must be a valid https URL'],
    [{ name: ' ' }, 'invalid_argument: name is required'],
    [{ clientId: '' }, 'invalid_argument: client_id is required'],
    [{ clientSecret: '' }, 'invalid_argument: client_secret is required'],
    [{ scopes: 'profile email' }, 'invalid_argument: scopes must include openid'],
    [{ redirectUri: 'javascript:alert(1)' }, 'invalid_argument: redirect_uri must be a valid http(s) URL'],
    [{ name: 'n'.repeat(256) }, 'invalid_argument: name is too long'],
    [{ orgId: randomUUID() }, 'not_found: organization not found'],
    [{ orgId: 'not-a-uuid' }, 'not_found: organization not found'],
  ])('refuses %j', async (patch, message) => {
    const orgId = await newOrg();
    expect(await refusal(createOidcConnection(d, { orgId, name: 'n', issuerUrl: `https://${randomUUID()}.example.com`, clientId: 'c', clientSecret: 's', ...patch })))
      .toBe(message);
  });

  it('updates only the supplied fields; a blank secret keeps the stored one; get and delete need exactly one of id or org_id', async () => {
    const orgId = await newOrg();
    const c = await createOidcConnection(d, { orgId, name: 'A', issuerUrl: `https://${randomUUID()}.example.com`, clientId: 'c', clientSecret: 'one' });
    scratch.clock.now += 10;
    const kept = await updateOidcConnection(d, { id: c.id, name: 'B', clientSecret: '', scopes: 'openid email' });
    expect(kept).toMatchObject({ name: 'B', clientId: 'c', scopes: 'openid email', updatedAt: scratch.clock.now });
    expect(openSecret(d, kept)).toBe('one');
    const changed = await updateOidcConnection(d, { id: c.id, clientSecret: 'two', isActive: false });
    expect(openSecret(d, changed)).toBe('two');
    expect((await getOidcConnection(d, { orgId })).isActive).toBe(false);
    expect(await refusal(getOidcConnection(d, {}))).toBe('invalid_argument: supply either id or org_id');
    expect(await refusal(getOidcConnection(d, { id: c.id, orgId }))).toBe('invalid_argument: supply either id or org_id');
    expect(await refusal(updateOidcConnection(d, { id: randomUUID() }))).toBe('not_found: OIDC connection not found');
    await deleteOidcConnection(d, { id: c.id });
    expect(await refusal(getOidcConnection(d, { id: c.id }))).toBe('not_found: OIDC connection not found');
  });
});

describe('SAML connections (behaviour.md §6.3)', () => {
  it('creates one per org; the certificate must be PEM X.509; the entity id is globally unique', async () => {
    const orgId = await newOrg();
    const entity = `https://idp.example.com/${randomUUID()}`;
    const c = await createSamlConnection(d, { orgId, name: 'ADFS', idpEntityId: entity, idpSsoUrl: 'https://idp.example.com/sso', idpCertificate: cert });
    expect(c).toMatchObject({ allowIdpInitiated: false, isActive: true, spEntityId: null, acsUrl: null, attributeMapping: null });
    expect(await refusal(createSamlConnection(d, { orgId, name: 'x', idpEntityId: 'other', idpSsoUrl: 'https://idp.example.com/sso', idpCertificate: cert })))
      .toBe('already_exists: a SAML connection already exists for this organization');
    expect(await refusal(createSamlConnection(d, { orgId: await newOrg(), name: 'x', idpEntityId: entity, idpSsoUrl: 'https://idp.example.com/sso', idpCertificate: cert })))
      .toBe(`already_exists: idp_entity_id already registered: ${entity}`);
  });

  it.each([
    [{ idpCertificate: 'not a certificate' }, 'invalid_argument: idp_certificate must be a PEM-encoded X.509 certificate'],
    [{ idpCertificate: '-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----' }, 'invalid_argument: idp_certificate must be a PEM-encoded X.509 certificate'],
    [{ idpSsoUrl: 'http://idp.example.com/sso' }, 'invalid_argument: idp_sso_url must be a valid https URL'],
    [{ attributeMapping: '{"email": 1}' }, 'invalid_argument: attribute_mapping must be a JSON object of strings'],
    [{ attributeMapping: '[]' }, 'invalid_argument: attribute_mapping must be a JSON object of strings'],
    [{ idpEntityId: '' }, 'invalid_argument: idp_entity_id is required'],
  ])('refuses %j', async (patch, message) => {
    const orgId = await newOrg();
    expect(await refusal(createSamlConnection(d, {
      orgId, name: 'n', idpEntityId: `urn:${randomUUID()}`, idpSsoUrl: 'https://idp.example.com/sso', idpCertificate: cert, ...patch,
    }))).toBe(message);
  });

  it('a blank certificate on update keeps the stored one; a new one replaces it', async () => {
    const orgId = await newOrg();
    const c = await createSamlConnection(d, { orgId, name: 'n', idpEntityId: `urn:${randomUUID()}`, idpSsoUrl: 'https://idp.example.com/sso', idpCertificate: cert });
    expect((await updateSamlConnection(d, { id: c.id, idpCertificate: '', allowIdpInitiated: true })).idpCertificate).toBe(c.idpCertificate);
    const other = selfSigned('other.example.com').cert;
    const replaced = await updateSamlConnection(d, { id: c.id, idpCertificate: other, attributeMapping: '{"email":"mail"}' });
    expect(replaced.idpCertificate).not.toBe(c.idpCertificate);
    expect(await getSamlConnection(d, { orgId })).toMatchObject({ allowIdpInitiated: true, attributeMapping: '{"email":"mail"}' });
  });
});

describe('pending logins and the SAML replay cache', () => {
  it('a pending login is taken once, and not after it expired', async () => {
    const orgId = await newOrg();
    const now = scratch.clock.now;
    await d.store.pending.put({ id: 'p1', orgId, kind: 'saml', data: '{}', expiresAt: now + 60 });
    expect((await d.store.pending.take('p1', now))?.orgId).toBe(orgId);
    expect(await d.store.pending.take('p1', now)).toBeNull();
    await d.store.pending.put({ id: 'p2', orgId, kind: 'oidc', data: '{}', expiresAt: now + 60 });
    expect(await d.store.pending.take('p2', now + 61)).toBeNull();
  });

  it('an assertion id is consumed once per org until it expires', async () => {
    const orgId = await newOrg();
    const now = scratch.clock.now;
    expect(await d.store.consumeAssertion(orgId, '_a1', now + 300, now)).toBe(true);
    expect(await d.store.consumeAssertion(orgId, '_a1', now + 300, now + 1)).toBe(false);
    expect(await d.store.consumeAssertion(await newOrg(), '_a1', now + 300, now)).toBe(true);
    expect(await d.store.consumeAssertion(orgId, '_a1', now + 900, now + 301)).toBe(true);
  });
});

describe('a connection write stores its audit row in the transaction of the change (issue 32 §1)', () => {
  it('create, update and delete of both kinds write their events with the row; a refused write writes none', async () => {
    const orgId = await newOrg();
    const before = (await scratch.outbox()).length;
    const audit = (what: string) => (r: { id: string }) => [{ name: 'audit.recorded' as const, data: { action: what, resource_id: r.id } }];
    const oidc = await createOidcConnection(d, { orgId, name: 'A', issuerUrl: 'https://audit-idp.example.com', clientId: 'c', clientSecret: 's' }, audit('oidc_created'));
    // the org has one already: refused, nothing written
    expect(await refusal(createOidcConnection(d, { orgId, name: 'B', issuerUrl: 'https://audit-idp2.example.com', clientId: 'c', clientSecret: 's' }, audit('oidc_created_again')))).toMatch(/^already_exists/);
    await updateOidcConnection(d, { id: oidc.id, name: 'A2' }, audit('oidc_updated'));
    await deleteOidcConnection(d, { id: oidc.id }, audit('oidc_deleted'));
    const saml = await createSamlConnection(d, { orgId, name: 'S', idpEntityId: 'urn:audit-idp', idpSsoUrl: 'https://audit-idp.example.com/sso', idpCertificate: cert }, audit('saml_created'));
    await updateSamlConnection(d, { id: saml.id, name: 'S2' }, audit('saml_updated'));
    await deleteSamlConnection(d, { id: saml.id }, audit('saml_deleted'));
    expect(await refusal(deleteSamlConnection(d, { id: saml.id }, audit('saml_deleted_again')))).toMatch(/^not_found/);
    const rows = (await scratch.outbox()).slice(before).map((e) => [e.name, (e.data as { action: string }).action, (e.data as { resource_id: string }).resource_id]);
    expect(rows).toEqual([
      ['audit.recorded', 'oidc_created', oidc.id], ['audit.recorded', 'oidc_updated', oidc.id], ['audit.recorded', 'oidc_deleted', oidc.id],
      ['audit.recorded', 'saml_created', saml.id], ['audit.recorded', 'saml_updated', saml.id], ['audit.recorded', 'saml_deleted', saml.id],
    ]);
  });
});
