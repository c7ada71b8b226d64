/**
 * @module test/e2e/saml-go-peer
 * Gatehouse's SAML in both roles against a SAML implementation of another ecosystem (issue 31): the Go
 * library github.com/crewjam/saml v0.5.1, driven by our own command line over it (test/saml-go-peer,
 * built by scripts/install-saml-go-peer.sh into .tools/bin). The Go program only makes and checks SAML
 * messages; this test carries them over real HTTP to a real deployment, as a browser would (fetch with
 * the session cookie, redirects followed by hand, auto-submitted forms posted).
 *
 * (a) Go as a service provider of Gatehouse's IdP (`/oauth/saml/<org>/idp/*`), registered with its
 * signing certificate, encryption certificate and SLO URL: a signed HTTP-Redirect AuthnRequest, through
 * the login page and back; the Response (Response and assertion signed, assertion encrypted) verified
 * and decrypted by crewjam with Gatehouse's metadata, attributes read; an unsigned request refused;
 * IdP-initiated; a staged key rotation (the old metadata keeps working until the switch); and
 * SP-initiated Single Logout (signed LogoutRequest on HTTP-POST, signed LogoutResponse verified by
 * crewjam, the Gatehouse session gone).
 *
 * (b) Go as the identity provider of an org SAML connection (Gatehouse's SP role): it reads
 * Gatehouse's AuthnRequest against Gatehouse's SP metadata and answers with a signed Response
 * (encrypted to the SP's published encryption key); the ACS signs the user in; the same key naming
 * another Issuer is refused.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startDeployment, type Deployment } from '@gatehouse/testing';
import { address, PASSWORD } from './email-support.ts';
import { peerKeyPair } from './saml-support.ts';
import { postJson, raw } from '../support/http.ts';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const PEER = path.resolve(HERE, '../../.tools/bin/saml-go-peer');
const APP = 'http://app.test/done';
const GO_SP = 'https://go-sp.example.test';
const GO_IDP = 'https://go-idp.example.test';

/** Runs the Go peer; its JSON answer (a refusal is `{error}` with exit status 1). */
function peer(args: string[]): Promise<{ code: number; out: Record<string, any> }> {
  if (!existsSync(PEER)) throw new Error(`${PEER} is missing: run scripts/install-saml-go-peer.sh`);
  return new Promise((resolve) => {
    execFile(PEER, args, { timeout: 60_000, maxBuffer: 8 * 1024 * 1024 }, (err, stdout, stderr) => {
      const code = err ? (typeof err.code === 'number' ? err.code : -1) : 0;
      let out: Record<string, any>;
      try {
        out = JSON.parse(stdout) as Record<string, any>;
      } catch {
        out = { error: `no JSON: ${stdout} ${stderr}` };
      }
      resolve({ code, out });
    });
  });
}

/** The action and fields of an auto-submitting HTML form. */
function formOf(html: string): { action: string; fields: Record<string, string> } {
  const unescape = (s: string) => s.replace(/&quot;/g, '"').replace(/&#39;|&apos;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');
  const action = /<form[^>]*action="([^"]+)"/.exec(html)?.[1];
  if (!action) throw new Error(`no form in: ${html.slice(0, 300)}`);
  const fields: Record<string, string> = {};
  for (const m of html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)"/g)) fields[m[1]!] = unescape(m[2]!);
  return { action: unescape(action), fields };
}

const pemBody = (pem: string): string => pem.replace(/-----[^-]+-----/g, '').replace(/\s+/g, '');
const metadataCerts = (xml: string): string[] => [...xml.matchAll(/<(?:ds:)?X509Certificate>([^<]+)</g)].map((m) => m[1]!.replace(/\s+/g, ''));

describe('SAML against crewjam/saml (Go) in both roles', () => {
  let d: Deployment;
  let dir: string;
  let admin: Record<string, string>;
  const rest = async (op: string, body: unknown): Promise<any> => {
    const res = await postJson(`${d.url}/v1/admin/${op}`, body, admin);
    expect({ op, status: res.status }).toEqual({ op, status: 200 });
    return res.body;
  };
  const file = (name: string, text: string): string => {
    const p = path.join(dir, name);
    writeFileSync(p, text);
    return p;
  };

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'saml-go-peer-'));
    d = await startDeployment('all', { flags: ['--rate-limit-rps=0', `--redirect-uris=${APP}`], readyTimeoutMs: 120_000 });
    admin = { origin: d.url, 'x-service-admin-secret': d.adminSecret };
  }, 180_000);
  afterAll(async () => {
    await d?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  describe('(a) the Go program as a service provider of Gatehouse\'s IdP', () => {
    let org: { id: string; name: string };
    let email: string;
    let cookie: string;
    let spFlags: string[];
    const idpMetadata = async (name: string): Promise<string> => {
      const res = await raw(`${d.url}/oauth/saml/${org.name}/idp/metadata`);
      expect(res.status).toBe(200);
      return file(name, res.body as string);
    };
    /** a signed (or not) AuthnRequest from the Go SP, trusting the metadata in `metadataFile` */
    const authn = async (metadataFile: string, ...extra: string[]) => {
      const r = await peer(['sp-authn', ...spFlags, '--idp-metadata', metadataFile, ...extra]);
      expect(r.code).toBe(0);
      return r.out as { url: string; id: string };
    };
    /** the browser with its Gatehouse session at `url`: the auto-posted Response */
    const asBrowser = async (url: string) => raw(url, { headers: { cookie }, redirect: 'manual' });
    const acs = (metadataFile: string, response: string, requestId = '') =>
      peer(['sp-acs', ...spFlags, '--idp-metadata', metadataFile, '--response', response, '--request-id', requestId]);

    beforeAll(async () => {
      org = await rest('create_organization', { name: `go-sp-${Math.random().toString(36).slice(2, 8)}` });
      email = address('go-sp');
      const signup = await postJson(`${d.url}/v1/signup`, { email, password: PASSWORD, confirm_password: PASSWORD, given_name: 'Grace' }, { origin: d.url });
      expect(signup.status).toBe(200);
      const login = await postJson(`${d.url}/v1/login`, { email, password: PASSWORD }, { origin: d.url });
      cookie = login.headers.getSetCookie().map((c) => c.split(';')[0]!).filter((c) => !c.endsWith('=')).join('; ');
      await rest('add_org_member', { org_id: org.id, user_id: (login.body as { user: { id: string } }).user.id });
      // one key pair signs the SP's requests and decrypts its assertions (crewjam's ServiceProvider.Key)
      const keys = await peerKeyPair('crewjam test SP');
      spFlags = ['--key', file('sp.key', keys.key), '--cert', file('sp.crt', keys.cert), '--entity-id', `${GO_SP}/metadata`, '--acs', `${GO_SP}/acs`, '--slo', `${GO_SP}/slo`];
      await rest('create_saml_service_provider', {
        org_id: org.id, name: 'crewjam SP', entity_id: `${GO_SP}/metadata`, acs_url: `${GO_SP}/acs`, slo_url: `${GO_SP}/slo`,
        sp_cert_pem: keys.cert, sp_encryption_cert_pem: keys.cert, mapped_attributes: JSON.stringify({ email: 'mail', given_name: 'givenName' }),
      });
    }, 120_000);

    it('a signed AuthnRequest through the login page and back; crewjam verifies and decrypts the Response and reads the attributes', async () => {
      const metadata = await idpMetadata('idp-1.xml');
      const req = await authn(metadata, '--relay', 'state-1');
      expect(new URL(req.url).searchParams.get('SigAlg')).toBe('http://www.w3.org/2001/04/xmldsig-more#rsa-sha256');
      // no session: the login page, with the way back carrying the signed query
      const noSession = await raw(req.url, { redirect: 'manual' });
      expect(noSession.status).toBe(302);
      const returnTo = new URL(noSession.headers.get('location')!).searchParams.get('return_to')!;
      expect(returnTo).toContain('Signature=');
      const page = await asBrowser(new URL(returnTo, d.url).href);
      expect(page.status).toBe(200);
      const form = formOf(page.body as string);
      expect(form.action).toBe(`${GO_SP}/acs`);
      expect(form.fields['RelayState']).toBe('state-1');
      const r = await acs(metadata, form.fields['SAMLResponse']!, req.id);
      expect(r).toEqual({
        code: 0, out: expect.objectContaining({
          name_id: email, issuer: `${d.url}/oauth/saml/${org.name}/idp/metadata`, encrypted: true,
          attributes: { mail: [email], givenName: ['Grace'] },
        }),
      });
      // the Response answers that request only
      expect((await acs(metadata, form.fields['SAMLResponse']!, 'id-another')).code).toBe(1);
    }, 120_000);

    it('an unsigned AuthnRequest from this SP is refused with the reason', async () => {
      const req = await authn(await idpMetadata('idp-2.xml'), '--unsigned');
      const res = await asBrowser(req.url);
      expect(res.status).toBe(400);
      expect(res.body).toContain('the service provider must sign its AuthnRequest: the request has no signature');
      expect(res.body).not.toContain('SAMLResponse');
    }, 60_000);

    it('IdP-initiated, once the SP allows it: crewjam accepts the unsolicited Response', async () => {
      const sp = (await rest('saml_service_providers', { org_id: org.id })).saml_service_providers[0];
      const start = `${d.url}/oauth/saml/${org.name}/idp/sso?sp=${encodeURIComponent(`${GO_SP}/metadata`)}`;
      expect((await asBrowser(start)).status).toBe(403);
      await rest('update_saml_service_provider', { id: sp.id, allow_idp_initiated: true });
      const form = formOf((await asBrowser(start)).body as string);
      expect((await acs(await idpMetadata('idp-3.xml'), form.fields['SAMLResponse']!)).out).toMatchObject({ name_id: email });
    }, 60_000);

    it('staged rotation: the new key published next to the old; the old metadata works until the switch; then the old key retires', async () => {
      const oldMetadata = await idpMetadata('idp-old.xml');
      const oldCerts = metadataCerts((await raw(`${d.url}/oauth/saml/${org.name}/idp/metadata`)).body as string);
      const staged = await rest('rotate_saml_idp_cert', { org_id: org.id, stage: true });
      expect(staged.status).toBe('pending');
      const both = metadataCerts((await raw(`${d.url}/oauth/saml/${org.name}/idp/metadata`)).body as string);
      expect(both).toEqual([...oldCerts, pemBody(staged.cert_pem)]);
      // an SP still on the old metadata: the current key still signs
      let req = await authn(oldMetadata);
      let form = formOf((await asBrowser(req.url)).body as string);
      expect((await acs(oldMetadata, form.fields['SAMLResponse']!, req.id)).out).toMatchObject({ name_id: email });
      // the switch
      const switched = await rest('rotate_saml_idp_cert', { org_id: org.id });
      expect([switched.id, switched.status]).toEqual([staged.id, 'current']);
      req = await authn(oldMetadata);
      form = formOf((await asBrowser(req.url)).body as string);
      const stale = await acs(oldMetadata, form.fields['SAMLResponse']!, req.id);
      expect(stale.code).toBe(1);
      const newMetadata = await idpMetadata('idp-new.xml');
      expect((await acs(newMetadata, form.fields['SAMLResponse']!, req.id)).out).toMatchObject({ name_id: email });
      const old = (await rest('saml_idp_keys', { org_id: org.id })).saml_idp_keys.find((k: { status: string }) => k.status === 'active');
      expect(await rest('retire_saml_idp_key', { id: old.id })).toEqual({ message: 'signing key retired' });
      expect(metadataCerts((await raw(`${d.url}/oauth/saml/${org.name}/idp/metadata`)).body as string)).toEqual([pemBody(staged.cert_pem)]);
    }, 180_000);

    it('Single Logout: a signed LogoutRequest ends the Gatehouse session; crewjam verifies the signed LogoutResponse', async () => {
      const metadata = await idpMetadata('idp-slo.xml');
      const lr = await peer(['sp-logout', ...spFlags, '--idp-metadata', metadata, '--name-id', email]);
      expect(lr.code).toBe(0);
      expect(lr.out['url']).toBe(`${d.url}/oauth/saml/${org.name}/idp/slo`);
      const res = await raw(lr.out['url'], {
        method: 'POST', redirect: 'manual', headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ SAMLRequest: lr.out['saml_request'], RelayState: 'bye' }).toString(),
      });
      expect(res.status).toBe(200);
      expect(res.headers.getSetCookie().some((c) => /^cookie_session=;/.test(c) || /cookie_session=[^;]*;.*(Max-Age=0|Expires=Thu, 01 Jan 1970)/i.test(c))).toBe(true);
      const form = formOf(res.body as string);
      expect([form.action, form.fields['RelayState']]).toEqual([`${GO_SP}/slo`, 'bye']);
      const done = await peer(['sp-logout-done', ...spFlags, '--idp-metadata', metadata, '--response', form.fields['SAMLResponse']!]);
      expect(done).toEqual({ code: 0, out: { status: 'urn:oasis:names:tc:SAML:2.0:status:Success', in_response_to: lr.out['id'], issuer: `${d.url}/oauth/saml/${org.name}/idp/metadata` } });
      // the old cookie no longer signs anyone in: the next AuthnRequest goes to the login page
      const req = await authn(metadata);
      expect((await asBrowser(req.url)).status).toBe(302);
    }, 60_000);
  });

  describe('(b) the Go program as the IdP of an org SAML connection (Gatehouse\'s SP role)', () => {
    let org: { id: string; name: string };
    let spMetadata: string;
    let idpFlags: string[];
    /** a fresh login at Gatehouse, answered by the Go IdP as `entityId`; the ACS's answer */
    const signIn = async (entityId: string, email: string) => {
      const login = await raw(`${d.url}/oauth/saml/${org.name}/login?redirect_uri=${encodeURIComponent(APP)}`, { redirect: 'manual' });
      expect(login.status).toBe(302);
      const location = login.headers.get('location')!;
      expect(location.startsWith(`${GO_IDP}/sso?`)).toBe(true);
      const r = await peer(['idp-respond', ...idpFlags, '--entity-id', entityId, '--sp-metadata', spMetadata, '--request-url', location, '--name-id', email, '--given-name', 'Ada']);
      expect(r.code).toBe(0);
      expect(r.out['acs']).toBe(`${d.url}/oauth/saml/${org.name}/acs`);
      const res = await raw(r.out['acs'], {
        method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ SAMLResponse: r.out['saml_response'], RelayState: r.out['relay_state'] }).toString(),
      });
      return { res, encrypted: r.out['encrypted'] as boolean };
    };

    beforeAll(async () => {
      org = await rest('create_organization', { name: `go-idp-${Math.random().toString(36).slice(2, 8)}` });
      const keys = await peerKeyPair('crewjam test IdP');
      idpFlags = ['--key', file('idp.key', keys.key), '--cert', file('idp.crt', keys.cert), '--sso-url', `${GO_IDP}/sso`];
      await rest('create_org_saml_connection', {
        org_id: org.id, name: 'crewjam IdP', idp_entity_id: `${GO_IDP}/metadata`, idp_sso_url: `${GO_IDP}/sso`, idp_certificate: keys.cert,
      });
      const md = await raw(`${d.url}/oauth/saml/${org.name}/metadata`);
      expect(md.status).toBe(200);
      expect(md.body as string).toContain('use="encryption"');
      spMetadata = file('gatehouse-sp.xml', md.body as string);
    }, 120_000);

    it('crewjam\'s signed, encrypted Response is accepted by the ACS and signs the user in', async () => {
      const { res, encrypted } = await signIn(`${GO_IDP}/metadata`, address('go-idp'));
      expect(encrypted).toBe(true);
      expect(res.status).toBe(302);
      const to = new URL(res.headers.get('location')!);
      expect(`${to.origin}${to.pathname}`).toBe(APP);
      expect(to.searchParams.get('access_token')).toBeTruthy();
    }, 60_000);

    it('the same trusted key naming another Issuer is refused', async () => {
      const { res } = await signIn('https://evil.example.test/idp', address('go-idp-evil'));
      expect([res.status, (res.body as { message?: string }).message]).toEqual([400, 'SAML response rejected: wrong issuer']);
    }, 60_000);
  });
});
