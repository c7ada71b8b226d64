/**
 * The SAML service provider (behaviour.md §6.3; SAML 2.0 Web Browser SSO) against a real IdP of
 * another library (samlify, libs/testing): our metadata is what the IdP reads; our HTTP-Redirect
 * AuthnRequest is what it parses; its signed responses are what the ACS validates. Each refusal the
 * issue names is shown: a tampered signature, a wrong audience, an expired assertion, a replayed
 * assertion, an unsolicited response without `allow_idp_initiated`, a correctly signed response
 * naming another issuer, and XML signature wrapping (a forged assertion beside, around or in place of
 * the signed one); and the recipient and destination checks, the attribute mapping and the
 * verified-email rule; the SP key pair rotated in place (staged, activated, retired) with assertions
 * encrypted to either published key decrypting during the overlap.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { DOMParser, XMLSerializer, type Element } from '@xmldom/xmldom';
import { createSamlIdp, selfSigned, type SamlIdpOptions, type TestSamlIdp } from '@gatehouse/testing';
import type { OrganizationRecord } from '../storage/ports.ts';
import { createSamlConnection, updateSamlConnection } from './connections.ts';
import { consumeLogoutResponse, consumeSamlResponse, samlLogin, samlLoginUrl, samlLogoutUrl, spMetadata } from './saml.ts';
import { openSsoScratch, type SsoScratch } from './scratch.ts';
import { rotateSpKey } from './sp-keys.ts';
import type { SamlConnectionRecord } from './storage/ports.ts';

let s: SsoScratch;
let idp: TestSamlIdp;
const idpKeys = selfSigned('samlify-idp');

beforeAll(async () => { s = await openSsoScratch('sqlite'); });
afterAll(async () => { await s?.close(); });

interface Setup { org: OrganizationRecord; conn: SamlConnectionRecord; metadata: string }

async function setup(opts: { allowIdpInitiated?: boolean; attributeMapping?: string; idpSloUrl?: string } = {}, idpOpts: SamlIdpOptions = {}): Promise<Setup> {
  const orgId = await s.newOrg();
  const entity = `https://idp.example.com/${randomUUID()}`;
  // the IdP verifies our AuthnRequest's signature with the certificate of our metadata
  idp = createSamlIdp(entity, 'https://idp.example.com/sso', idpKeys, { wantAuthnRequestsSigned: true, ...idpOpts });
  const conn = await createSamlConnection(s.d, {
    orgId, name: 'IdP', idpEntityId: entity, idpSsoUrl: 'https://idp.example.com/sso', idpCertificate: idpKeys.cert, ...opts,
  });
  const org = (await s.d.orgs.organizations.get(orgId))!;
  return { org, conn, metadata: await spMetadata(s.d, org, conn) };
}

/** An SP-initiated round: our AuthnRequest → the IdP parses it → its answer to that request. */
async function round(x: Setup, user = { email: 'ada@example.com', givenName: 'Ada', familyName: 'Lovelace' }, overrides = {}) {
  const url = await samlLoginUrl(s.d, x.org, x.conn, { redirect_uri: 'https://app.example.com/cb', state: 'st' });
  expect(url.startsWith('https://idp.example.com/sso?SAMLRequest=')).toBe(true);
  const relayState = new URL(url).searchParams.get('RelayState')!;
  const requestId = await idp.requestIdOf(x.metadata, url);
  const response = await idp.respond(x.metadata, user, requestId, overrides);
  return { relayState, response };
}

const rejection = async (p: Promise<unknown>): Promise<string> => p.then(() => 'accepted', (e: Error) => e.message);

describe('SAML SP metadata and AuthnRequest', () => {
  it('publishes our entity id and ACS under --url, with the org name in them', async () => {
    const x = await setup();
    expect(x.metadata).toContain(`entityID="https://auth.example.com/oauth/saml/${x.org.name}/metadata"`);
    expect(x.metadata).toContain(`Location="https://auth.example.com/oauth/saml/${x.org.name}/acs"`);
    expect(x.metadata).toContain('WantAssertionsSigned="true"');
  });

  it('publishes the connection\'s SP certificate for signing and encryption, AuthnRequestsSigned; the private key is stored sealed', async () => {
    const x = await setup();
    const stored = (await s.d.store.saml.byId(x.conn.id))!;
    expect(stored.spCertificate).toMatch(/^-----BEGIN CERTIFICATE-----/);
    expect(stored.spPrivateKeySealed).toBeTruthy();
    expect(stored.spPrivateKeySealed).not.toContain('PRIVATE KEY');
    const body = stored.spCertificate!.replace(/-----[A-Z ]+-----|\s/g, '');
    const doc = new DOMParser().parseFromString(x.metadata, 'text/xml');
    const sp = doc.getElementsByTagNameNS('urn:oasis:names:tc:SAML:2.0:metadata', 'SPSSODescriptor')[0]!;
    expect(sp.getAttribute('AuthnRequestsSigned')).toBe('true');
    expect(sp.getAttribute('WantAssertionsSigned')).toBe('true');
    const descriptors = Array.from({ length: sp.getElementsByTagNameNS('urn:oasis:names:tc:SAML:2.0:metadata', 'KeyDescriptor').length }, (_, i) =>
      sp.getElementsByTagNameNS('urn:oasis:names:tc:SAML:2.0:metadata', 'KeyDescriptor')[i]!);
    expect(descriptors.map((k) => [k.getAttribute('use'), (k.getElementsByTagNameNS('http://www.w3.org/2000/09/xmldsig#', 'X509Certificate')[0]!.textContent ?? '').replace(/\s/g, '')]))
      .toEqual([['signing', body], ['encryption', body]]);
  });

  it('signs the HTTP-Redirect AuthnRequest (RSA-SHA256); the IdP verifies it and refuses an altered one', async () => {
    const x = await setup();
    const url = new URL(await samlLoginUrl(s.d, x.org, x.conn, {}));
    expect(url.searchParams.get('SigAlg')).toBe('http://www.w3.org/2001/04/xmldsig-more#rsa-sha256');
    expect(url.searchParams.get('Signature')).toBeTruthy();
    expect(await idp.requestIdOf(x.metadata, url.toString())).toMatch(/^_[0-9a-f]{40}$/);
    const altered = new URL(url);
    altered.searchParams.set('RelayState', 'another-relay-state');
    expect(await rejection(idp.requestIdOf(x.metadata, altered.toString()))).toBe('ERR_FAILED_MESSAGE_SIGNATURE_VERIFICATION');
    const unsigned = new URL(url);
    unsigned.searchParams.delete('Signature');
    expect(await rejection(idp.requestIdOf(x.metadata, unsigned.toString()))).toBe('ERR_MISSING_SIG_ALG');
  });

  it('posts a connection\'s AuthnRequest signed as XML on HTTP-POST; the IdP verifies it, refuses an altered one, and the answer is accepted', async () => {
    const x = await setup();
    const conn = (await updateSamlConnection(s.d, { id: x.conn.id, idpSsoBinding: 'HTTP-POST' }));
    expect(conn.idpSsoBinding).toBe('HTTP-POST');
    const answer = await samlLogin(s.d, x.org, conn, { redirect_uri: 'https://app.example.com/cb' });
    if (!('html' in answer)) throw new Error('expected a form');
    expect(answer.html).toContain('<form method="post" action="https://idp.example.com/sso">');
    const field = (name: string) => new RegExp(`name="${name}" value="([^"]*)"`).exec(answer.html)![1]!;
    const request = Buffer.from(field('SAMLRequest'), 'base64').toString('utf8');
    expect(request).toMatch(/^(<\?xml[^>]*>)?<samlp:AuthnRequest /);
    expect(request).toContain('<Signature xmlns="http://www.w3.org/2000/09/xmldsig#">');
    const requestId = await idp.requestIdOfPost(x.metadata, field('SAMLRequest'));
    expect(requestId).toMatch(/^_[0-9a-f]{40}$/);
    const altered = Buffer.from(request.replace(/AssertionConsumerServiceURL="[^"]+"/, 'AssertionConsumerServiceURL="https://evil.example.com/acs"')).toString('base64');
    expect(await rejection(idp.requestIdOfPost(x.metadata, altered))).toBe('FAILED_TO_VERIFY_SIGNATURE');
    const response = await idp.respond(x.metadata, { email: 'ada@example.com' }, requestId);
    const login = await consumeSamlResponse(s.d, x.org, conn, { SAMLResponse: response, RelayState: field('RelayState') });
    expect(login.params).toEqual({ redirect_uri: 'https://app.example.com/cb' });
    await expect(updateSamlConnection(s.d, { id: x.conn.id, idpSsoBinding: 'SOAP' })).rejects.toThrow('idp_sso_binding must be HTTP-Redirect or HTTP-POST');
  });

  it('gives a connection stored without an SP key one on first use, and keeps it', async () => {
    const x = await setup();
    const legacy = { ...x.conn, id: randomUUID(), orgId: await s.newOrg(), idpEntityId: `https://idp.example.com/${randomUUID()}`, spCertificate: null, spPrivateKeySealed: null };
    expect(await s.d.store.saml.insert(legacy)).toBe('ok');
    const org = (await s.d.orgs.organizations.get(legacy.orgId))!;
    const first = await spMetadata(s.d, org, (await s.d.store.saml.byId(legacy.id))!);
    const stored = (await s.d.store.saml.byId(legacy.id))!;
    expect(stored.spCertificate).toBeTruthy();
    const certOf = (xml: string) => /<ds:X509Certificate>([^<]+)</.exec(xml)![1]!.replace(/\s/g, '');
    expect(certOf(first)).toBe(stored.spCertificate!.replace(/-----[A-Z ]+-----|\s/g, ''));
    expect(certOf(await spMetadata(s.d, org, stored))).toBe(certOf(first));
  });
});

describe('SAML ACS (behaviour.md §6.3)', () => {
  it('accepts the signed answer to our request, maps the attributes and returns the app parameters', async () => {
    const x = await setup();
    const { relayState, response } = await round(x);
    const login = await consumeSamlResponse(s.d, x.org, x.conn, { SAMLResponse: response, RelayState: relayState });
    expect(login).toEqual({
      identity: { issuer: x.conn.idpEntityId, subject: 'ada@example.com', email: 'ada@example.com', emailVerified: false, givenName: 'Ada', familyName: 'Lovelace' },
      params: { redirect_uri: 'https://app.example.com/cb', state: 'st' }, unsolicited: false,
      session: { nameID: 'ada@example.com', nameIDFormat: 'urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress', sessionIndex: expect.stringMatching(/^_/) },
    });
  });

  it('decrypts an EncryptedAssertion the IdP encrypted for the SP certificate of our metadata', async () => {
    const x = await setup({}, { encryptAssertions: true });
    const { relayState, response } = await round(x);
    const xml = Buffer.from(response, 'base64').toString('utf8');
    expect(xml).toContain('EncryptedAssertion');
    expect(xml).not.toContain('ada@example.com');
    const login = await consumeSamlResponse(s.d, x.org, x.conn, { SAMLResponse: response, RelayState: relayState });
    expect(login.identity).toMatchObject({ email: 'ada@example.com', subject: 'ada@example.com', givenName: 'Ada' });
  });

  it('refuses an assertion encrypted for another SP key', async () => {
    const other = await setup();
    const x = await setup({}, { encryptAssertions: true });
    // the IdP encrypts for the other connection's certificate, but answers our request at our ACS
    const otherCert = /use="encryption"[\s\S]*?<ds:X509Certificate>([^<]+)</.exec(other.metadata)![1]!;
    const mixed = x.metadata.replace(/(use="encryption"[\s\S]*?<ds:X509Certificate>)[^<]+</, `$1${otherCert}<`);
    const url = await samlLoginUrl(s.d, x.org, x.conn, {});
    const response = await idp.respond(mixed, { email: 'ada@example.com' }, await idp.requestIdOf(x.metadata, url));
    expect(await rejection(consumeSamlResponse(s.d, x.org, x.conn, { SAMLResponse: response, RelayState: new URL(url).searchParams.get('RelayState')! })))
      .toBe('SAML response rejected: the assertion could not be decrypted');
  });

  it('treats the email as verified only in a domain the org verified', async () => {
    const x = await setup();
    const domain = `${randomUUID().slice(0, 8)}.example.org`;
    await s.verifyDomain(x.org.id, domain);
    const { relayState, response } = await round(x, { email: `grace@${domain}`, givenName: 'Grace', familyName: 'Hopper' });
    expect((await consumeSamlResponse(s.d, x.org, x.conn, { SAMLResponse: response, RelayState: relayState })).identity.emailVerified).toBe(true);
  });

  it('maps attributes through attribute_mapping', async () => {
    const x = await setup({ attributeMapping: JSON.stringify({ email: 'urn:mail', given_name: 'first', family_name: 'last' }) });
    const { relayState, response } = await round(x, {
      email: 'nameid@example.com', attributes: { 'urn:mail': 'Mapped@Example.com', first: 'Mary', last: 'Jackson' },
    } as never);
    const { identity } = await consumeSamlResponse(s.d, x.org, x.conn, { SAMLResponse: response, RelayState: relayState });
    expect(identity).toMatchObject({ email: 'mapped@example.com', givenName: 'Mary', familyName: 'Jackson', subject: 'nameid@example.com' });
  });

  it('refuses a tampered signature', async () => {
    const x = await setup();
    const { relayState, response } = await round(x);
    const tampered = Buffer.from(Buffer.from(response, 'base64').toString('utf8').replace('ada@example.com</saml:AttributeValue>', 'eve@example.com</saml:AttributeValue>')).toString('base64');
    expect(tampered).not.toBe(response);
    expect(await rejection(consumeSamlResponse(s.d, x.org, x.conn, { SAMLResponse: tampered, RelayState: relayState }))).toBe('SAML response rejected: invalid signature');
  });

  it('refuses a response signed by another key', async () => {
    const x = await setup();
    const url = await samlLoginUrl(s.d, x.org, x.conn, {});
    const other = createSamlIdp(x.conn.idpEntityId, 'https://idp.example.com/sso', selfSigned('impostor'));
    const response = await other.respond(x.metadata, { email: 'ada@example.com' }, await other.requestIdOf(x.metadata, url));
    expect(await rejection(consumeSamlResponse(s.d, x.org, x.conn, { SAMLResponse: response, RelayState: new URL(url).searchParams.get('RelayState')! })))
      .toBe('SAML response rejected: invalid signature');
  });

  it.each([
    ['a wrong audience', { audience: 'https://other-sp.example.com' }, 'wrong audience'],
    ['an expired assertion', { issuedAt: new Date(Date.now() - 10 * 60_000), notBefore: new Date(Date.now() - 10 * 60_000), notOnOrAfter: new Date(Date.now() - 5 * 60_000) }, 'assertion expired'],
    ['a not-yet-valid assertion', { notBefore: new Date(Date.now() + 5 * 60_000) }, 'assertion not yet valid'],
    ['a foreign recipient', { recipient: 'https://evil.example.com/acs' }, 'wrong recipient'],
    ['a foreign destination', { destination: 'https://evil.example.com/acs' }, 'wrong destination'],
    ['an answer to another request', { inResponseTo: '_not-ours' }, 'unknown or expired request'],
  ])('refuses %s', async (_name, overrides, reason) => {
    const x = await setup();
    const { relayState, response } = await round(x, undefined, overrides);
    expect(await rejection(consumeSamlResponse(s.d, x.org, x.conn, { SAMLResponse: response, RelayState: relayState }))).toBe(`SAML response rejected: ${reason}`);
  });

  it.each([
    ['a foreign issuer on the signed assertion', { assertionIssuer: 'https://evil.example.com/idp' }],
    ['a foreign issuer on the Response', { responseIssuer: 'https://evil.example.com/idp' }],
    ['a foreign issuer on both', { assertionIssuer: 'https://evil.example.com/idp', responseIssuer: 'https://evil.example.com/idp' }],
  ])('refuses a response correctly signed by the trusted key with %s', async (_name, overrides) => {
    const x = await setup();
    const { relayState, response } = await round(x, undefined, overrides);
    expect(await rejection(consumeSamlResponse(s.d, x.org, x.conn, { SAMLResponse: response, RelayState: relayState }))).toBe('SAML response rejected: wrong issuer');
  });

  it('accepts a Response without its own Issuer (optional in SAML Core §3.2.2) when the assertion names the IdP', async () => {
    const x = await setup();
    const { relayState, response } = await round(x, undefined, { responseIssuer: null });
    expect(await rejection(consumeSamlResponse(s.d, x.org, x.conn, { SAMLResponse: response, RelayState: relayState }))).toBe('accepted');
  });

  /** XML signature wrapping (XSW): the signed assertion kept somewhere, a forged one where an SP might read it. */
  const wrappings: Array<[string, (doc: Element, signed: Element, forged: Element) => void]> = [
    ['a forged assertion before the signed one', (res, signed, forged) => { res.insertBefore(forged, signed); }],
    ['a forged assertion in place, the signed one moved into Extensions', (res, signed, forged) => {
      const ext = res.ownerDocument!.createElementNS('urn:oasis:names:tc:SAML:2.0:protocol', 'samlp:Extensions');
      res.replaceChild(forged, signed); ext.appendChild(signed); res.insertBefore(ext, res.getElementsByTagName('samlp:Status')[0]!);
    }],
    ['a forged assertion in place carrying the signature, the signed one in its Advice', (res, signed, forged) => {
      const sig = signed.getElementsByTagNameNS('http://www.w3.org/2000/09/xmldsig#', 'Signature')[0]!;
      const advice = res.ownerDocument!.createElementNS('urn:oasis:names:tc:SAML:2.0:assertion', 'saml:Advice');
      res.replaceChild(forged, signed); advice.appendChild(signed);
      forged.insertBefore(sig.cloneNode(true), forged.getElementsByTagName('saml:Subject')[0]!);
      forged.insertBefore(advice, forged.getElementsByTagName('saml:Conditions')[0]!.nextSibling);
    }],
    ['a forged assertion with the signed one\'s ID and signature', (res, signed, forged) => {
      forged.setAttribute('ID', signed.getAttribute('ID')!);
      const sig = signed.getElementsByTagNameNS('http://www.w3.org/2000/09/xmldsig#', 'Signature')[0]!;
      forged.insertBefore(sig.cloneNode(true), forged.getElementsByTagName('saml:Subject')[0]!);
      res.replaceChild(forged, signed);
      const ext = res.ownerDocument!.createElementNS('urn:oasis:names:tc:SAML:2.0:protocol', 'samlp:Extensions');
      ext.appendChild(signed); res.insertBefore(ext, res.getElementsByTagName('samlp:Status')[0]!);
    }],
  ];

  it.each(wrappings)('refuses signature wrapping: %s', async (_name, wrap) => {
    const x = await setup();
    const { relayState, response } = await round(x);
    const doc = new DOMParser().parseFromString(Buffer.from(response, 'base64').toString('utf8'), 'text/xml');
    const res = doc.documentElement!;
    const signed = res.getElementsByTagName('saml:Assertion')[0]!;
    // the forged assertion: the signed one without its signature, another subject and id
    const forged = signed.cloneNode(true) as Element;
    const sig = forged.getElementsByTagNameNS('http://www.w3.org/2000/09/xmldsig#', 'Signature')[0]!;
    forged.removeChild(sig);
    forged.setAttribute('ID', '_forged');
    forged.getElementsByTagName('saml:NameID')[0]!.textContent = 'eve@example.com';
    const values = forged.getElementsByTagName('saml:AttributeValue');
    for (let i = 0; i < values.length; i++) if (values[i]!.textContent === 'ada@example.com') values[i]!.textContent = 'eve@example.com';
    wrap(res, signed, forged);
    const wrapped = new XMLSerializer().serializeToString(doc);
    expect(wrapped).toContain('eve@example.com');
    expect(await rejection(consumeSamlResponse(s.d, x.org, x.conn, { SAMLResponse: Buffer.from(wrapped).toString('base64'), RelayState: relayState })))
      .toBe('SAML response rejected: invalid signature');
  });

  it('refuses a response with a DOCTYPE (no entity expansion) as malformed', async () => {
    const x = await setup();
    const { relayState, response } = await round(x);
    const xml = Buffer.from(response, 'base64').toString('utf8');
    const withDtd = `<!DOCTYPE r [<!ENTITY e "ada@example.com">]>${xml}`;
    expect(await rejection(consumeSamlResponse(s.d, x.org, x.conn, { SAMLResponse: Buffer.from(withDtd).toString('base64'), RelayState: relayState })))
      .toBe('SAML response rejected: malformed response');
  });

  it('refuses a replayed assertion, also when posted without its RelayState', async () => {
    const x = await setup({ allowIdpInitiated: true });
    const { relayState, response } = await round(x);
    expect(await rejection(consumeSamlResponse(s.d, x.org, x.conn, { SAMLResponse: response, RelayState: relayState }))).toBe('accepted');
    expect(await rejection(consumeSamlResponse(s.d, x.org, x.conn, { SAMLResponse: response, RelayState: relayState }))).toBe('SAML response rejected: unknown or expired request');
    const unsolicited = await idp.respond(x.metadata, { email: 'ada@example.com' }, '', { assertionId: '_fixed-id' });
    expect(await rejection(consumeSamlResponse(s.d, x.org, x.conn, { SAMLResponse: unsolicited }))).toBe('accepted');
    expect(await rejection(consumeSamlResponse(s.d, x.org, x.conn, { SAMLResponse: unsolicited }))).toBe('SAML response rejected: replayed assertion');
  });

  it('refuses an IdP-initiated response unless allow_idp_initiated', async () => {
    const x = await setup();
    const unsolicited = await idp.respond(x.metadata, { email: 'ada@example.com' }, '');
    expect(await rejection(consumeSamlResponse(s.d, x.org, x.conn, { SAMLResponse: unsolicited }))).toBe('SAML response rejected: unsolicited response not allowed');
    const allowed = await setup({ allowIdpInitiated: true });
    const ok = await idp.respond(allowed.metadata, { email: 'ada@example.com' }, '');
    const login = await consumeSamlResponse(s.d, allowed.org, allowed.conn, { SAMLResponse: ok, RelayState: 'https://app.example.com/after' });
    expect(login).toMatchObject({ unsolicited: true, params: { redirect_uri: 'https://app.example.com/after' } });
  });

  it('refuses malformed input as 400, never a crash', async () => {
    const x = await setup();
    for (const body of ['', 'not base64 %%%', Buffer.from('<not-saml/>').toString('base64'), Buffer.from('<<<').toString('base64')]) {
      const e = await consumeSamlResponse(s.d, x.org, x.conn, { SAMLResponse: body }).then(() => null, (err: { code: string }) => err);
      expect(e?.code).toBe('invalid_argument');
    }
  });
});

describe('SAML SP-initiated Single Logout (HTTP-Redirect)', () => {
  const rawQueryOf = (url: string) => new URL(url).search.slice(1);
  const queryOf = (url: string) => Object.fromEntries(new URL(url).searchParams);

  it('publishes our SingleLogoutService, signs the LogoutRequest the IdP verifies, and accepts its signed LogoutResponse once', async () => {
    const x = await setup({ idpSloUrl: 'https://idp.example.com/sso/slo' });
    expect(x.metadata).toContain(`<SingleLogoutService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect" Location="https://auth.example.com/oauth/saml/${x.org.name}/slo"/>`);
    const { relayState, response } = await round(x);
    const { session } = await consumeSamlResponse(s.d, x.org, x.conn, { SAMLResponse: response, RelayState: relayState });
    expect(session.nameID).toBe('ada@example.com');
    expect(session.sessionIndex).toMatch(/^_/);
    const url = await samlLogoutUrl(s.d, x.org, x.conn, session);
    expect(url.startsWith('https://idp.example.com/sso/slo?SAMLRequest=')).toBe(true);
    expect(new URL(url).searchParams.get('SigAlg')).toBe('http://www.w3.org/2001/04/xmldsig-more#rsa-sha256');
    const altered = new URL(url);
    altered.searchParams.set('RelayState', 'other');
    expect(await rejection(idp.logout(x.metadata, altered.toString()))).toBe('ERR_FAILED_MESSAGE_SIGNATURE_VERIFICATION');
    const answer = await idp.logout(x.metadata, url);
    expect({ nameID: answer.nameID, sessionIndex: answer.sessionIndex }).toEqual({ nameID: 'ada@example.com', sessionIndex: session.sessionIndex });
    expect(answer.responseUrl.startsWith(`https://auth.example.com/oauth/saml/${x.org.name}/slo?SAMLResponse=`)).toBe(true);
    const unsigned = new URL(answer.responseUrl);
    unsigned.searchParams.delete('Signature');
    expect(await rejection(consumeLogoutResponse(s.d, x.org, x.conn, queryOf(unsigned.toString()), rawQueryOf(unsigned.toString()))))
      .toBe('SAML response rejected: unsigned logout response');
    expect(await rejection(consumeLogoutResponse(s.d, x.org, x.conn, queryOf(answer.responseUrl), rawQueryOf(answer.responseUrl)))).toBe('accepted');
    expect(await rejection(consumeLogoutResponse(s.d, x.org, x.conn, queryOf(answer.responseUrl), rawQueryOf(answer.responseUrl))))
      .toBe('SAML response rejected: unknown or expired logout request');
  });

  it('refuses a LogoutResponse signed by another key, and a logout on a connection without idp_slo_url', async () => {
    const x = await setup({ idpSloUrl: 'https://idp.example.com/sso/slo' });
    const url = await samlLogoutUrl(s.d, x.org, x.conn, { nameID: 'ada@example.com', nameIDFormat: 'urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress', sessionIndex: null });
    const impostor = createSamlIdp(x.conn.idpEntityId, 'https://idp.example.com/sso', selfSigned('impostor'));
    const forged = await impostor.logout(x.metadata, url);
    expect(await rejection(consumeLogoutResponse(s.d, x.org, x.conn, queryOf(forged.responseUrl), rawQueryOf(forged.responseUrl))))
      .toBe('SAML response rejected: invalid signature');
    const plain = await setup();
    expect(await rejection(samlLogoutUrl(s.d, plain.org, plain.conn, { nameID: 'a', nameIDFormat: 'f', sessionIndex: null }))).toBe('the SAML connection has no single logout endpoint');
  });
});

describe('the SP key pair rotated in place (issue 31)', () => {
  const body = (pem: string) => pem.replace(/-----[A-Z ]+-----|\s/g, '');
  const descriptors = (xml: string) => [...xml.matchAll(/<KeyDescriptor use="(\w+)">[\s\S]*?<ds:X509Certificate>([^<]+)</g)].map((m) => [m[1], m[2]!.replace(/\s/g, '')]);
  /** our metadata as an IdP that knows only `signing` (to verify) and `encryption` (to encrypt to) would hold it */
  const knowing = (xml: string, signing: string, encryption: string): string => {
    const blocks = [...xml.matchAll(/<KeyDescriptor use="(?:signing|encryption)">[\s\S]*?<\/KeyDescriptor>/g)].map((m) => m[0]);
    const withCert = (use: string, cert: string) => blocks.find((b) => b.includes(`use="${use}"`))!.replace(/(<ds:X509Certificate>)[^<]+</, `$1${body(cert)}<`);
    let out = xml.replace(blocks[0]!, '\u0000');
    for (const b of blocks.slice(1)) out = out.replace(b, '');
    return out.replace('\u0000', withCert('signing', signing) + withCert('encryption', encryption));
  };
  const stored = async (id: string) => (await s.d.store.saml.byId(id))!;
  /** our AuthnRequest verified by an IdP holding `signingCert`, answered with an assertion encrypted to `encryptTo` */
  const login = async (x: Setup, signingCert: string, encryptTo: string): Promise<string> => {
    const conn = await stored(x.conn.id);
    const metadata = await spMetadata(s.d, x.org, conn);
    const url = await samlLoginUrl(s.d, x.org, conn, {});
    const requestId = await idp.requestIdOf(knowing(metadata, signingCert, signingCert), url);
    const response = await idp.respond(knowing(metadata, signingCert, encryptTo), { email: 'ada@example.com' }, requestId);
    expect(Buffer.from(response, 'base64').toString('utf8')).toContain('EncryptedAssertion');
    return consumeSamlResponse(s.d, x.org, conn, { SAMLResponse: response, RelayState: new URL(url).searchParams.get('RelayState')! })
      .then((l) => l.identity.email ?? '', (e: Error) => e.message);
  };
  const signedBy = async (x: Setup, cert: string): Promise<boolean> => {
    const conn = await stored(x.conn.id);
    const url = await samlLoginUrl(s.d, x.org, conn, {});
    return (await rejection(idp.requestIdOf(knowing(await spMetadata(s.d, x.org, conn), cert, cert), url))) !== 'ERR_FAILED_MESSAGE_SIGNATURE_VERIFICATION';
  };

  it('stage publishes the new certificate beside the old, activate signs with it, retire drops the old; either decrypts until then', async () => {
    const x = await setup({}, { encryptAssertions: true });
    const old = (await stored(x.conn.id)).spCertificate!;
    await expect(rotateSpKey(s.d, await stored(x.conn.id), 'activate')).rejects.toThrow('no new SP key is staged');
    await expect(rotateSpKey(s.d, await stored(x.conn.id), 'retire')).rejects.toThrow('there is no previous SP key to retire');

    // 1. stage: both published, the old one still signs, an assertion encrypted to either decrypts
    await rotateSpKey(s.d, await stored(x.conn.id), 'stage');
    const fresh = (await stored(x.conn.id)).spNextCertificate!;
    expect(body(fresh)).not.toBe(body(old));
    expect(descriptors(await spMetadata(s.d, x.org, await stored(x.conn.id))))
      .toEqual([['signing', body(old)], ['signing', body(fresh)], ['encryption', body(old)], ['encryption', body(fresh)]]);
    await expect(rotateSpKey(s.d, await stored(x.conn.id), 'stage')).rejects.toThrow('a new SP key is already staged');
    expect([await signedBy(x, old), await signedBy(x, fresh)]).toEqual([true, false]);
    expect([await login(x, old, old), await login(x, old, fresh)]).toEqual(['ada@example.com', 'ada@example.com']);

    // 2. activate: the new one signs; the old one stays published and still decrypts
    await rotateSpKey(s.d, await stored(x.conn.id), 'activate');
    expect((await stored(x.conn.id))).toMatchObject({ spCertificate: fresh, spPreviousCertificate: old, spNextCertificate: null });
    expect(descriptors(await spMetadata(s.d, x.org, await stored(x.conn.id))))
      .toEqual([['signing', body(fresh)], ['signing', body(old)], ['encryption', body(fresh)], ['encryption', body(old)]]);
    expect([await signedBy(x, fresh), await signedBy(x, old)]).toEqual([true, false]);
    expect([await login(x, fresh, fresh), await login(x, fresh, old)]).toEqual(['ada@example.com', 'ada@example.com']);
    await expect(rotateSpKey(s.d, await stored(x.conn.id), 'stage')).rejects.toThrow('the previous one is not retired yet');

    // 3. retire: only the new one is published; an assertion encrypted to the old one is refused
    await rotateSpKey(s.d, await stored(x.conn.id), 'retire');
    expect(descriptors(await spMetadata(s.d, x.org, await stored(x.conn.id)))).toEqual([['signing', body(fresh)], ['encryption', body(fresh)]]);
    expect(await login(x, fresh, fresh)).toBe('ada@example.com');
    expect(await login(x, fresh, old)).toBe('SAML response rejected: the assertion could not be decrypted');
    await expect(rotateSpKey(s.d, await stored(x.conn.id), 'turn')).rejects.toThrow('step must be stage, activate or retire');
  }, 180_000);
});
