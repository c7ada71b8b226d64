/**
 * The SAML identity-provider role (behaviour.md §5.9) on a SQLite orgs database: the service-provider
 * rules and messages, the signing keys (RSA-2048, self-signed, 5 years, sealed at rest, the three
 * retire outcomes), the metadata import (node-saml's own SP metadata, a Shibboleth-style document,
 * XXE, entity expansion, oversize), and sign-on with @node-saml/node-saml as the SP: SP-initiated on
 * HTTP-Redirect and HTTP-POST, IdP-initiated only when allowed, and validation after a key rotation.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createPrivateKey, X509Certificate } from 'node:crypto';
import { deflateRawSync, inflateRawSync } from 'node:zlib';
import { SAML, ValidateInResponseTo } from '@node-saml/node-saml';
import type { SessionRecord } from '@gatehouse/auth';
import type { BusEvents } from '@gatehouse/contracts';
import { openScratchService, type ScratchService } from '@gatehouse/db';
import { AppError } from '@gatehouse/errors';
import { createLogger } from '@gatehouse/observability';
import { createCallContext } from '@gatehouse/rpc';
import { deriveEncryptionKey, decrypt } from '@gatehouse/crypto';
import { orgsSchema } from '../storage/mikro/schema.ts';
import { createMikroOrgsStore } from '../storage/mikro/store.ts';
import type { OrgsStore } from '../storage/ports.ts';
import type { SamlIdpDeps } from './deps.ts';
import { orgIdpDirectory } from './directory.ts';
import { KEY_ALREADY_RETIRED, KEY_IS_CURRENT, KEY_RETIRED, listKeys, newSigningCertificate, retireKey, rotateKey } from './keys.ts';
import { NO_SP_IN_METADATA, parseSpMetadata } from './metadata-import.ts';
import { createProvider, deleteProvider, getProvider, NAME_ID_FORMATS, updateProvider } from './providers.ts';
import { handleIdpRequest, type IdpHttpResponse } from './sso.ts';
import { samlIdpEntities, samlIdpMigrations } from './storage/schema.ts';
import { checkSingleLogoutStorage } from './storage/single-logout.suite.ts';
import { createMikroSamlIdpStore } from './storage/store.ts';

const URL_BASE = 'http://127.0.0.1:9999';
const ORG_ID = '0b0e6f5a-95a4-4a4e-9d07-3e4b0d0a0001';
const OTHER_ORG = '0b0e6f5a-95a4-4a4e-9d07-3e4b0d0a0002';
const USER = { id: 'a1b2c3d4-0000-4000-8000-000000000001', email: 'ada@example.com', given_name: 'Ada', family_name: 'Lovelace', roles: ['user', 'editor'] };
const OUTSIDER = 'a1b2c3d4-0000-4000-8000-000000000002';
const SP_ACS = 'https://sp.example.test/saml/acs';

let scratch: ScratchService;
let orgs: OrgsStore;
let d: SamlIdpDeps;
const audits: BusEvents['audit.recorded'][] = [];
/** the session the fake cookie resolves to, or null (no Gatehouse session) */
let session: SessionRecord | null = null;

beforeAll(async () => {
  scratch = await openScratchService('sqlite', { ...orgsSchema, entities: [...orgsSchema.entities, ...samlIdpEntities], migrations: [...orgsSchema.migrations, ...samlIdpMigrations] });
  orgs = createMikroOrgsStore(scratch.db, () => 1);
  const now = Math.floor(Date.now() / 1000);
  await orgs.transaction(async (tx) => {
    await tx.organizations.insert({ id: ORG_ID, name: 'acme', displayName: null, enabled: true, createdAt: now, updatedAt: now });
    await tx.organizations.insert({ id: OTHER_ORG, name: 'other', displayName: null, enabled: false, createdAt: now, updatedAt: now });
    await tx.members.insert({ id: 'c1b2c3d4-0000-4000-8000-000000000001', orgId: ORG_ID, userId: USER.id, roles: [], createdAt: now, updatedAt: now });
  });
  d = {
    store: createMikroSamlIdpStore(scratch.db),
    orgs: orgIdpDirectory(orgs),
    authn: {
      GetUser: async (req: { user_id: string }) => {
        if (req.user_id === USER.id) return { ...USER, email_verified: true, signup_methods: 'basic_auth', phone_number_verified: false, created_at: 1, updated_at: 1, enrolled_mfa_methods: [] };
        if (req.user_id === OUTSIDER) return { id: OUTSIDER, email: 'bob@example.com', email_verified: true, signup_methods: 'basic_auth', phone_number_verified: false, roles: [], created_at: 1, updated_at: 1, enrolled_mfa_methods: [] };
        throw new AppError('not_found', 'user not found');
      },
    } as never,
    authenticator: { sessionFromCookies: async () => session } as never,
    sealKey: deriveEncryptionKey('unit-test-encryption-key-0123456789'),
    baseUrl: URL_BASE,
    audit: async (r) => { audits.push(r); },
    logger: createLogger('silent'),
    now: () => Math.floor(Date.now() / 1000),
  };
});

afterAll(async () => {
  await scratch.close();
});

const refusal = async (p: Promise<unknown>): Promise<string> => {
  try {
    await p;
  } catch (err) {
    if (err instanceof AppError) return `${err.code} ${err.message}`;
    throw err;
  }
  return 'resolved';
};

describe('service providers (behaviour.md §5.9)', () => {
  it('creates with the defaults and refuses a second entity_id in the same org with the §5.9 409', async () => {
    const sp = await createProvider(d, { org_id: ORG_ID, name: 'Wiki', entity_id: 'urn:wiki', acs_url: 'https://wiki.example/acs' });
    expect(sp).toMatchObject({ orgId: ORG_ID, nameIdFormat: NAME_ID_FORMATS.email, allowIdpInitiated: false, isActive: true, spCertPem: null, mappedAttributes: null });
    expect(await refusal(createProvider(d, { org_id: ORG_ID, name: 'Again', entity_id: 'urn:wiki', acs_url: 'https://wiki.example/acs' })))
      .toBe('already_exists a service provider with entity_id "urn:wiki" is already registered for this organization');
    // the same entity id in another org is another record
    const other = await createProvider(d, { org_id: OTHER_ORG, name: 'Wiki', entity_id: 'urn:wiki', acs_url: 'https://wiki.example/acs' });
    expect(other.orgId).toBe(OTHER_ORG);
    await deleteProvider(d, other.id);
  });

  it.each([
    [{ acs_url: 'ftp://x/acs' }, 'invalid_argument acs_url must be a valid http(s) URL'],
    [{ acs_url: 'not a url' }, 'invalid_argument acs_url must be a valid http(s) URL'],
    [{ acs_url: 'javascript:alert(1)' }, 'invalid_argument acs_url must be a valid http(s) URL'],
    [{ sp_cert_pem: 'MIIBfake' }, 'invalid_argument sp_cert_pem must be a PEM-encoded X.509 certificate'],
    [{ sp_cert_pem: '-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----' }, 'invalid_argument sp_cert_pem must be a PEM-encoded X.509 certificate'],
    [{ mapped_attributes: '["email"]' }, 'invalid_argument mapped_attributes must be a JSON object of strings'],
    [{ mapped_attributes: '{"email": 3}' }, 'invalid_argument mapped_attributes must be a JSON object of strings'],
    [{ mapped_attributes: '{oops' }, 'invalid_argument mapped_attributes must be a JSON object of strings'],
    [{ name_id_format: 'urn:nope' }, `invalid_argument name_id_format must be one of ${Object.values(NAME_ID_FORMATS).join(', ')}`],
    [{ entity_id: '  ' }, 'invalid_argument entity_id is required'],
    [{ org_id: OTHER_ORG.replace('2', '9') }, 'not_found organization not found'],
  ])('refuses %j', async (patch, message) => {
    expect(await refusal(createProvider(d, { org_id: ORG_ID, name: 'Bad', entity_id: 'urn:bad', acs_url: 'https://bad.example/acs', ...patch }))).toBe(message);
    expect(await d.store.providers.byEntityId(ORG_ID, 'urn:bad')).toBeNull();
  });

  it('updates only the supplied fields, keeps entity_id unique on update, and deletes', async () => {
    const a = await createProvider(d, { org_id: ORG_ID, name: 'A', entity_id: 'urn:a', acs_url: 'https://a.example/acs' });
    await createProvider(d, { org_id: ORG_ID, name: 'B', entity_id: 'urn:b', acs_url: 'https://b.example/acs' });
    const updated = await updateProvider(d, { id: a.id, allow_idp_initiated: true, mapped_attributes: '{"email":"mail"}' });
    expect(updated).toMatchObject({ name: 'A', entityId: 'urn:a', allowIdpInitiated: true, mappedAttributes: '{"email":"mail"}' });
    expect(await refusal(updateProvider(d, { id: a.id, entity_id: 'urn:b' })))
      .toBe('already_exists a service provider with entity_id "urn:b" is already registered for this organization');
    expect((await getProvider(d, a.id)).entityId).toBe('urn:a');
    await deleteProvider(d, a.id);
    expect(await refusal(getProvider(d, a.id))).toBe('not_found service provider not found');
    expect(await refusal(deleteProvider(d, a.id))).toBe('not_found service provider not found');
  });
});

describe('IdP signing keys (behaviour.md §5.9)', () => {
  it('rotates to an RSA-2048, self-signed, 5-year certificate, sealed at rest; the old current becomes active', async () => {
    const first = await rotateKey(d, ORG_ID);
    const cert = new X509Certificate(first.certPem);
    expect(cert.publicKey.asymmetricKeyDetails?.modulusLength).toBe(2048);
    expect(cert.verify(cert.publicKey)).toBe(true);
    const years = (Date.parse(cert.validTo) - Date.parse(cert.validFrom)) / (365.25 * 24 * 3600 * 1000);
    expect(Math.round(years)).toBe(5);
    expect(first.privateKeySealed).not.toContain('PRIVATE KEY');
    // the sealed key opens only with the deployment's key and this key's id
    const pem = decrypt(d.sealKey, first.privateKeySealed, first.id);
    expect(cert.checkPrivateKey(createPrivateKey(pem))).toBe(true);
    expect(() => decrypt(deriveEncryptionKey('another-key'), first.privateKeySealed, first.id)).toThrow();

    const second = await rotateKey(d, ORG_ID);
    const statuses = Object.fromEntries((await listKeys(d, ORG_ID)).map((k) => [k.id, k.status]));
    expect(statuses[second.id]).toBe('current');
    expect(statuses[first.id]).toBe('active');
  });

  it('answers the three retire outcomes', async () => {
    const keys = await listKeys(d, ORG_ID);
    const current = keys.find((k) => k.status === 'current')!;
    const active = keys.find((k) => k.status === 'active')!;
    expect(await refusal(retireKey(d, current.id))).toBe(`failed_precondition ${KEY_IS_CURRENT}`);
    expect((await retireKey(d, active.id)).message).toBe(KEY_RETIRED);
    expect((await retireKey(d, active.id)).message).toBe(KEY_ALREADY_RETIRED);
    expect(await refusal(retireKey(d, '00000000-0000-4000-8000-000000000000'))).toBe('not_found signing key not found');
  });
});

describe('import_saml_sp_metadata (behaviour.md §5.9)', () => {
  it('reads the SP metadata node-saml generates', () => {
    // with its own signing key, node-saml publishes a signing KeyDescriptor
    const sp = new SAML({ issuer: 'https://app.example.test/saml', callbackUrl: 'https://app.example.test/saml/acs', idpCert: 'x', entryPoint: 'https://idp/', privateKey: spKey });
    const xml = sp.generateServiceProviderMetadata(null, spCert);
    const out = parseSpMetadata(xml);
    expect(out.entity_id).toBe('https://app.example.test/saml');
    expect(out.acs_url).toBe('https://app.example.test/saml/acs');
    expect(new X509Certificate(out.certificate!).fingerprint256).toBe(new X509Certificate(spCert).fingerprint256);
    // no decryption certificate and no logout URL given: neither is invented
    expect(out.encryption_certificate).toBeUndefined();
    expect(out.slo_url).toBeUndefined();
  });

  it("takes the SP's encryption certificate and SingleLogoutService URL from node-saml's metadata (issue 31)", async () => {
    const { certPem: encCert } = await newSigningCertificate('test SP encryption', Math.floor(Date.now() / 1000));
    const sp = new SAML({
      issuer: 'https://app.example.test/saml', callbackUrl: 'https://app.example.test/saml/acs', logoutCallbackUrl: 'https://app.example.test/saml/slo',
      idpCert: 'x', entryPoint: 'https://idp/', privateKey: spKey, decryptionPvk: spKey,
    });
    const out = parseSpMetadata(sp.generateServiceProviderMetadata(encCert, spCert));
    expect(new X509Certificate(out.certificate!).fingerprint256).toBe(new X509Certificate(spCert).fingerprint256);
    expect(new X509Certificate(out.encryption_certificate!).fingerprint256).toBe(new X509Certificate(encCert).fingerprint256);
    expect(out.slo_url).toBe('https://app.example.test/saml/slo');
  });

  it('reads a Shibboleth-style document inside an EntitiesDescriptor, preferring the HTTP-POST ACS', () => {
    const body = spCert.replace(/-----[^-]+-----/g, '').replace(/\s+/g, '');
    const xml = `<?xml version="1.0" encoding="UTF-8"?>
<md:EntitiesDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata" xmlns:ds="http://www.w3.org/2000/09/xmldsig#">
  <md:EntityDescriptor entityID="https://idp-less.example.org/other"><md:IDPSSODescriptor protocolSupportEnumeration="urn:oasis:names:tc:SAML:2.0:protocol"/></md:EntityDescriptor>
  <md:EntityDescriptor entityID="https://sp.example.org/shibboleth">
    <md:SPSSODescriptor protocolSupportEnumeration="urn:oasis:names:tc:SAML:2.0:protocol">
      <md:KeyDescriptor><ds:KeyInfo><ds:X509Data><ds:X509Certificate>
        ${body}
      </ds:X509Certificate></ds:X509Data></ds:KeyInfo></md:KeyDescriptor>
      <md:SingleLogoutService Binding="urn:oasis:names:tc:SAML:2.0:bindings:SOAP" Location="https://sp.example.org/Shibboleth.sso/SLO/SOAP"/>
      <md:SingleLogoutService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST" Location="https://sp.example.org/Shibboleth.sso/SLO/POST"/>
      <md:SingleLogoutService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect" Location="https://sp.example.org/Shibboleth.sso/SLO/Redirect"/>
      <md:AssertionConsumerService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Artifact" Location="https://sp.example.org/Shibboleth.sso/SAML2/Artifact" index="0" isDefault="true"/>
      <md:AssertionConsumerService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST" Location="https://sp.example.org/Shibboleth.sso/SAML2/POST" index="1"/>
    </md:SPSSODescriptor>
  </md:EntityDescriptor>
</md:EntitiesDescriptor>`;
    const out = parseSpMetadata(xml);
    expect(out).toMatchObject({ entity_id: 'https://sp.example.org/shibboleth', acs_url: 'https://sp.example.org/Shibboleth.sso/SAML2/POST' });
    expect(new X509Certificate(out.certificate!).fingerprint256).toBe(new X509Certificate(spCert).fingerprint256);
    // a KeyDescriptor without `use` serves both purposes (SAML Metadata §2.4.1.1); HTTP-Redirect SLO first
    expect(new X509Certificate(out.encryption_certificate!).fingerprint256).toBe(new X509Certificate(spCert).fingerprint256);
    expect(out.slo_url).toBe('https://sp.example.org/Shibboleth.sso/SLO/Redirect');
  });

  it('refuses a document whose encryption certificate is no X.509 certificate', () => {
    const xml = `<md:EntityDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata" xmlns:ds="http://www.w3.org/2000/09/xmldsig#" entityID="https://sp.example.org/x">
  <md:SPSSODescriptor protocolSupportEnumeration="urn:oasis:names:tc:SAML:2.0:protocol">
    <md:KeyDescriptor use="encryption"><ds:KeyInfo><ds:X509Data><ds:X509Certificate>MIIBogus</ds:X509Certificate></ds:X509Data></ds:KeyInfo></md:KeyDescriptor>
    <md:AssertionConsumerService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST" Location="https://sp.example.org/acs" index="0"/>
  </md:SPSSODescriptor>
</md:EntityDescriptor>`;
    expect(() => parseSpMetadata(xml)).toThrow('could not parse SP metadata XML: the encryption certificate is not an X.509 certificate');
  });

  it.each([
    ['XXE', '<?xml version="1.0"?><!DOCTYPE md [<!ENTITY xxe SYSTEM "file:///etc/passwd">]><md:EntityDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata" entityID="&xxe;"/>',
      'could not parse SP metadata XML: DOCTYPE and entity declarations are not allowed'],
    ['entity expansion', '<!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;">]><lolz>&lol2;</lolz>',
      'could not parse SP metadata XML: DOCTYPE and entity declarations are not allowed'],
    ['an oversize document', `<x>${'a'.repeat(1024 * 1024)}</x>`, 'metadata_xml must be at most 1 MiB'],
    ['an empty document', '   ', 'metadata_xml is required'],
    ['an IdP-only document', '<md:EntityDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata" entityID="urn:x"><md:IDPSSODescriptor/></md:EntityDescriptor>', NO_SP_IN_METADATA],
    ['an SP without ACS', '<md:EntityDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata" entityID="urn:x"><md:SPSSODescriptor/></md:EntityDescriptor>', NO_SP_IN_METADATA],
  ])('refuses %s with 400', (_name, xml, message) => {
    let err: unknown;
    try {
      parseSpMetadata(xml);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(AppError);
    expect([(err as AppError).code, (err as AppError).message]).toEqual(['invalid_argument', message]);
  });

  it('refuses malformed XML with the parser\'s reason', () => {
    let err: AppError | undefined;
    try {
      parseSpMetadata('<md:EntityDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata"><unclosed></md:EntityDescriptor>');
    } catch (e) {
      err = e as AppError;
    }
    expect(err?.code).toBe('invalid_argument');
    expect(err?.message).toMatch(/^could not parse SP metadata XML: .+/);
  });
});

/** The SP's own key and certificate (made once, with the IdP's generator). */
let spCert = '';
let spKey = '';
beforeAll(async () => {
  ({ certPem: spCert, keyPem: spKey } = await newSigningCertificate('test SP', Math.floor(Date.now() / 1000)));
});

const sessionOf = (userId: string, id = 's1'): SessionRecord => ({
  id, userId, handleHash: 'h', loginMethod: 'basic_auth', roles: ['user'], scope: [], authTime: Math.floor(Date.now() / 1000) - 10,
  expiresAt: Math.floor(Date.now() / 1000) + 3600, createdAt: Math.floor(Date.now() / 1000) - 10,
} as SessionRecord);

/** The IdP's published certificates, read from its metadata endpoint as an SP would. */
async function publishedCerts(org = 'acme'): Promise<string[]> {
  const res = await handleIdpRequest(d, createCallContext(), { org, endpoint: 'metadata', method: 'GET', query: '', body: '' });
  expect(res.status).toBe(200);
  return [...res.body.matchAll(/<(?:ds:)?X509Certificate>([^<]+)</g)].map((m) => m[1]!.replace(/\s+/g, ''));
}

/** A node-saml SP registered as `entityId`, trusting `certs`. */
function nodeSamlSp(entityId: string, certs: string[], binding?: 'HTTP-POST'): SAML {
  return new SAML({
    issuer: entityId, callbackUrl: SP_ACS, entryPoint: `${URL_BASE}/oauth/saml/acme/idp/sso`, idpCert: certs, audience: entityId,
    wantAssertionsSigned: true, wantAuthnResponseSigned: true, validateInResponseTo: ValidateInResponseTo.always,
    ...(binding ? { authnRequestBinding: binding } : {}),
  });
}

/** The SAMLResponse and RelayState of the auto-submitting page. */
function postedForm(res: IdpHttpResponse): { action: string; SAMLResponse: string; RelayState?: string } {
  expect(res.status).toBe(200);
  const action = /<form method="post" action="([^"]+)"/.exec(res.body)?.[1];
  const saml = /name="SAMLResponse" value="([^"]+)"/.exec(res.body)?.[1];
  const relay = /name="RelayState" value="([^"]+)"/.exec(res.body)?.[1];
  return { action: action!.replace(/&amp;/g, '&'), SAMLResponse: saml!, ...(relay ? { RelayState: relay.replace(/&amp;/g, '&') } : {}) };
}

describe('sign-on with node-saml as the SP (behaviour.md §5.9)', () => {
  const entityId = 'https://sp.example.test/metadata';
  beforeAll(async () => {
    await createProvider(d, {
      org_id: ORG_ID, name: 'node-saml SP', entity_id: entityId, acs_url: SP_ACS,
      mapped_attributes: JSON.stringify({ email: 'mail', given_name: 'givenName', roles: 'urn:oid:1.3.6.1.4.1.5923.1.1.1.7' }),
    });
  });

  it('SP-initiated on HTTP-Redirect: no session → the login page, then a signed assertion node-saml accepts', async () => {
    const sp = nodeSamlSp(entityId, await publishedCerts());
    const url = new URL(await sp.getAuthorizeUrlAsync('relay-1', undefined, {}));
    session = null;
    const toLogin = await handleIdpRequest(d, createCallContext(), { org: 'acme', endpoint: 'sso', method: 'GET', query: url.search.slice(1), body: '' });
    expect(toLogin.status).toBe(302);
    const login = new URL(toLogin.location!);
    expect(`${login.origin}${login.pathname}`).toBe(`${URL_BASE}/app/login`);
    const back = new URL(login.searchParams.get('return_to')!, URL_BASE);
    expect(back.pathname).toBe('/oauth/saml/acme/idp/sso');

    session = sessionOf(USER.id);
    const res = await handleIdpRequest(d, createCallContext(), { org: 'acme', endpoint: 'sso', method: 'GET', query: back.search.slice(1), body: '' });
    const form = postedForm(res);
    expect(form.action).toBe(SP_ACS);
    expect(form.RelayState).toBe('relay-1');
    const { profile } = await sp.validatePostResponseAsync({ SAMLResponse: form.SAMLResponse });
    expect(profile?.nameID).toBe(USER.email);
    expect(profile?.nameIDFormat).toBe(NAME_ID_FORMATS.email);
    expect(profile?.['mail']).toBe(USER.email);
    expect(profile?.['givenName']).toBe('Ada');
    expect(profile?.['urn:oid:1.3.6.1.4.1.5923.1.1.1.7']).toEqual(['user', 'editor']);
    const xml = Buffer.from(form.SAMLResponse, 'base64').toString('utf8');
    expect(xml).toContain(`<saml:Audience>${entityId}</saml:Audience>`);
    expect(xml).toContain(`Recipient="${SP_ACS}"`);
    expect(audits.at(-1)?.action).toBe('saml.idp_assertion_issued');
  });

  it('SP-initiated on HTTP-POST, after a rotation: node-saml validates with the new key from the metadata', async () => {
    const before = await publishedCerts();
    await rotateKey(d, ORG_ID);
    const after = await publishedCerts();
    expect(after.length).toBe(before.length + 1);
    const sp = nodeSamlSp(entityId, after, 'HTTP-POST');
    const form = await sp.getAuthorizeFormAsync('relay-2');
    const samlRequest = /name="SAMLRequest" value="([^"]+)"/.exec(form)![1]!;
    session = sessionOf(USER.id);
    const res = await handleIdpRequest(d, createCallContext(), {
      org: 'acme', endpoint: 'sso', method: 'POST', query: '', body: new URLSearchParams({ SAMLRequest: samlRequest, RelayState: 'relay-2' }).toString(),
    });
    const { profile } = await sp.validatePostResponseAsync({ SAMLResponse: postedForm(res).SAMLResponse });
    expect(profile?.nameID).toBe(USER.email);
    // an SP that still trusts only the pre-rotation keys refuses the new signature
    const stale = nodeSamlSp(entityId, before);
    await expect(stale.validatePostResponseAsync({ SAMLResponse: postedForm(res).SAMLResponse })).rejects.toThrow();
  });

  it('refuses an AuthnRequest whose ACS differs from the registered one, an unknown SP and a non-member', async () => {
    const certs = await publishedCerts();
    session = sessionOf(USER.id);
    const wrongAcs = new SAML({ issuer: entityId, callbackUrl: 'https://evil.example/acs', entryPoint: `${URL_BASE}/x`, idpCert: certs });
    let url = new URL(await wrongAcs.getAuthorizeUrlAsync('', undefined, {}));
    let res = await handleIdpRequest(d, createCallContext(), { org: 'acme', endpoint: 'sso', method: 'GET', query: url.search.slice(1), body: '' });
    expect([res.status, res.body]).toEqual([400, expect.stringContaining('does not match the registered acs_url')]);
    expect(res.body).not.toContain('SAMLResponse');
    expect(audits.at(-1)?.action).toBe('saml.idp_assertion_failed');

    url = new URL(await nodeSamlSp('urn:unknown', certs).getAuthorizeUrlAsync('', undefined, {}));
    res = await handleIdpRequest(d, createCallContext(), { org: 'acme', endpoint: 'sso', method: 'GET', query: url.search.slice(1), body: '' });
    expect(res.status).toBe(400);

    session = sessionOf(OUTSIDER);
    url = new URL(await nodeSamlSp(entityId, certs).getAuthorizeUrlAsync('', undefined, {}));
    res = await handleIdpRequest(d, createCallContext(), { org: 'acme', endpoint: 'sso', method: 'GET', query: url.search.slice(1), body: '' });
    expect([res.status, res.body]).toEqual([403, expect.stringContaining('not a member of this organization')]);
  });

  it('IdP-initiated only when the SP allows it; node-saml accepts it with InResponseTo off', async () => {
    const sp = await d.store.providers.byEntityId(ORG_ID, entityId);
    session = sessionOf(USER.id);
    let res = await handleIdpRequest(d, createCallContext(), { org: 'acme', endpoint: 'sso', method: 'GET', query: `sp=${encodeURIComponent(entityId)}`, body: '' });
    expect([res.status, res.body]).toEqual([403, expect.stringContaining('IdP-initiated sign-on is not allowed')]);
    await updateProvider(d, { id: sp!.id, allow_idp_initiated: true });
    res = await handleIdpRequest(d, createCallContext(), { org: 'acme', endpoint: 'sso', method: 'GET', query: `sp=${encodeURIComponent(entityId)}&RelayState=%2Fhome`, body: '' });
    const form = postedForm(res);
    expect(form.RelayState).toBe('/home');
    const spSaml = new SAML({
      issuer: entityId, callbackUrl: SP_ACS, idpCert: await publishedCerts(), audience: entityId, validateInResponseTo: ValidateInResponseTo.never,
    });
    const { profile } = await spSaml.validatePostResponseAsync({ SAMLResponse: form.SAMLResponse });
    expect(profile?.nameID).toBe(USER.email);
  });

  it('refuses a disabled or unknown organization, and a malformed SAMLRequest with 400', async () => {
    session = sessionOf(USER.id);
    expect((await handleIdpRequest(d, createCallContext(), { org: 'other', endpoint: 'metadata', method: 'GET', query: '', body: '' })).status).toBe(403);
    expect((await handleIdpRequest(d, createCallContext(), { org: 'nope', endpoint: 'metadata', method: 'GET', query: '', body: '' })).status).toBe(404);
    for (const q of ['SAMLRequest=%25%25%25', 'SAMLRequest=bm90IGRlZmxhdGVk', '']) {
      const res = await handleIdpRequest(d, createCallContext(), { org: 'acme', endpoint: 'sso', method: 'GET', query: q, body: '' });
      expect(res.status).toBe(400);
    }
  });
});

describe('the admin actions\' saml.* audit rows go to orgs\' outbox with the write (issue 32 §1)', () => {
  /** The `audit.recorded` rows in orgs' outbox, as [action, resource_id] pairs, oldest first. */
  const outboxed = async (): Promise<Array<[string, string]>> => {
    const rows = await scratch.outbox();
    return rows.filter((r) => r.name === 'audit.recorded').map((r) => r.data as BusEvents['audit.recorded'])
      .filter((a) => a.action.startsWith('saml.idp_')).map((a) => [a.action, a.resource_id ?? '']);
  };

  it('create, update, delete, rotate and retire each store their row in the transaction of the change; a refused write stores none', async () => {
    const { samlIdpHandlers } = await import('./rpc.ts');
    const h = samlIdpHandlers({ ...d, authenticator: null });
    const ctx = createCallContext();
    const before = (await outboxed()).length;
    const sp = await h.CreateSamlServiceProvider({ org_id: ORG_ID, name: 'Audited', entity_id: 'urn:audited', acs_url: 'https://audited.example/acs' } as never, ctx);
    // the same entity id again: refused, rolled back, no audit row
    await expect(h.CreateSamlServiceProvider({ org_id: ORG_ID, name: 'Again', entity_id: 'urn:audited', acs_url: 'https://audited.example/acs' } as never, ctx)).rejects.toThrow();
    await h.UpdateSamlServiceProvider({ id: sp.id, name: 'Audited 2' } as never, ctx);
    await h.DeleteSamlServiceProvider({ id: sp.id } as never, ctx);
    await expect(h.DeleteSamlServiceProvider({ id: sp.id } as never, ctx)).rejects.toThrow('service provider not found');
    const first = await h.RotateSamlIdpCert({ org_id: ORG_ID } as never, ctx);
    const second = await h.RotateSamlIdpCert({ org_id: ORG_ID } as never, ctx);
    await h.RetireSamlIdpKey({ id: first.id } as never, ctx);
    // retiring it again and retiring the current key change nothing: no row
    await h.RetireSamlIdpKey({ id: first.id } as never, ctx);
    await expect(h.RetireSamlIdpKey({ id: second.id } as never, ctx)).rejects.toThrow();
    expect((await outboxed()).slice(before)).toEqual([
      ['saml.idp_service_provider_changed', sp.id], ['saml.idp_service_provider_changed', sp.id], ['saml.idp_service_provider_changed', sp.id],
      ['saml.idp_key_rotated', first.id], ['saml.idp_key_rotated', second.id], ['saml.idp_key_retired', first.id],
    ]);
    // none went through the sink of sign-on rows
    expect(audits.filter((a) => a.action !== 'saml.idp_assertion_issued' && a.action !== 'saml.idp_assertion_failed')).toEqual([]);
  });
});

describe('issue 31: signed AuthnRequests, encrypted assertions, Single Logout, staged key rotation', () => {
  const signerId = 'https://signer.example.test/metadata';
  const SLO = 'https://signer.example.test/saml/slo';
  let encCert = '';
  let encKey = '';
  let otherKey = '';
  /** the sessions authn was asked to end (EndCookieSession) */
  const ended: string[] = [];
  let spId = '';
  beforeAll(async () => {
    ({ certPem: encCert, keyPem: encKey } = await newSigningCertificate('test SP encryption', Math.floor(Date.now() / 1000), true));
    ({ keyPem: otherKey } = await newSigningCertificate('someone else', Math.floor(Date.now() / 1000)));
    d.authn = { ...d.authn!, EndCookieSession: async () => { ended.push(session?.id ?? ''); return { message: 'Logged out successfully' }; } };
    const sp = await createProvider(d, {
      org_id: ORG_ID, name: 'signing SP', entity_id: signerId, acs_url: SP_ACS, sp_cert_pem: spCert, slo_url: SLO,
      mapped_attributes: JSON.stringify({ email: 'mail' }),
    });
    spId = sp.id;
    expect(sp).toMatchObject({ spCertPem: expect.stringContaining('BEGIN CERTIFICATE'), sloUrl: SLO, spEncryptionCertPem: null });
   }, 180_000);

  /** node-saml as the registered SP, signing with `key` (none: unsigned), SHA-256 unless told. */
  const signer = async (key: string | null, o: { binding?: 'HTTP-POST'; alg?: 'sha1' | 'sha256'; decrypt?: string } = {}): Promise<SAML> => new SAML({
    issuer: signerId, callbackUrl: SP_ACS, entryPoint: `${URL_BASE}/oauth/saml/acme/idp/sso`, logoutUrl: `${URL_BASE}/oauth/saml/acme/idp/slo`,
    idpCert: await publishedCerts(), audience: signerId, wantAssertionsSigned: true, wantAuthnResponseSigned: true,
    validateInResponseTo: ValidateInResponseTo.always, ...(key ? { privateKey: key, signatureAlgorithm: o.alg ?? 'sha256' } : {}),
    ...(o.binding ? { authnRequestBinding: o.binding } : {}), ...(o.decrypt ? { decryptionPvk: o.decrypt } : {}),
  });
  /** the last sign-on audit row, its `metadata` (a JSON string) parsed */
  const lastAudit = () => ({ ...audits.at(-1)!, metadata: JSON.parse(String(audits.at(-1)!.metadata)) as Record<string, unknown> });
  const get = (query: string, endpoint = 'sso') => handleIdpRequest(d, createCallContext(), { org: 'acme', endpoint, method: 'GET', query, body: '' });

  it('a registered signing certificate: a signed HTTP-Redirect request passes (also after the login page), a tampered one does not', async () => {
    const sp = await signer(spKey);
    const url = new URL(await sp.getAuthorizeUrlAsync('relay-s', undefined, {}));
    expect(url.searchParams.get('Signature')).toBeTruthy();
    session = null;
    const toLogin = await get(url.search.slice(1));
    expect(toLogin.status).toBe(302);
    // the way back keeps the signed octets as received
    const back = new URL(new URL(toLogin.location!).searchParams.get('return_to')!, URL_BASE);
    expect(back.search).toBe(url.search);
    session = sessionOf(USER.id);
    const { profile } = await sp.validatePostResponseAsync({ SAMLResponse: postedForm(await get(back.search.slice(1))).SAMLResponse });
    expect(profile?.nameID).toBe(USER.email);

    const tampered = new URL(await sp.getAuthorizeUrlAsync('relay-s', undefined, {}));
    tampered.searchParams.set('RelayState', 'relay-evil');
    const res = await get(tampered.search.slice(1));
    expect([res.status, res.body]).toEqual([400, expect.stringContaining('signature does not verify with the service provider&apos;s registered certificate')]);
    expect(lastAudit()).toMatchObject({ action: 'saml.idp_assertion_failed', resource_id: spId, metadata: expect.objectContaining({ reason: expect.stringContaining('does not verify') }) });
  }, 120_000);

  it.each([
    ['unsigned', null, {}, 'the service provider must sign its AuthnRequest: the request has no signature'],
    ['signed with another key', 'other', {}, 'signature does not verify'],
    ['signed with RSA-SHA1', 'sp', { alg: 'sha1' as const }, 'signed with an algorithm that is not accepted'],
    ['unsigned on HTTP-POST', null, { binding: 'HTTP-POST' as const }, 'the service provider must sign its AuthnRequest: the request has no signature'],
    ['signed with another key on HTTP-POST', 'other', { binding: 'HTTP-POST' as const }, 'signature does not verify'],
  ])('refuses a request %s, with the reason in the audit log', async (_name, which, opts, reason) => {
    const o = opts as { binding?: 'HTTP-POST'; alg?: 'sha1' | 'sha256' };
    const sp = await signer(which === 'sp' ? spKey : which === 'other' ? otherKey : null, o);
    session = sessionOf(USER.id);
    let res: IdpHttpResponse;
    if (o.binding === 'HTTP-POST') {
      const form = await sp.getAuthorizeFormAsync('r');
      const samlRequest = /name="SAMLRequest" value="([^"]+)"/.exec(form)![1]!;
      res = await handleIdpRequest(d, createCallContext(), { org: 'acme', endpoint: 'sso', method: 'POST', query: '', body: new URLSearchParams({ SAMLRequest: samlRequest }).toString() });
    } else {
      res = await get(new URL(await sp.getAuthorizeUrlAsync('', undefined, {})).search.slice(1));
    }
    expect(res.status).toBe(400);
    expect(res.body).not.toContain('SAMLResponse');
    expect(lastAudit()).toMatchObject({ action: 'saml.idp_assertion_failed', resource_id: spId, metadata: expect.objectContaining({ reason: expect.stringContaining(reason) }) });
  });

  it('a signed HTTP-POST request passes; one signed for another Destination does not', async () => {
    session = sessionOf(USER.id);
    const sp = await signer(spKey, { binding: 'HTTP-POST' });
    const form = await sp.getAuthorizeFormAsync('r');
    const samlRequest = /name="SAMLRequest" value="([^"]+)"/.exec(form)![1]!;
    const ok = await handleIdpRequest(d, createCallContext(), { org: 'acme', endpoint: 'sso', method: 'POST', query: '', body: new URLSearchParams({ SAMLRequest: samlRequest }).toString() });
    expect((await sp.validatePostResponseAsync({ SAMLResponse: postedForm(ok).SAMLResponse })).profile?.nameID).toBe(USER.email);
    const elsewhere = new SAML({ issuer: signerId, callbackUrl: SP_ACS, entryPoint: 'https://other-idp.example/sso', idpCert: 'x', privateKey: spKey, signatureAlgorithm: 'sha256', authnRequestBinding: 'HTTP-POST' });
    const f2 = /name="SAMLRequest" value="([^"]+)"/.exec(await elsewhere.getAuthorizeFormAsync('r'))![1]!;
    const res = await handleIdpRequest(d, createCallContext(), { org: 'acme', endpoint: 'sso', method: 'POST', query: '', body: new URLSearchParams({ SAMLRequest: f2 }).toString() });
    expect([res.status, res.body]).toEqual([400, expect.stringContaining('Destination is not this endpoint')]);
  });

  it('an encryption certificate: the assertion is encrypted (signed inside), node-saml decrypts it with the SP key', async () => {
    await updateProvider(d, { id: spId, sp_encryption_cert_pem: encCert });
    session = sessionOf(USER.id);
    const sp = await signer(spKey, { decrypt: encKey });
    const form = postedForm(await get(new URL(await sp.getAuthorizeUrlAsync('', undefined, {})).search.slice(1)));
    const xml = Buffer.from(form.SAMLResponse, 'base64').toString('utf8');
    expect(xml).toContain('EncryptedAssertion');
    expect(xml).toContain('http://www.w3.org/2009/xmlenc11#aes128-gcm');
    expect(xml).not.toContain(USER.email);
    const { profile } = await sp.validatePostResponseAsync({ SAMLResponse: form.SAMLResponse });
    expect([profile?.nameID, profile?.['mail']]).toEqual([USER.email, USER.email]);
    expect(lastAudit()).toMatchObject({ action: 'saml.idp_assertion_issued', metadata: expect.objectContaining({ encrypted: true }) });
    // without the SP's decryption key nothing is readable
    await expect((await signer(spKey)).validatePostResponseAsync({ SAMLResponse: form.SAMLResponse })).rejects.toThrow();
    expect(await refusal(updateProvider(d, { id: spId, sp_encryption_cert_pem: 'nope' }))).toBe('invalid_argument sp_encryption_cert_pem must be a PEM-encoded X.509 certificate');
    await updateProvider(d, { id: spId, sp_encryption_cert_pem: '' });
  });

  it('Single Logout: a signed LogoutRequest ends the session and answers a signed LogoutResponse to the slo_url', async () => {
    const sp = await signer(spKey);
    // a session no other SP was signed in to (nothing to propagate)
    session = sessionOf(USER.id, 's-alone');
    const logout = new URL(await sp.getLogoutUrlAsync({ nameID: USER.email, nameIDFormat: NAME_ID_FORMATS.email, issuer: signerId } as never, 'bye', {}));
    const res = await get(logout.search.slice(1), 'slo');
    const form = postedForm(res);
    expect(form.action).toBe(SLO);
    expect(form.RelayState).toBe('bye');
    expect(ended).toEqual(['s-alone']);
    const xml = Buffer.from(form.SAMLResponse, 'base64').toString('utf8');
    const requestId = /ID="([^"]+)"/.exec(Buffer.from((await import('node:zlib')).inflateRawSync(Buffer.from(logout.searchParams.get('SAMLRequest')!, 'base64'))).toString('utf8'))![1];
    expect(xml).toContain(`InResponseTo="${requestId}"`);
    expect(xml).toContain('urn:oasis:names:tc:SAML:2.0:status:Success');
    // node-saml checks the IdP's signature on it (InResponseTo is compared above: node-saml reads it on a Response only)
    const checker = new SAML({ issuer: signerId, callbackUrl: SP_ACS, idpCert: await publishedCerts(), validateInResponseTo: ValidateInResponseTo.never });
    expect(await checker.validatePostResponseAsync({ SAMLResponse: form.SAMLResponse })).toMatchObject({ loggedOut: true });
    expect(lastAudit()).toMatchObject({ action: 'saml.idp_logout', metadata: expect.objectContaining({ session_ended: true, participants: 0, status: 'urn:oasis:names:tc:SAML:2.0:status:Success' }) });

    // another user's NameID: the session stays, the answer says Requester
    const other = new URL(await sp.getLogoutUrlAsync({ nameID: 'mallory@example.com', nameIDFormat: NAME_ID_FORMATS.email, issuer: signerId } as never, '', {}));
    const kept = Buffer.from(postedForm(await get(other.search.slice(1), 'slo')).SAMLResponse, 'base64').toString('utf8');
    expect(kept).toContain('urn:oasis:names:tc:SAML:2.0:status:Requester');
    expect(ended).toEqual(['s-alone']);

    // unsigned, or signed with another key: refused, nothing ended
    for (const key of [null, otherKey]) {
      const bad = new URL(await (await signer(key)).getLogoutUrlAsync({ nameID: USER.email, nameIDFormat: NAME_ID_FORMATS.email, issuer: signerId } as never, '', {}));
      const r = await get(bad.search.slice(1), 'slo');
      expect([r.status, r.body]).toEqual([400, expect.stringMatching(/must sign its LogoutRequest|signature does not verify/)]);
      expect(audits.at(-1)?.action).toBe('saml.idp_logout_failed');
    }
    expect(ended).toEqual(['s-alone']);
  });

  describe('issue 31: Single Logout propagated to the session\'s other SPs (SAML Profiles §4.4.3.3, Core §3.7)', () => {
    const B = { entityId: 'https://b.example.test/metadata', acs: 'https://b.example.test/acs', slo: 'https://b.example.test/slo' };
    const IDP_ENTITY = `${URL_BASE}/oauth/saml/acme/idp/metadata`;
    beforeAll(async () => {
      // B takes a persistent NameID (the user's id), A the email: each is named with its own
      await createProvider(d, { org_id: ORG_ID, name: 'SP B', entity_id: B.entityId, acs_url: B.acs, sp_cert_pem: spCert, slo_url: B.slo, name_id_format: NAME_ID_FORMATS.persistent });
      // C has no slo_url: it cannot be logged out
      await createProvider(d, { org_id: ORG_ID, name: 'SP C', entity_id: 'https://c.example.test/metadata', acs_url: SP_ACS });
    });
    /** node-saml as SP B, signing with `key` */
    const spB = async (key = spKey): Promise<SAML> => new SAML({
      issuer: B.entityId, callbackUrl: B.acs, entryPoint: `${URL_BASE}/oauth/saml/acme/idp/sso`, logoutUrl: `${URL_BASE}/oauth/saml/acme/idp/slo`,
      idpCert: await publishedCerts(), audience: B.entityId, privateKey: key, signatureAlgorithm: 'sha256', identifierFormat: NAME_ID_FORMATS.persistent,
      wantAssertionsSigned: true, wantAuthnResponseSigned: true, validateInResponseTo: ValidateInResponseTo.always,
    });
    /** SP-initiated sign-on of `sp` in the current session: node-saml's profile of the assertion */
    const signIn = async (sp: SAML) => (await sp.validatePostResponseAsync({ SAMLResponse: postedForm(await get(new URL(await sp.getAuthorizeUrlAsync('', undefined, {})).search.slice(1))).SAMLResponse })).profile!;
    /** A's LogoutRequest for the signed-in user: the IdP's answer */
    const aLogsOut = async (relay = '') => {
      const a = await signer(spKey);
      return get(new URL(await a.getLogoutUrlAsync({ nameID: USER.email, nameIDFormat: NAME_ID_FORMATS.email, issuer: signerId } as never, relay, {})).search.slice(1), 'slo');
    };
    /** the LogoutRequest the browser is sent to B with, as node-saml at B reads it (signature checked) */
    const atB = async (hop: IdpHttpResponse, b: SAML) => {
      expect(hop.status).toBe(302);
      const to = new URL(hop.location!);
      expect(`${to.origin}${to.pathname}`).toBe(B.slo);
      expect([to.searchParams.get('SigAlg'), to.searchParams.get('Signature')]).toEqual(['http://www.w3.org/2001/04/xmldsig-more#rsa-sha256', expect.any(String)]);
      const { profile } = await b.validateRedirectAsync(Object.fromEntries(to.searchParams) as never, to.search.slice(1));
      return { to, request: profile! };
    };
    const statusOf = (res: IdpHttpResponse) => /StatusCode Value="([^"]+)"/.exec(Buffer.from(postedForm(res).SAMLResponse, 'base64').toString('utf8'))?.[1];
    const auditsOf = (action: string) => audits.filter((a) => a.action === action).map((a) => ({ ...a, metadata: JSON.parse(String(a.metadata)) as Record<string, unknown> }));

    it('the session participants are stored per session and SP, taken once, and expire (storage)', async () => {
      await checkSingleLogoutStorage(d.store);
    });

    it("A's logout: B gets a LogoutRequest signed by the IdP naming its NameID and SessionIndex; B's Success answer is accepted; A gets Success", async () => {
      session = sessionOf(USER.id, 's-two');
      const b = await spB();
      const pa = await signIn(await signer(spKey));
      await signIn(b);
      // B asks again in the same session: the latest assertion is the one logged out
      const pb = await signIn(b);
      expect([pa.nameID, pb.nameID]).toEqual([USER.email, USER.id]);
      const hop = await aLogsOut('bye');
      expect(ended).toContain('s-two');
      const { to, request } = await atB(hop, b);
      expect(request).toMatchObject({ issuer: IDP_ENTITY, nameID: USER.id, nameIDFormat: NAME_ID_FORMATS.persistent, sessionIndex: pb.sessionIndex });
      // the signature covers the request: a changed one does not verify at B
      const forged = new URL(to);
      const sent = inflateRawSync(Buffer.from(to.searchParams.get('SAMLRequest')!, 'base64')).toString('utf8');
      forged.searchParams.set('SAMLRequest', deflateRawSync(sent.replace(USER.id, OUTSIDER)).toString('base64'));
      await expect(b.validateRedirectAsync(Object.fromEntries(forged.searchParams) as never, forged.search.slice(1))).rejects.toThrow('Invalid query signature');

      const answer = new URL(await b.getLogoutResponseUrlAsync(request as never, '', {}, true));
      expect(answer.searchParams.get('Signature')).toBeTruthy();
      const done = await get(answer.search.slice(1), 'slo');
      const form = postedForm(done);
      expect([form.action, form.RelayState, statusOf(done)]).toEqual([SLO, 'bye', 'urn:oasis:names:tc:SAML:2.0:status:Success']);
      const checker = new SAML({ issuer: signerId, callbackUrl: SP_ACS, idpCert: await publishedCerts(), validateInResponseTo: ValidateInResponseTo.never });
      expect(await checker.validatePostResponseAsync({ SAMLResponse: form.SAMLResponse })).toMatchObject({ loggedOut: true });
      expect(auditsOf('saml.idp_logout_propagated').at(-1)).toMatchObject({ metadata: expect.objectContaining({ entity_id: B.entityId, logged_out: true, status: 'urn:oasis:names:tc:SAML:2.0:status:Success' }) });
      expect(auditsOf('saml.idp_logout').at(-1)).toMatchObject({ resource_id: spId, metadata: expect.objectContaining({ session_ended: true, participants: 1, status: null }) });

      // B's answer is single use; a LogoutResponse to no logout in progress is refused
      const again = await get(answer.search.slice(1), 'slo');
      expect([again.status, again.body]).toEqual([400, expect.stringContaining('answers no logout in progress')]);
      // the session's participants went with it: a second logout of the same session sends nowhere
      expect(statusOf(await aLogsOut())).toBe('urn:oasis:names:tc:SAML:2.0:status:Success');
    });

    it.each([
      ['answers a non-success status', async (b: SAML, req: Record<string, unknown>) => b.getLogoutResponseUrlAsync(req as never, '', {}, false), 'answered urn:oasis:names:tc:SAML:2.0:status:Requester'],
      ['answers Success signed with another key', async (_b: SAML, req: Record<string, unknown>) => (await spB(otherKey)).getLogoutResponseUrlAsync(req as never, '', {}, true), 'signature does not verify'],
      ['answers Success unsigned', async (_b: SAML, req: Record<string, unknown>) => {
        const unsigned = new SAML({ issuer: B.entityId, callbackUrl: B.acs, entryPoint: `${URL_BASE}/oauth/saml/acme/idp/sso`, logoutUrl: `${URL_BASE}/oauth/saml/acme/idp/slo`, idpCert: 'x' });
        return unsigned.getLogoutResponseUrlAsync(req as never, '', {}, true);
      }, 'must sign its LogoutResponse'],
    ])('B %s: A gets PartialLogout (Core §3.7.3.2), the reason audited', async (_name, answerWith, reason) => {
      session = sessionOf(USER.id, `s-partial-${reason.length}`);
      const b = await spB();
      await signIn(await signer(spKey));
      await signIn(b);
      const { request } = await atB(await aLogsOut(), b);
      const done = await get(new URL(await answerWith(b, request as never)).search.slice(1), 'slo');
      expect([postedForm(done).action, statusOf(done)]).toEqual([SLO, 'urn:oasis:names:tc:SAML:2.0:status:PartialLogout']);
      expect(auditsOf('saml.idp_logout_propagated').at(-1)).toMatchObject({ metadata: expect.objectContaining({ entity_id: B.entityId, logged_out: false, reason: expect.stringContaining(reason) }) });
      expect(lastAudit()).toMatchObject({ action: 'saml.idp_logout_propagated' });
    });

    it('a participant without slo_url cannot be reached: PartialLogout at once', async () => {
      session = sessionOf(USER.id, 's-unreachable');
      await signIn(await signer(spKey));
      await signIn(nodeSamlSp('https://c.example.test/metadata', await publishedCerts()));
      const done = await aLogsOut();
      expect(statusOf(done)).toBe('urn:oasis:names:tc:SAML:2.0:status:PartialLogout');
      expect(auditsOf('saml.idp_logout_propagated').at(-1)).toMatchObject({ metadata: expect.objectContaining({ entity_id: 'https://c.example.test/metadata', logged_out: false, reason: 'the service provider has no slo_url registered' }) });
    });

    it('a LogoutResponse that is no LogoutResponse, or names no InResponseTo, is refused with 400', async () => {
      const enc = (xml: string) => encodeURIComponent(deflateRawSync(xml).toString('base64'));
      const noId = await get(`SAMLResponse=${enc('<samlp:LogoutResponse xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol" ID="_x" Version="2.0"/>')}`, 'slo');
      expect([noId.status, noId.body]).toEqual([400, expect.stringContaining('not a LogoutResponse with an InResponseTo')]);
      const garbage = await get('SAMLResponse=%%%', 'slo');
      expect([garbage.status, garbage.body]).toEqual([400, expect.stringContaining('the SAML response could not be read')]);
    });
  });

  it('Single Logout is refused for an SP without slo_url', async () => {
    await updateProvider(d, { id: spId, slo_url: '' });
    const logout = new URL(await (await signer(spKey)).getLogoutUrlAsync({ nameID: USER.email, nameIDFormat: NAME_ID_FORMATS.email, issuer: signerId } as never, '', {}));
    const r = await get(logout.search.slice(1), 'slo');
    expect([r.status, r.body]).toEqual([400, expect.stringContaining('no slo_url registered')]);
    expect(await refusal(updateProvider(d, { id: spId, slo_url: 'ftp://x' }))).toBe('invalid_argument slo_url must be a valid http(s) URL');
    await updateProvider(d, { id: spId, slo_url: SLO });
  });

  it('staged rotation: the pending key is published while the current one signs; the switch; retire the old one', async () => {
    const before = (await listKeys(d, ORG_ID)).find((k) => k.status === 'current')!;
    const pending = await rotateKey(d, ORG_ID, undefined, true);
    expect(pending.status).toBe('pending');
    const pem = (c: string) => c.replace(/-----[^-]+-----/g, '').replace(/\s+/g, '');
    const published = await publishedCerts();
    expect(published.slice(0, 2)).toEqual([pem(before.certPem), pem(pending.certPem)]);
    // an SP pinned to the current certificate alone still accepts: the current key still signs
    session = sessionOf(USER.id);
    const pinned = new SAML({ issuer: signerId, callbackUrl: SP_ACS, entryPoint: `${URL_BASE}/oauth/saml/acme/idp/sso`, idpCert: before.certPem, audience: signerId, privateKey: spKey, signatureAlgorithm: 'sha256', validateInResponseTo: ValidateInResponseTo.always });
    let form = postedForm(await get(new URL(await pinned.getAuthorizeUrlAsync('', undefined, {})).search.slice(1)));
    expect((await pinned.validatePostResponseAsync({ SAMLResponse: form.SAMLResponse })).profile?.nameID).toBe(USER.email);
    // the switch: the pending key signs; an SP that took the new certificate from the metadata accepts
    const switched = await rotateKey(d, ORG_ID);
    expect([switched.id, switched.status]).toEqual([pending.id, 'current']);
    const statuses = Object.fromEntries((await listKeys(d, ORG_ID)).map((k) => [k.id, k.status]));
    expect([statuses[pending.id], statuses[before.id]]).toEqual(['current', 'active']);
    const updated = new SAML({ issuer: signerId, callbackUrl: SP_ACS, entryPoint: `${URL_BASE}/oauth/saml/acme/idp/sso`, idpCert: pending.certPem, audience: signerId, privateKey: spKey, signatureAlgorithm: 'sha256', validateInResponseTo: ValidateInResponseTo.always });
    form = postedForm(await get(new URL(await updated.getAuthorizeUrlAsync('', undefined, {})).search.slice(1)));
    expect((await updated.validatePostResponseAsync({ SAMLResponse: form.SAMLResponse })).profile?.nameID).toBe(USER.email);
    expect((await retireKey(d, before.id)).message).toBe(KEY_RETIRED);
    expect(await publishedCerts()).not.toContain(pem(before.certPem));
    // a pending key can be abandoned
    const abandoned = await rotateKey(d, ORG_ID, undefined, true);
    expect((await retireKey(d, abandoned.id)).message).toBe(KEY_RETIRED);
    expect(await publishedCerts()).not.toContain(pem(abandoned.certPem));
    expect((await rotateKey(d, ORG_ID)).id).not.toBe(abandoned.id);
  }, 180_000);
});
