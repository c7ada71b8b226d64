/**
 * @module test/e2e/org-sso
 * Organization SSO (issue 20 point 2; behaviour.md §6.3, §6.1, §6.2, §2.5, §5.7) in both modes:
 * - the eight connection routes on REST and GraphQL with the §6.3 messages, secrets never returned,
 *   bad input answered 400;
 * - org OIDC SSO in Chromium against panva's `oidc-provider` over HTTPS (a test CA the servers trust
 *   through NODE_EXTRA_CA_CERTS; the https rule for `issuer_url` is not weakened);
 * - org SAML SSO in Chromium against a samlify IdP (its own keys) reached through home-realm discovery
 *   from a domain verified with `add_verified_org_domain`, with JIT membership; the IdP requires our
 *   AuthnRequest signed (checked with the certificate of our metadata) and encrypts its assertion for
 *   the encryption certificate of our metadata (issue 31 §1);
 * - a refused SAML login and ACS post land, in Chromium, on the hosted app's error screen with the
 *   message and the error code; JSON clients keep the JSON error;
 * - the ACS refusing a tampered signature, a wrong audience, an expired and a replayed assertion, and
 *   an IdP-initiated response unless `allow_idp_initiated`; a disabled org refused.
 */
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Browser, Page } from 'playwright-core';
import {
  caAndServer, createSamlIdp, selfSigned, startDeployment, startOidcIdp, type Deployment, type KeyPair, type TestOidcIdp, type TestSamlIdp,
} from '@gatehouse/testing';
import { gql, postJson, raw } from '../support/http.ts';
import { launchChromium } from './passkey-browser.ts';

const APP = 'http://app.test/done';
const OIDC = 'id org_id name issuer_url sso_client_id scopes redirect_uri is_active created_at updated_at';
const SAML = 'id org_id name idp_entity_id idp_sso_url sp_entity_id acs_url attribute_mapping allow_idp_initiated is_active created_at updated_at';

const GQL: Record<string, { input: string; kind: 'query' | 'mutation'; select: string }> = {
  create_org_oidc_connection: { input: 'CreateOrgOIDCConnectionRequest', kind: 'mutation', select: OIDC },
  update_org_oidc_connection: { input: 'UpdateOrgOIDCConnectionRequest', kind: 'mutation', select: OIDC },
  delete_org_oidc_connection: { input: 'OrgOIDCConnectionRequest', kind: 'mutation', select: 'message' },
  org_oidc_connection: { input: 'OrgOIDCConnectionRequest', kind: 'query', select: OIDC },
  create_org_saml_connection: { input: 'CreateOrgSAMLConnectionRequest', kind: 'mutation', select: SAML },
  update_org_saml_connection: { input: 'UpdateOrgSAMLConnectionRequest', kind: 'mutation', select: SAML },
  delete_org_saml_connection: { input: 'OrgSAMLConnectionRequest', kind: 'mutation', select: 'message' },
  org_saml_connection: { input: 'OrgSAMLConnectionRequest', kind: 'query', select: SAML },
};

type Answer = { ok: true; body: any } | { ok: false; status: number; code: string; message: string };

const tls = caAndServer();
const caDir = mkdtempSync(join(tmpdir(), 'gatehouse-ca-'));
const caFile = join(caDir, 'ca.pem');
writeFileSync(caFile, tls.ca.cert);
const samlKeys: KeyPair = selfSigned('e2e-saml-idp');

/**
 * An HTTPS SAML IdP endpoint: GET /sso answers the AuthnRequest with an auto-posting form to the SP's
 * ACS; GET /sso/slo answers the SP's signed LogoutRequest with a redirect carrying the signed LogoutResponse.
 */
async function startSamlEndpoint(): Promise<{ url: string; server: Server; serve(idp: TestSamlIdp, spMetadata: () => Promise<string>, email: string): void; logouts: string[] }> {
  let handler: ((url: string) => Promise<{ html: string } | { location: string }>) | null = null;
  const logouts: string[] = [];
  const server = createServer({ key: tls.server.key, cert: tls.server.cert }, (req, res) => {
    const full = `https://127.0.0.1:${(server.address() as AddressInfo).port}${req.url ?? '/'}`;
    if (!handler) { res.writeHead(404).end(); return; }
    handler(full).then((out) => {
      if ('location' in out) res.writeHead(302, { location: out.location }).end();
      else res.writeHead(200, { 'content-type': 'text/html' }).end(out.html);
    }, (err: Error) => { res.writeHead(500).end(err.message); });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `https://127.0.0.1:${(server.address() as AddressInfo).port}/sso`,
    server,
    logouts,
    serve(idp, spMetadata, email) {
      handler = async (url) => {
        const metadata = await spMetadata();
        if (new URL(url).pathname === '/sso/slo') {
          const out = await idp.logout(metadata, url);
          logouts.push(out.nameID);
          return { location: out.responseUrl };
        }
        const requestId = await idp.requestIdOf(metadata, url);
        const response = await idp.respond(metadata, { email, givenName: 'Sam', familyName: 'Ell' }, requestId);
        const acs = /AssertionConsumerService[^>]*Location="([^"]+)"/.exec(metadata)![1]!;
        const relay = new URL(url).searchParams.get('RelayState') ?? '';
        return { html: `<html><body><form method="post" action="${acs}"><input type="hidden" name="SAMLResponse" value="${response}"/>`
          + `<input type="hidden" name="RelayState" value="${relay}"/></form><script>document.forms[0].submit()</script></body></html>` };
      };
    },
  };
}

afterAll(() => { rmSync(caDir, { recursive: true, force: true }); });

describe.each(['all', 'split'] as const)('organization SSO (%s)', (mode) => {
  let d: Deployment;
  let browser: Browser;
  let oidcIdp: TestOidcIdp;
  let samlEndpoint: Awaited<ReturnType<typeof startSamlEndpoint>>;
  let admin: Record<string, string>;
  const oidcOrg = `oidc-${randomUUID().slice(0, 8)}`;

  beforeAll(async () => {
    d = await startDeployment(mode, {
      flags: ['--enable-org-discovery', '--rate-limit-rps=0', `--redirect-uris=${APP}`], env: { NODE_EXTRA_CA_CERTS: caFile }, readyTimeoutMs: 90_000,
    });
    admin = { origin: d.url, 'x-service-admin-secret': d.adminSecret };
    oidcIdp = await startOidcIdp(tls.server, [{ client_id: 'gatehouse-rp', client_secret: 'rp-secret-1', redirect_uris: [`${d.url}/oauth/sso/${oidcOrg}/callback`] }]);
    samlEndpoint = await startSamlEndpoint();
    browser = await launchChromium();
  }, 150_000);
  afterAll(async () => {
    await browser?.close();
    await oidcIdp?.close();
    samlEndpoint?.server.close();
    await d?.stop();
  });

  async function call(op: string, args: Record<string, unknown>, surface: 'rest' | 'graphql' = 'rest'): Promise<Answer> {
    if (surface === 'rest') {
      const res = await postJson(`${d.url}/v1/admin/${op}`, args, admin);
      return res.status === 200 ? { ok: true, body: res.body } : { ok: false, status: res.status, code: res.body.code, message: res.body.message };
    }
    const spec = GQL[op]!;
    const res = await gql(d.url, `${spec.kind}($p: ${spec.input}!) { _${op}(params: $p) { ${spec.select} } }`, { p: args }, admin);
    const body = res.body as { data?: Record<string, unknown>; errors?: Array<{ message: string; extensions: { code: string } }> };
    if (body.errors?.length) return { ok: false, status: res.status, code: body.errors[0]!.extensions.code.toLowerCase(), message: body.errors[0]!.message };
    return { ok: true, body: body.data![`_${op}`] };
  }
  const ok = async (op: string, args: Record<string, unknown>, surface: 'rest' | 'graphql' = 'rest'): Promise<any> => {
    const a = await call(op, args, surface);
    if (!a.ok) throw new Error(`${op}: ${a.code} ${a.message}`);
    return a.body;
  };
  const refused = async (op: string, args: Record<string, unknown>, surface: 'rest' | 'graphql' = 'rest'): Promise<string> => {
    const a = await call(op, args, surface);
    return a.ok ? 'accepted' : `${a.code}: ${a.message}`;
  };
  const newOrg = async (name = `org-${randomUUID().slice(0, 8)}`): Promise<{ id: string; name: string }> => ok('create_organization', { name });

  it.each(['rest', 'graphql'] as const)('OIDC connection routes on %s: defaults, §6.3 messages, secret never returned', async (surface) => {
    const org = await newOrg();
    const issuer = `https://idp-${randomUUID().slice(0, 8)}.example.com`;
    const created = await ok('create_org_oidc_connection', { org_id: org.id, name: 'Okta', issuer_url: issuer, client_id: 'cid', client_secret: 'top-secret' }, surface);
    expect(created).toMatchObject({
      org_id: org.id, name: 'Okta', issuer_url: issuer, sso_client_id: 'cid', scopes: 'openid profile email',
      redirect_uri: `${d.url}/oauth/sso/${org.name}/callback`, is_active: true,
    });
    expect(JSON.stringify(created)).not.toContain('top-secret');
    expect(await refused('create_org_oidc_connection', { org_id: org.id, name: 'x', issuer_url: 'https://other.example.com', client_id: 'c', client_secret: 's' }, surface))
      .toBe('already_exists: an OIDC connection already exists for this organization');
    expect(await refused('create_org_oidc_connection', { org_id: (await newOrg()).id, name: 'x', issuer_url: issuer, client_id: 'c', client_secret: 's' }, surface))
      .toBe(`already_exists: issuer_url already registered: ${issuer}`);
    expect(await refused('create_org_oidc_connection', { org_id: org.id, name: 'x', issuer_url: 'http://plain.example.com', client_id: 'c', client_secret: 's' }, surface))
      .toBe('invalid_argument: issuer_url must be a valid https URL');
    const updated = await ok('update_org_oidc_connection', { id: created.id, name: 'Okta 2', client_secret: '' }, surface);
    expect(updated).toMatchObject({ name: 'Okta 2', sso_client_id: 'cid' });
    expect(await ok('org_oidc_connection', { org_id: org.id }, surface)).toEqual(updated);
    expect(await refused('org_oidc_connection', { id: created.id, org_id: org.id }, surface)).toBe('invalid_argument: supply either id or org_id');
    expect(await refused('org_oidc_connection', {}, surface)).toBe('invalid_argument: supply either id or org_id');
    expect(await ok('delete_org_oidc_connection', { id: created.id }, surface)).toEqual({ message: 'OIDC connection deleted' });
    expect(await refused('org_oidc_connection', { id: created.id }, surface)).toBe('not_found: OIDC connection not found');
  });

  it.each(['rest', 'graphql'] as const)('SAML connection routes on %s: PEM check, unique entity id, certificate never returned', async (surface) => {
    const org = await newOrg();
    const entity = `urn:idp:${randomUUID()}`;
    const args = { org_id: org.id, name: 'ADFS', idp_entity_id: entity, idp_sso_url: 'https://idp.example.com/sso', idp_certificate: samlKeys.cert };
    expect(await refused('create_org_saml_connection', { ...args, idp_certificate: 'not a certificate' }, surface))
      .toBe('invalid_argument: idp_certificate must be a PEM-encoded X.509 certificate');
    const created = await ok('create_org_saml_connection', args, surface);
    expect(created).toMatchObject({
      org_id: org.id, idp_entity_id: entity, sp_entity_id: `${d.url}/oauth/saml/${org.name}/metadata`, acs_url: `${d.url}/oauth/saml/${org.name}/acs`,
      allow_idp_initiated: false, is_active: true,
    });
    expect(JSON.stringify(created)).not.toContain('BEGIN CERTIFICATE');
    expect(await refused('create_org_saml_connection', args, surface)).toBe('already_exists: a SAML connection already exists for this organization');
    expect(await refused('create_org_saml_connection', { ...args, org_id: (await newOrg()).id }, surface)).toBe(`already_exists: idp_entity_id already registered: ${entity}`);
    expect(await ok('update_org_saml_connection', { id: created.id, allow_idp_initiated: true, idp_certificate: '' }, surface)).toMatchObject({ allow_idp_initiated: true });
    expect(await refused('delete_org_saml_connection', { id: created.id, org_id: org.id }, surface)).toBe('invalid_argument: supply either id or org_id');
    expect(await ok('delete_org_saml_connection', { org_id: org.id }, surface)).toEqual({ message: 'SAML connection deleted' });
  });

  it('bad input on the connection routes answers 400, never 5xx', async () => {
    const org = await newOrg();
    const cases: Array<[string, unknown]> = [
      ['create_org_oidc_connection', '{not json'],
      ['create_org_oidc_connection', { org_id: org.id, name: 7, issuer_url: 'https://x.example.com', client_id: 'c', client_secret: 's' }],
      ['create_org_oidc_connection', { org_id: org.id, name: 'n'.repeat(300), issuer_url: 'https://x.example.com', client_id: 'c', client_secret: 's' }],
      ['create_org_saml_connection', { org_id: org.id, name: 'n', idp_entity_id: 'e', idp_sso_url: 'https://x.example.com', idp_certificate: 'x'.repeat(70_000) }],
      ['create_org_saml_connection', { org_id: org.id, name: 'n', idp_entity_id: 'e', idp_sso_url: 'https://x.example.com', idp_certificate: samlKeys.cert, attribute_mapping: '{"email":[1]}' }],
      ['update_org_saml_connection', { id: ['x'] }],
      ['org_saml_connection', { id: 12 }],
    ];
    for (const [op, body] of cases) {
      const res = await postJson(`${d.url}/v1/admin/${op}`, body, admin);
      expect({ op, status: res.status, code: res.body.code }).toEqual({ op, status: 400, code: 'invalid_argument' });
    }
  });

  /** Opens a page whose requests to the app's redirect target are answered by the test. */
  async function appPage(): Promise<Page> {
    const context = await browser.newContext({ ignoreHTTPSErrors: true });
    const page = await context.newPage();
    await page.route('http://app.test/**', (route) => route.fulfill({ status: 200, contentType: 'text/html', body: '<p>app</p>' }));
    return page;
  }

  it('org OIDC SSO in Chromium: oidc-provider over HTTPS, tokens to the app, JIT user and membership', async () => {
    const org = await newOrg(oidcOrg);
    await ok('create_org_oidc_connection', { org_id: org.id, name: 'oidc-provider', issuer_url: oidcIdp.issuer, client_id: 'gatehouse-rp', client_secret: 'rp-secret-1' });
    const email = `oidc-${randomUUID().slice(0, 8)}@corp.example.com`;
    const page = await appPage();
    await page.goto(`${d.url}/oauth/sso/${org.name}/login?redirect_uri=${encodeURIComponent(APP)}&state=app-state`);
    await page.waitForURL((u) => u.origin === oidcIdp.issuer);
    await page.fill('input[name="login"]', email);
    await page.fill('input[name="password"]', 'anything');
    await page.click('button[type="submit"]');
    await page.waitForURL((u) => u.origin === oidcIdp.issuer && u.pathname.includes('interaction'));
    await page.click('button[type="submit"]');
    await page.waitForURL((u) => u.href.startsWith(APP));
    const landed = new URL(page.url());
    expect(landed.searchParams.get('state')).toBe('app-state');
    expect(landed.searchParams.get('access_token')).toBeTruthy();
    const cookies = await page.context().cookies(d.url);
    expect(cookies.map((c) => c.name)).toContain('cookie_session');
    const members = await ok('org_members', { org_id: org.id });
    expect((members.org_members as Array<{ email: string }>).map((m) => m.email)).toContain(email);
    await page.context().close();
  }, 60_000);

  it('org SAML SSO in Chromium through home-realm discovery: samlify IdP, JIT membership; a disabled org is refused', async () => {
    const org = await newOrg();
    const domain = `${randomUUID().slice(0, 8)}.example.org`;
    await ok('add_verified_org_domain', { org_id: org.id, domain });
    // the IdP refuses an AuthnRequest not signed by the certificate of our metadata, and encrypts for it
    const idp = createSamlIdp(`https://saml-idp.example.com/${org.name}`, samlEndpoint.url, samlKeys, { wantAuthnRequestsSigned: true, encryptAssertions: true });
    await ok('create_org_saml_connection', { org_id: org.id, name: 'samlify', idp_entity_id: idp.entityId, idp_sso_url: samlEndpoint.url, idp_certificate: samlKeys.cert });
    const email = `saml-${randomUUID().slice(0, 8)}@${domain}`;
    samlEndpoint.serve(idp, async () => (await raw(`${d.url}/oauth/saml/${org.name}/metadata`)).body as string, email);
    const metadata = (await raw(`${d.url}/oauth/saml/${org.name}/metadata`)).body as string;
    expect(metadata).toContain('AuthnRequestsSigned="true"');
    expect(metadata).toContain('WantAssertionsSigned="true"');
    expect([...metadata.matchAll(/<KeyDescriptor use="(\w+)"/g)].map((m) => m[1])).toEqual(['signing', 'encryption']);
    const start = await raw(`${d.url}/oauth/saml/${org.name}/login`, { redirect: 'manual' });
    const startUrl = new URL(start.headers.get('location')!);
    expect(startUrl.searchParams.get('SigAlg')).toBe('http://www.w3.org/2001/04/xmldsig-more#rsa-sha256');
    expect(await idp.requestIdOf(metadata, startUrl.toString())).toMatch(/^_/);
    startUrl.searchParams.set('RelayState', 'forged');
    expect(await idp.requestIdOf(metadata, startUrl.toString()).catch((e: Error) => e.message)).toBe('ERR_FAILED_MESSAGE_SIGNATURE_VERIFICATION');

    const found = await raw(`${d.url}/api/v1/org-discovery?email=${encodeURIComponent(email)}`);
    expect(found.body).toMatchObject({ org_id: org.id, org_name: org.name, protocol: 'saml' });
    const page = await appPage();
    await page.goto(`${d.url}/oauth/sso/discover?email=${encodeURIComponent(email)}&redirect_uri=${encodeURIComponent(APP)}&state=s2`);
    await page.waitForURL((u) => u.href.startsWith(APP));
    const landed = new URL(page.url());
    expect(landed.searchParams.get('access_token')).toBeTruthy();
    expect(landed.searchParams.get('state')).toBe('s2');
    const members = await ok('org_members', { org_id: org.id }) as { org_members: Array<{ email: string }> };
    expect(members.org_members.map((m) => m.email)).toEqual([email]);
    // a second login is the same user, and the membership is not doubled
    await page.goto(`${d.url}/oauth/saml/${org.name}/login?redirect_uri=${encodeURIComponent(APP)}`);
    await page.waitForURL((u) => u.href.startsWith(APP));
    expect((await ok('org_members', { org_id: org.id })).org_members).toHaveLength(1);
    await page.context().close();

    await ok('update_organization', { id: org.id, enabled: false });
    // a browser is shown the refusal on the hosted app's error screen
    const refusedPage = await appPage();
    await refusedPage.goto(`${d.url}/oauth/saml/${org.name}/login?redirect_uri=${encodeURIComponent(APP)}`);
    await refusedPage.waitForURL((u) => u.pathname === '/app/error');
    await refusedPage.locator('h1', { hasText: 'Sign-in failed' }).waitFor();
    await refusedPage.locator('#form-error', { hasText: 'organization is disabled' }).waitFor();
    await expect(refusedPage.locator('#error-code').textContent()).resolves.toBe('failed_precondition');
    await refusedPage.context().close();
    for (const url of [`/oauth/saml/${org.name}/login`, `/oauth/saml/${org.name}/metadata`, `/api/v1/org-discovery?email=${encodeURIComponent(email)}`]) {
      const res = await raw(`${d.url}${url}`, { redirect: 'manual' });
      expect({ url, status: res.status, body: res.body }).toEqual({ url, status: 400, body: { code: 'failed_precondition', message: 'organization is disabled' } });
    }
  }, 60_000);

  it('the ACS refuses a tampered signature, a wrong audience, an expired and a replayed assertion, and IdP-initiated unless allowed', async () => {
    const org = await newOrg();
    const idp = createSamlIdp(`https://saml-idp.example.com/${org.name}`, 'https://idp.example.com/sso', samlKeys);
    const conn = await ok('create_org_saml_connection', { org_id: org.id, name: 'samlify', idp_entity_id: idp.entityId, idp_sso_url: 'https://idp.example.com/sso', idp_certificate: samlKeys.cert });
    const metadata = (await raw(`${d.url}/oauth/saml/${org.name}/metadata`)).body as string;
    const acs = `${d.url}/oauth/saml/${org.name}/acs`;
    // no Origin or Referer: the ACS is exempt from the CSRF check (§2.5), as an IdP's form post is cross-site
    const post = (form: Record<string, string>) => raw(acs, { method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(form).toString() });
    const answer = async (overrides: Record<string, unknown>, mutate: (xml: string) => string = (x) => x) => {
      const login = await raw(`${d.url}/oauth/saml/${org.name}/login?redirect_uri=${encodeURIComponent(APP)}`, { redirect: 'manual' });
      const location = login.headers.get('location')!;
      const response = await idp.respond(metadata, { email: 'ada@example.com' }, await idp.requestIdOf(metadata, location), overrides);
      const res = await post({ SAMLResponse: Buffer.from(mutate(Buffer.from(response, 'base64').toString('utf8'))).toString('base64'), RelayState: new URL(location).searchParams.get('RelayState')! });
      return res.status === 302 ? `302 ${res.headers.get('location')!.split('?')[0]}` : `${res.status} ${res.body.message}`;
    };
    expect(await answer({})).toBe(`302 ${APP}`);
    // a browser's form post of a refused response lands on the hosted app's error screen
    const browserPost = await raw(acs, {
      method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'text/html,application/xhtml+xml,*/*;q=0.8' },
      body: new URLSearchParams({ SAMLResponse: Buffer.from('<not-saml/>').toString('base64') }).toString(),
    });
    expect(browserPost.status).toBe(303);
    const errorUrl = new URL(browserPost.headers.get('location')!);
    expect([errorUrl.origin + errorUrl.pathname, errorUrl.searchParams.get('code'), errorUrl.searchParams.get('message')])
      .toEqual([`${d.url}/app/error`, 'invalid_argument', 'SAML response rejected: malformed response']);
    expect(await answer({}, (x) => x.replace('ada@example.com</saml:AttributeValue>', 'eve@example.com</saml:AttributeValue>'))).toBe('400 SAML response rejected: invalid signature');
    expect(await answer({ audience: 'https://another-sp.example.com' })).toBe('400 SAML response rejected: wrong audience');
    const past = (m: number) => new Date(Date.now() - m * 60_000);
    expect(await answer({ issuedAt: past(10), notBefore: past(10), notOnOrAfter: past(5) })).toBe('400 SAML response rejected: assertion expired');

    const unsolicited = await idp.respond(metadata, { email: 'ada@example.com' }, '');
    const refusedUnsolicited = await post({ SAMLResponse: unsolicited });
    expect([refusedUnsolicited.status, refusedUnsolicited.body.message]).toEqual([400, 'SAML response rejected: unsolicited response not allowed']);
    await ok('update_org_saml_connection', { id: conn.id, allow_idp_initiated: true });
    const again = await idp.respond(metadata, { email: 'ada@example.com' }, '');
    expect((await post({ SAMLResponse: again, RelayState: APP })).status).toBe(302);
    const replay = await post({ SAMLResponse: again, RelayState: APP });
    expect([replay.status, replay.body.message]).toEqual([400, 'SAML response rejected: replayed assertion']);
  }, 60_000);
  it('a refused SAML response posted by the browser lands on the hosted app\'s error screen with its message and code', async () => {
    const org = await newOrg();
    const idp = createSamlIdp(`https://saml-idp.example.com/${org.name}`, 'https://idp.example.com/sso', samlKeys, { wantAuthnRequestsSigned: true });
    await ok('create_org_saml_connection', { org_id: org.id, name: 'samlify', idp_entity_id: idp.entityId, idp_sso_url: 'https://idp.example.com/sso', idp_certificate: samlKeys.cert });
    const metadata = (await raw(`${d.url}/oauth/saml/${org.name}/metadata`)).body as string;
    const login = await raw(`${d.url}/oauth/saml/${org.name}/login?redirect_uri=${encodeURIComponent(APP)}`, { redirect: 'manual' });
    const location = login.headers.get('location')!;
    // correctly signed by the trusted IdP key, but for another SP
    const response = await idp.respond(metadata, { email: 'ada@example.com' }, await idp.requestIdOf(metadata, location), { audience: 'https://another-sp.example.com' });
    const page = await appPage();
    await page.route('http://idp.test/**', (route) => route.fulfill({
      status: 200, contentType: 'text/html',
      body: `<html><body><form method="post" action="${d.url}/oauth/saml/${org.name}/acs"><input type="hidden" name="SAMLResponse" value="${response}"/>`
        + `<input type="hidden" name="RelayState" value="${new URL(location).searchParams.get('RelayState')!}"/></form><script>document.forms[0].submit()</script></body></html>`,
    }));
    await page.goto('http://idp.test/post');
    await page.waitForURL((u) => u.pathname === '/app/error');
    await page.locator('h1', { hasText: 'Sign-in failed' }).waitFor();
    await page.locator('#form-error', { hasText: 'SAML response rejected: wrong audience' }).waitFor();
    await expect(page.locator('#error-code').textContent()).resolves.toBe('invalid_argument');
    await page.context().close();
  }, 60_000);
  it('a connection on the HTTP-POST binding answers its login with an auto-posting form whose signed AuthnRequest the IdP verifies', async () => {
    const org = await newOrg();
    const idp = createSamlIdp(`https://saml-idp.example.com/${org.name}`, 'https://idp.example.com/sso', samlKeys, { wantAuthnRequestsSigned: true });
    const base = { org_id: org.id, name: 'samlify', idp_entity_id: idp.entityId, idp_sso_url: 'https://idp.example.com/sso', idp_certificate: samlKeys.cert };
    expect(await refused('create_org_saml_connection', { ...base, idp_sso_binding: 'SOAP' })).toBe('invalid_argument: idp_sso_binding must be HTTP-Redirect or HTTP-POST');
    expect(await ok('create_org_saml_connection', { ...base, idp_sso_binding: 'HTTP-POST' })).toMatchObject({ idp_sso_binding: 'HTTP-POST' });
    const metadata = (await raw(`${d.url}/oauth/saml/${org.name}/metadata`)).body as string;
    const login = await raw(`${d.url}/oauth/saml/${org.name}/login?redirect_uri=${encodeURIComponent(APP)}&state=p1`, { redirect: 'manual' });
    expect(login.status).toBe(200);
    expect(login.headers.get('content-type')).toContain('text/html');
    expect(login.headers.get('content-security-policy')).toContain("form-action *");
    const html = login.body as string;
    expect(html).toContain('<form method="post" action="https://idp.example.com/sso">');
    const field = (name: string) => new RegExp(`name="${name}" value="([^"]*)"`).exec(html)![1]!;
    const requestId = await idp.requestIdOfPost(metadata, field('SAMLRequest'));
    const response = await idp.respond(metadata, { email: `post-${randomUUID().slice(0, 8)}@example.com` }, requestId);
    const acs = await raw(`${d.url}/oauth/saml/${org.name}/acs`, {
      method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ SAMLResponse: response, RelayState: field('RelayState') }).toString(),
    });
    expect(acs.status).toBe(302);
    const landed = new URL(acs.headers.get('location')!);
    expect([landed.origin + landed.pathname, landed.searchParams.get('state'), Boolean(landed.searchParams.get('access_token'))]).toEqual([APP, 'p1', true]);
  }, 60_000);
  it('SP-initiated Single Logout in Chromium: the Gatehouse session ends, the IdP verifies our signed LogoutRequest, its signed LogoutResponse lands on the sign-in page', async () => {
    const org = await newOrg();
    const idp = createSamlIdp(`https://saml-idp.example.com/${org.name}`, samlEndpoint.url, samlKeys, { wantAuthnRequestsSigned: true });
    const conn = await ok('create_org_saml_connection', {
      org_id: org.id, name: 'samlify', idp_entity_id: idp.entityId, idp_sso_url: samlEndpoint.url, idp_certificate: samlKeys.cert, idp_slo_url: `${samlEndpoint.url}/slo`,
    });
    expect(conn).toMatchObject({ idp_slo_url: `${samlEndpoint.url}/slo` });
    const email = `slo-${randomUUID().slice(0, 8)}@example.com`;
    samlEndpoint.serve(idp, async () => (await raw(`${d.url}/oauth/saml/${org.name}/metadata`)).body as string, email);
    const page = await appPage();
    await page.goto(`${d.url}/oauth/saml/${org.name}/login?redirect_uri=${encodeURIComponent(APP)}`);
    await page.waitForURL((u) => u.href.startsWith(APP));
    const profile = () => page.evaluate(async (url) => (await fetch(`${url}/v1/profile`, { credentials: 'include' })).status, d.url);
    await page.goto(`${d.url}/app/login`);
    expect(await profile()).toBe(200);
    // another site cannot sign the user out (CSRF): with the browser's cookies, a GET only answers the
    // confirmation page, and a POST from another origin is refused by the Origin check (403)
    const cookie = (await page.context().cookies(d.url)).map((c) => `${c.name}=${c.value}`).join('; ');
    const asked = await raw(`${d.url}/oauth/saml/${org.name}/logout`, { headers: { cookie, accept: 'text/html' } });
    expect({ status: asked.status, form: String(asked.body).includes('method="post"') }).toEqual({ status: 200, form: true });
    const forged = await raw(`${d.url}/oauth/saml/${org.name}/logout`, {
      method: 'POST', redirect: 'manual', headers: { cookie, origin: 'https://evil.example', 'content-type': 'application/x-www-form-urlencoded' }, body: '',
    });
    expect(forged.status).toBe(403);
    await page.goto(`${d.url}/app/login`);
    expect(await profile()).toBe(200);
    expect(samlEndpoint.logouts).not.toContain(email);
    // the GET asks; the button POSTs (same origin) and the logout runs
    await page.goto(`${d.url}/oauth/saml/${org.name}/logout`);
    await page.locator('h1', { hasText: `Sign out of ${org.name}?` }).waitFor();
    await page.locator('#confirm-logout').click();
    await page.waitForURL((u) => u.pathname === '/app/login');
    expect(samlEndpoint.logouts).toEqual([email]);
    expect(await profile()).toBe(401);
    // the SAML session cookie went with it: a second logout has nothing to end
    await page.goto(`${d.url}/oauth/saml/${org.name}/logout`);
    await page.locator('#confirm-logout').click();
    await page.waitForURL((u) => u.pathname === '/app/error');
    await page.locator('#form-error', { hasText: 'no SAML session of this organization in this browser' }).waitFor();
    await page.context().close();
  }, 60_000);
});
