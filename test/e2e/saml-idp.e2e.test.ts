/**
 * @module test/e2e/saml-idp
 * Gatehouse as a SAML identity provider (issue 20 point 3; behaviour.md §5.9, §5.7, §6.1), both modes.
 *
 * The browser legs run in Debian's chromium (playwright-core) against a real SP: @node-saml/node-saml
 * (the other SAML library than the product's samlify) behind a small HTTP server of the test's own on
 * 127.0.0.1, with its own key. SP-initiated: the SP sends the browser to `/oauth/saml/<org>/idp/sso`
 * with an AuthnRequest (HTTP-Redirect), Gatehouse sends it to the hosted login page, the user signs in,
 * and the browser POSTs the signed Response to the SP's ACS, where node-saml validates it with the
 * certificates of Gatehouse's metadata. IdP-initiated only when the SP allows it. After
 * `rotate_saml_idp_cert` the SP validates with the new key, the old one is still in the metadata until
 * `retire_saml_idp_key`, and gone after.
 *
 * Issue 31, Single Logout propagated: two node-saml SPs signed in to through one Gatehouse session; SP A's
 * LogoutRequest ends the session, the browser carries the IdP's signed LogoutRequest (HTTP-Redirect) to SP
 * B, which checks it with the metadata's certificates and answers; A gets `Success`, or `PartialLogout`
 * when B answered otherwise (SAML Profiles §4.4, Core §3.7.3.2).
 *
 * The nine admin routes on REST and GraphQL: each §5.9 rule and message, bad input → 400 (never 5xx),
 * the org-admin gate (org admin allowed, non-member refused, the import super-admin only), and the
 * SPs and keys leaving with their organization.
 */
import http from 'node:http';
import { inflateRawSync } from 'node:zlib';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { SAML, ValidateInResponseTo } from '@node-saml/node-saml';
import type { Browser } from 'playwright-core';
import { startDeployment, startSmtpSink, type Deployment, type Mode, type SmtpSink } from '@gatehouse/testing';
import { launchChromium } from './passkey-browser.ts';
import { address, PASSWORD, post } from './email-support.ts';
import { waitForAudits } from './audit-support.ts';
import { LoginPageDriver, loginPageFlags, nextTotp, signUpWithTotp, startLogoServer, TITLES } from './login-page-support.ts';
import { gql, postJson, raw } from '../support/http.ts';
import { peerKeyPair as spKeyPair } from './saml-support.ts';

const ORG_TITLE = 'Acme SAML IdP Test';
const EMAIL_FORMAT = 'urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress';

/**
 * The SP: `/login` starts SP-initiated SSO, `/acs` validates the posted Response with node-saml;
 * `/logout` sends the last signed-in user's LogoutRequest, `/slo` takes the IdP's LogoutRequest
 * (HTTP-Redirect, answered with `sloSuccess`) and its LogoutResponse (HTTP-POST).
 */
interface TestSp {
  base: string;
  entityId: string;
  acs: string;
  slo: string;
  /** the status this SP answers the IdP's LogoutRequests with: Success, or node-saml's Requester */
  sloSuccess: boolean;
  /** the IdP's LogoutRequests, as node-saml read them (signature verified), or the error */
  logoutRequests: Array<{ nameID?: string; sessionIndex?: string; issuer?: string; signed?: boolean; error?: string }>;
  /** the ID of the last LogoutRequest this SP sent */
  logoutRequestId: string;
  /**
   * the IdP's LogoutResponses: their status, whether they answer `logoutRequestId`, and whether node-saml
   * accepted the signature (node-saml reads `InResponseTo` on a Response only, so it is compared here)
   */
  logoutResponses: Array<{ status?: string; relayState?: string; answersOurs: boolean; valid: boolean }>;
  /** the certificates node-saml trusts (set from Gatehouse's metadata) */
  certs: string[];
  /** InResponseTo checked (SP-initiated) or not (IdP-initiated) */
  inResponseTo: ValidateInResponseTo;
  /** every validation: the profile or the error */
  results: Array<{ nameID?: string; attrs?: Record<string, unknown>; error?: string; relayState?: string }>;
  close(): Promise<void>;
}

const STATUS = (s: string): string => `urn:oasis:names:tc:SAML:2.0:status:${s}`;

/** The body of a request, as text. */
async function bodyOf(req: http.IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

async function startSp(idpSso: () => string, spKey: string): Promise<TestSp> {
  const state: TestSp = {
    base: '', entityId: '', acs: '', slo: '', sloSuccess: true, logoutRequests: [], logoutRequestId: '', logoutResponses: [], certs: [], inResponseTo: ValidateInResponseTo.always, results: [], close: async () => {},
  };
  // one node-saml instance per configuration; its request-ID cache spans /login → /acs
  let saml: SAML | null = null;
  let key = '';
  const samlOf = (): SAML => {
    const k = `${state.certs.join()}|${state.inResponseTo}|${idpSso()}`;
    if (!saml || k !== key) {
      key = k;
      saml = new SAML({
        issuer: state.entityId, callbackUrl: state.acs, entryPoint: idpSso(), logoutUrl: idpSso().replace(/\/sso$/, '/slo'), idpCert: state.certs, audience: state.entityId,
        privateKey: spKey, signatureAlgorithm: 'sha256', wantAssertionsSigned: true, wantAuthnResponseSigned: true, validateInResponseTo: state.inResponseTo,
        identifierFormat: EMAIL_FORMAT,
      });
    }
    return saml;
  };
  const server = http.createServer((req, res) => {
    void (async () => {
      const url = new URL(req.url ?? '/', state.base);
      if (url.pathname === '/login') {
        const to = await samlOf().getAuthorizeUrlAsync(url.searchParams.get('relay') ?? '', undefined, {});
        res.writeHead(302, { location: to }).end();
        return;
      }
      if (url.pathname === '/logout') {
        const last = state.results.findLast((r) => r.nameID);
        const user = { nameID: last!.nameID!, nameIDFormat: EMAIL_FORMAT, sessionIndex: last!.attrs!['sessionIndex'] as string, issuer: state.entityId };
        const to = new URL(await samlOf().getLogoutUrlAsync(user as never, url.searchParams.get('relay') ?? '', {}));
        state.logoutRequestId = /ID="([^"]+)"/.exec(inflateRawSync(Buffer.from(to.searchParams.get('SAMLRequest')!, 'base64')).toString('utf8'))![1]!;
        res.writeHead(302, { location: to.href }).end();
        return;
      }
      if (url.pathname === '/slo' && req.method === 'GET') {
        const query = Object.fromEntries(url.searchParams);
        try {
          const { profile } = await samlOf().validateRedirectAsync(query as never, url.search.slice(1));
          state.logoutRequests.push({ nameID: profile?.nameID, sessionIndex: profile?.sessionIndex, issuer: profile?.issuer, signed: Boolean(query['Signature']) });
          res.writeHead(302, { location: await samlOf().getLogoutResponseUrlAsync(profile!, query['RelayState'] ?? '', {}, state.sloSuccess) }).end();
        } catch (err) {
          state.logoutRequests.push({ error: (err as Error).message });
          res.writeHead(400, { 'content-type': 'text/html; charset=utf-8' }).end('<!doctype html><title>SP</title><h1>Logout refused</h1>');
        }
        return;
      }
      if (url.pathname === '/slo' && req.method === 'POST') {
        const form = Object.fromEntries(new URLSearchParams(await bodyOf(req)));
        const xml = Buffer.from(form['SAMLResponse'] ?? '', 'base64').toString('utf8');
        const status = /StatusCode Value="([^"]+)"/.exec(xml)?.[1];
        const checker = new SAML({ issuer: state.entityId, callbackUrl: state.acs, idpCert: state.certs, validateInResponseTo: ValidateInResponseTo.never });
        const valid = await checker.validatePostResponseAsync(form).then((r) => r.loggedOut, () => false);
        const answersOurs = /InResponseTo="([^"]+)"/.exec(xml)?.[1] === state.logoutRequestId;
        state.logoutResponses.push({ status, relayState: form['RelayState'], answersOurs, valid });
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(`<!doctype html><title>SP</title><h1>Signed out: ${status?.replace(/.*:/, '')}</h1>`);
        return;
      }
      if (url.pathname === '/acs' && req.method === 'POST') {
        const form = Object.fromEntries(new URLSearchParams(await bodyOf(req)));
        try {
          const { profile } = await samlOf().validatePostResponseAsync(form);
          const attrs = { ...(profile ?? {}) } as Record<string, unknown>;
          state.results.push({ nameID: profile?.nameID, attrs, relayState: form['RelayState'] });
          res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(`<!doctype html><title>SP</title><h1>Signed in as ${profile?.nameID}</h1>`);
        } catch (err) {
          state.results.push({ error: (err as Error).message });
          res.writeHead(401, { 'content-type': 'text/html; charset=utf-8' }).end('<!doctype html><title>SP</title><h1>SAML refused</h1>');
        }
        return;
      }
      res.writeHead(404).end();
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  state.base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  state.entityId = `${state.base}/metadata`;
  state.acs = `${state.base}/acs`;
  state.slo = `${state.base}/slo`;
  state.close = () => new Promise<void>((resolve) => { server.close(() => resolve()); server.closeAllConnections(); });
  return state;
}

/** The base64 bodies of the signing certificates in IdP metadata. */
const metadataCerts = (xml: string): string[] => [...xml.matchAll(/<(?:ds:)?X509Certificate>([^<]+)</g)].map((m) => m[1]!.replace(/\s+/g, ''));
const pemBody = (pem: string): string => pem.replace(/-----[^-]+-----/g, '').replace(/\s+/g, '');

describe.each(['all', 'split'] as Mode[])('Gatehouse as a SAML IdP (%s)', (mode) => {
  let d: Deployment;
  let sink: SmtpSink;
  let browser: Browser;
  let logo: { url: string; close(): Promise<void> };
  let sp: TestSp;
  let admin: Record<string, string>;
  let org: { id: string; name: string };
  let user: { id: string; email: string };
  let spId: string;

  const rest = (path: string, body: unknown, headers: Record<string, string> = admin) => postJson(`${d.url}/v1/admin/${path}`, body, { origin: d.url, ...headers });
  const metadata = async (name = org.name) => raw(`${d.url}/oauth/saml/${name}/idp/metadata`);

  beforeAll(async () => {
    const spKeys = await spKeyPair();
    [sink, logo, browser] = await Promise.all([startSmtpSink(), startLogoServer(), launchChromium()]);
    d = await startDeployment(mode, { urlHost: 'localhost', mfa: true, flags: [...loginPageFlags(sink, ORG_TITLE, logo.url), '--rate-limit-rps=0'], readyTimeoutMs: 120_000 });
    admin = { 'x-service-admin-secret': d.adminSecret };
    sp = await startSp(() => `${d.url}/oauth/saml/${org.name}/idp/sso`, spKeys.key);
    const created = await rest('create_organization', { name: `saml-idp-${mode}-${Math.random().toString(36).slice(2, 8)}` });
    expect(created.status).toBe(200);
    org = created.body;
    // a password user who declined MFA (behaviour.md §4.1), and a member of the org
    const email = address('saml-idp');
    const signup = await post(d.url, '/v1/signup', { email, password: PASSWORD, confirm_password: PASSWORD, given_name: 'Ada' });
    expect(signup.status).toBe(200);
    const mfa = signup.cookies.map((c) => c.split(';')[0]).join('; ');
    const skipped = await post(d.url, '/v1/skip_mfa_setup', {}, { cookie: mfa });
    expect(skipped.status).toBe(200);
    user = { id: (skipped.body.user as { id: string }).id, email };
    expect((await rest('add_org_member', { org_id: org.id, user_id: user.id })).status).toBe(200);
    const spRow = await rest('create_saml_service_provider', {
      org_id: org.id, name: 'node-saml SP', entity_id: sp.entityId, acs_url: sp.acs, sp_cert_pem: spKeys.cert,
      mapped_attributes: JSON.stringify({ email: 'mail', given_name: 'givenName' }),
    });
    expect(spRow.status).toBe(200);
    spId = spRow.body.id;
  }, 300_000);
  afterAll(async () => {
    await browser?.close();
    await d?.stop();
    await Promise.all([sink?.close(), logo?.close(), sp?.close()]);
  });

  /** Trusts what Gatehouse's metadata publishes now, as an SP that refreshes metadata does. */
  async function trustMetadata(): Promise<string[]> {
    const res = await metadata();
    expect(res.status).toBe(200);
    sp.certs = metadataCerts(res.body as string);
    return sp.certs;
  }

  /** Waits for the SP's page after the ACS; the last validation must be a success for the user. */
  async function landedAtSp(drv: LoginPageDriver, email = user.email, at: TestSp = sp): Promise<void> {
    await drv.page.waitForURL((u) => u.href === at.acs, { timeout: 20_000 });
    await drv.page.getByRole('heading', { level: 1, name: `Signed in as ${email}` }).waitFor({ timeout: 10_000 });
    expect(at.results.at(-1)).toMatchObject({ nameID: email });
  }

  it('SP-initiated in Chromium: AuthnRequest → the login page → a signed assertion node-saml accepts, with mapped attributes', async () => {
    expect(metadataCerts((await metadata()).body as string)).toHaveLength(1);
    await trustMetadata();
    sp.inResponseTo = ValidateInResponseTo.always;
    const drv = await LoginPageDriver.open(browser, d.url);
    try {
      await drv.goto(`${sp.base}/login?relay=%2Fdashboard`);
      await drv.screen(TITLES.login(ORG_TITLE));
      expect(new URL(drv.page.url()).searchParams.get('return_to')).toMatch(new RegExp(`^/oauth/saml/${org.name}/idp/sso\\?SAMLRequest=`));
      await drv.fill('Email or phone number', user.email);
      await drv.fill('Password', PASSWORD);
      await drv.click('Sign in');
      await landedAtSp(drv);
      expect(sp.results.at(-1)).toMatchObject({ relayState: '/dashboard', attrs: expect.objectContaining({ mail: user.email, givenName: 'Ada', nameIDFormat: EMAIL_FORMAT }) });
      expect(drv.violations).toEqual([]);

      // the browser's Gatehouse session answers the next AuthnRequest without the page
      const before = sp.results.length;
      await drv.goto(`${sp.base}/login`);
      await landedAtSp(drv);
      expect(sp.results.length).toBe(before + 1);
    } finally {
      await drv.close();
    }
  }, 90_000);

  it('the audit log records the §5.7 saml.* actions of this deployment', async () => {
    const rows = await waitForAudits(d, (r) => r.resource_id === spId, ['saml.idp_service_provider_changed', 'saml.idp_assertion_issued']);
    expect(rows.find((r) => r.action === 'saml.idp_assertion_issued')).toMatchObject({ actor_id: user.id, metadata: expect.objectContaining({ org_id: org.id, flow: 'sp_initiated' }) });
  });

  it('Single Logout propagated (issue 31): A\'s logout reaches B through the browser; A gets Success, or PartialLogout when B says no', async () => {
    const bKeys = await spKeyPair();
    const spB = await startSp(() => `${d.url}/oauth/saml/${org.name}/idp/sso`, bKeys.key);
    const drv = await LoginPageDriver.open(browser, d.url);
    let b: Awaited<ReturnType<typeof rest>> | undefined;
    try {
      expect((await rest('update_saml_service_provider', { id: spId, slo_url: sp.slo })).body.slo_url).toBe(sp.slo);
      b = await rest('create_saml_service_provider', { org_id: org.id, name: 'node-saml SP B', entity_id: spB.entityId, acs_url: spB.acs, sp_cert_pem: bKeys.cert, slo_url: spB.slo });
      expect(b.status).toBe(200);
      spB.certs = await trustMetadata();

      /** signs in at A (the login page) and B (the same Gatehouse session); B's SessionIndex */
      const signInAtBoth = async (): Promise<string> => {
        await drv.goto(`${sp.base}/login`);
        await drv.screen(TITLES.login(ORG_TITLE));
        await drv.fill('Email or phone number', user.email);
        await drv.fill('Password', PASSWORD);
        await drv.click('Sign in');
        await landedAtSp(drv);
        await drv.goto(`${spB.base}/login`);
        await landedAtSp(drv, user.email, spB);
        return spB.results.at(-1)!.attrs!['sessionIndex'] as string;
      };
      /** A's logout, run through the browser to A's page */
      const logOutAtA = async (status: string): Promise<void> => {
        await drv.goto(`${sp.base}/logout?relay=%2Fbye`);
        await drv.page.waitForURL((u) => u.href === sp.slo, { timeout: 20_000 });
        await drv.page.getByRole('heading', { level: 1, name: `Signed out: ${status}` }).waitFor({ timeout: 10_000 });
      };

      const sessionIndex = await signInAtBoth();
      await logOutAtA('Success');
      // B got the IdP's signed LogoutRequest naming the user's NameID and the SessionIndex of its assertion
      expect(spB.logoutRequests).toEqual([{ nameID: user.email, sessionIndex, issuer: `${d.url}/oauth/saml/${org.name}/idp/metadata`, signed: true }]);
      expect(sp.logoutResponses.at(-1)).toEqual({ status: STATUS('Success'), relayState: '/bye', answersOurs: true, valid: true });
      // the Gatehouse session is over: the next AuthnRequest goes to the login page
      await drv.goto(`${spB.base}/login`);
      await drv.screen(TITLES.login(ORG_TITLE));

      spB.sloSuccess = false;
      await signInAtBoth();
      await logOutAtA('PartialLogout');
      expect(spB.logoutRequests).toHaveLength(2);
      expect(sp.logoutResponses.at(-1)).toEqual({ status: STATUS('PartialLogout'), relayState: '/bye', answersOurs: true, valid: true });
      expect(drv.violations).toEqual([]);

      // the rows reach the audit log asynchronously: wait for both logouts' rows
      const until = Date.now() + 30_000;
      let rows = await waitForAudits(d, (r) => r.action.startsWith('saml.idp_logout'), ['saml.idp_logout_propagated', 'saml.idp_logout']);
      while (rows.length < 4 && Date.now() < until) {
        await new Promise((resolve) => setTimeout(resolve, 250));
        rows = await waitForAudits(d, (r) => r.action.startsWith('saml.idp_logout'), []);
      }
      expect(rows.filter((r) => r.action === 'saml.idp_logout_propagated' && r.resource_id === b!.body.id).map((r) => [r.actor_id, r.metadata['logged_out'], r.metadata['status']])).toEqual([
        [user.id, true, STATUS('Success')], [user.id, false, STATUS('Requester')],
      ]);
      // each logout recorded when accepted: the session ended, one other participant to visit
      expect(rows.filter((r) => r.action === 'saml.idp_logout').map((r) => [r.resource_id, r.actor_id, r.metadata['session_ended'], r.metadata['participants']])).toEqual([[spId, user.id, true, 1], [spId, user.id, true, 1]]);
    } finally {
      // the org's SP list is counted by the CRUD test below
      if (b?.body?.id) await rest('delete_saml_service_provider', { id: b.body.id });
      await drv.close();
      await spB.close();
    }
  }, 120_000);

  if (mode === 'all') {
    it('the MFA gate (§4.1): a TOTP user gives a password and an authenticator code before the SP gets an assertion', async () => {
      const enrol = await LoginPageDriver.open(browser, d.url);
      const email = address('saml-totp');
      const { secret } = await signUpWithTotp(enrol, ORG_TITLE, email, PASSWORD);
      await enrol.close();
      const found = await rest('users', { query: email });
      expect((await rest('add_org_member', { org_id: org.id, user_id: found.body.users[0].id })).status).toBe(200);
      await trustMetadata();
      const drv = await LoginPageDriver.open(browser, d.url);
      try {
        await drv.goto(`${sp.base}/login`);
        await drv.screen(TITLES.login(ORG_TITLE));
        await drv.fill('Email or phone number', email);
        await drv.fill('Password', PASSWORD);
        await drv.click('Sign in');
        await drv.screen(TITLES.totp);
        // the password alone gave the SP nothing
        expect(sp.results.some((r) => r.nameID === email)).toBe(false);
        await drv.fill('Code from the app', await nextTotp(secret));
        await drv.click('Verify');
        await landedAtSp(drv, email);
      } finally {
        await drv.close();
      }
    }, 90_000);

    it('IdP-initiated: refused unless the SP allows it, then node-saml accepts it', async () => {
      const drv = await LoginPageDriver.open(browser, d.url);
      try {
        // sign in on the page first (no return_to)
        await drv.goto('/app/login');
        await drv.screen(TITLES.login(ORG_TITLE));
        await drv.fill('Email or phone number', user.email);
        await drv.fill('Password', PASSWORD);
        await drv.click('Sign in');
        await drv.screen(TITLES.signedIn);
        const start = `${d.url}/oauth/saml/${org.name}/idp/sso?sp=${encodeURIComponent(sp.entityId)}&RelayState=%2Fhome`;
        const refused = await drv.page.goto(start);
        expect(refused?.status()).toBe(403);
        expect(await drv.page.textContent('body')).toContain('IdP-initiated sign-on is not allowed for this service provider');

        expect((await rest('update_saml_service_provider', { id: spId, allow_idp_initiated: true })).body.allow_idp_initiated).toBe(true);
        sp.inResponseTo = ValidateInResponseTo.never;
        await trustMetadata();
        await drv.page.goto(start);
        await landedAtSp(drv);
        expect(sp.results.at(-1)).toMatchObject({ relayState: '/home' });
      } finally {
        sp.inResponseTo = ValidateInResponseTo.always;
        await rest('update_saml_service_provider', { id: spId, allow_idp_initiated: false });
        await drv.close();
      }
    }, 90_000);

    it('key rotation: the SP validates with the new key; the old one stays in the metadata until retired', async () => {
      const oldCerts = await trustMetadata();
      const keys = (await rest('saml_idp_keys', { org_id: org.id })).body.saml_idp_keys as Array<{ id: string; status: string; cert_pem: string }>;
      const old = keys.find((k) => k.status === 'current')!;
      const rotated = await rest('rotate_saml_idp_cert', { org_id: org.id });
      expect(rotated.status).toBe(200);
      expect(rotated.body).toMatchObject({ org_id: org.id, algorithm: 'RS256', status: 'current' });
      expect(rotated.body).not.toHaveProperty('private_key');
      const published = metadataCerts((await metadata()).body as string);
      expect(published).toEqual(expect.arrayContaining([pemBody(old.cert_pem), pemBody(rotated.body.cert_pem)]));

      // an SP still trusting only the old key refuses what the new key signs; with the metadata's keys it accepts
      const drv = await LoginPageDriver.open(browser, d.url);
      try {
        sp.certs = oldCerts;
        await drv.goto(`${sp.base}/login`);
        await drv.screen(TITLES.login(ORG_TITLE));
        await drv.fill('Email or phone number', user.email);
        await drv.fill('Password', PASSWORD);
        await drv.click('Sign in');
        await drv.page.getByRole('heading', { level: 1, name: 'SAML refused' }).waitFor({ timeout: 20_000 });
        expect(sp.results.at(-1)?.error).toEqual(expect.any(String));
        await trustMetadata();
        await drv.goto(`${sp.base}/login`);
        await landedAtSp(drv);
      } finally {
        await drv.close();
      }

      expect((await rest('retire_saml_idp_key', { id: rotated.body.id })).body)
        .toEqual({ code: 'failed_precondition', message: 'cannot retire the current signing key; rotate to a new key first' });
      expect((await rest('retire_saml_idp_key', { id: old.id })).body).toEqual({ message: 'signing key retired' });
      expect((await rest('retire_saml_idp_key', { id: old.id })).body).toEqual({ message: 'signing key already retired' });
      expect(metadataCerts((await metadata()).body as string)).toEqual([pemBody(rotated.body.cert_pem)]);
      const statuses = ((await rest('saml_idp_keys', { org_id: org.id })).body.saml_idp_keys as Array<{ id: string; status: string }>)
        .map((k) => [k.id, k.status]);
      expect(statuses).toEqual(expect.arrayContaining([[old.id, 'retired'], [rotated.body.id, 'current']]));
    }, 120_000);
  }

  describe('the admin routes (§5.9) on REST and GraphQL', () => {
    const SP_FIELDS = 'id org_id name entity_id acs_url sp_cert_pem name_id_format mapped_attributes allow_idp_initiated is_active created_at updated_at';
    const gqlErr = (res: { body: any }) => (res.body.errors as Array<{ message: string; extensions: { code: string } }> | undefined)?.map((e) => [e.extensions.code, e.message]);

    it('service-provider CRUD with the §5.9 rules and messages', async () => {
      const entity = `urn:crud:${mode}`;
      const c = await rest('create_saml_service_provider', { org_id: org.id, name: 'CRUD', entity_id: entity, acs_url: 'https://crud.example/acs' });
      expect(c.body).toEqual({
        id: expect.any(String), org_id: org.id, name: 'CRUD', entity_id: entity, acs_url: 'https://crud.example/acs', sp_cert_pem: null,
        name_id_format: EMAIL_FORMAT, mapped_attributes: null, allow_idp_initiated: false, is_active: true, created_at: expect.any(Number), updated_at: expect.any(Number),
        // issue 31's extension fields
        sp_encryption_cert_pem: null, slo_url: null,
      });
      const dup = await rest('create_saml_service_provider', { org_id: org.id, name: 'again', entity_id: entity, acs_url: 'https://crud.example/acs' });
      expect([dup.status, dup.body]).toEqual([409, { code: 'already_exists', message: `a service provider with entity_id "${entity}" is already registered for this organization` }]);
      const g = await gql(d.url, `mutation($p: CreateSAMLServiceProviderRequest!) { _create_saml_service_provider(params: $p) { ${SP_FIELDS} } }`,
        { p: { org_id: org.id, name: 'again', entity_id: entity, acs_url: 'https://crud.example/acs' } }, { origin: d.url, ...admin });
      expect(gqlErr(g)).toEqual([['ALREADY_EXISTS', `a service provider with entity_id "${entity}" is already registered for this organization`]]);
      const cases: Array<[Record<string, string>, string]> = [
        [{ acs_url: 'ftp://crud.example/acs' }, 'acs_url must be a valid http(s) URL'],
        [{ sp_cert_pem: 'not a certificate' }, 'sp_cert_pem must be a PEM-encoded X.509 certificate'],
        [{ mapped_attributes: '["mail"]' }, 'mapped_attributes must be a JSON object of strings'],
      ];
      for (const [patch, message] of cases) {
        const bad = await rest('create_saml_service_provider', { org_id: org.id, name: 'bad', entity_id: `urn:bad:${mode}`, acs_url: 'https://bad.example/acs', ...patch });
        expect([bad.status, bad.body]).toEqual([400, { code: 'invalid_argument', message }]);
        const bg = await gql(d.url, 'mutation($p: CreateSAMLServiceProviderRequest!) { _create_saml_service_provider(params: $p) { id } }',
          { p: { org_id: org.id, name: 'bad', entity_id: `urn:bad:${mode}`, acs_url: 'https://bad.example/acs', ...patch } }, { origin: d.url, ...admin });
        expect(gqlErr(bg)).toEqual([['INVALID_ARGUMENT', message]]);
      }
      // wrong JSON types: 400 naming the field, never 5xx
      const typed = await rest('create_saml_service_provider', { org_id: org.id, name: 'typed', entity_id: 'urn:typed', acs_url: 'https://t.example/acs', allow_idp_initiated: 'yes' });
      expect(typed.status).toBe(400);
      expect((await rest('update_saml_service_provider', { id: c.body.id, is_active: false, name: 'Renamed' })).body).toMatchObject({ name: 'Renamed', is_active: false, entity_id: entity });
      const read = await gql(d.url, `query($p: SAMLServiceProviderRequest!) { _saml_service_provider(params: $p) { ${SP_FIELDS} } }`, { p: { id: c.body.id } }, { origin: d.url, ...admin });
      expect(read.body.data._saml_service_provider).toMatchObject({ id: c.body.id, name: 'Renamed', is_active: false });
      const list = await rest('saml_service_providers', { org_id: org.id, pagination: { limit: 1 } });
      expect(list.body.pagination).toEqual({ page: 1, limit: 1, offset: 0, total: 2 });
      expect(list.body.saml_service_providers.map((s: { id: string }) => s.id)).toEqual([c.body.id]);
      const gl = await gql(d.url, 'query($p: ListSAMLServiceProvidersRequest!) { _list_saml_service_providers(params: $p) { saml_service_providers { id } pagination { total } } }', { p: { org_id: org.id } }, { origin: d.url, ...admin });
      expect(gl.body.data._list_saml_service_providers.pagination.total).toBe(2);
      const del = await gql(d.url, 'mutation($p: SAMLServiceProviderRequest!) { _delete_saml_service_provider(params: $p) { message } }', { p: { id: c.body.id } }, { origin: d.url, ...admin });
      expect(del.body.data).toEqual({ _delete_saml_service_provider: { message: 'service provider deleted' } });
      const gone = await rest('saml_service_provider', { id: c.body.id });
      expect([gone.status, gone.body]).toEqual([404, { code: 'not_found', message: 'service provider not found' }]);
    }, 60_000);

    it('keys on GraphQL: _list_saml_idp_keys is a bare list, the private key is never returned', async () => {
      const r = await gql(d.url, 'mutation($p: RotateSAMLIDPCertRequest!) { _rotate_saml_idp_cert(params: $p) { id status algorithm cert_pem } }', { p: { org_id: org.id } }, { origin: d.url, ...admin });
      expect(r.body.data._rotate_saml_idp_cert).toMatchObject({ status: 'current', algorithm: 'RS256', cert_pem: expect.stringMatching(/^-----BEGIN CERTIFICATE-----/) });
      const l = await gql(d.url, 'query($p: ListSAMLIDPKeysRequest!) { _list_saml_idp_keys(params: $p) { id status } }', { p: { org_id: org.id } }, { origin: d.url, ...admin });
      expect(l.body.data._list_saml_idp_keys).toEqual(expect.arrayContaining([{ id: r.body.data._rotate_saml_idp_cert.id, status: 'current' }]));
      const restKeys = await rest('saml_idp_keys', { org_id: org.id });
      expect(JSON.stringify(restKeys.body)).not.toMatch(/PRIVATE KEY|private_key|sealed/i);
      const cur = await gql(d.url, 'mutation($p: RetireSAMLIDPKeyRequest!) { _retire_saml_idp_key(params: $p) { message } }', { p: { id: r.body.data._rotate_saml_idp_cert.id } }, { origin: d.url, ...admin });
      expect(gqlErr(cur)).toEqual([['FAILED_PRECONDITION', 'cannot retire the current signing key; rotate to a new key first']]);
    });

    it('import_saml_sp_metadata: node-saml\'s metadata parsed; XXE, malformed and oversize refused with 400', async () => {
      const spSaml = new SAML({ issuer: 'https://imported.example/sp', callbackUrl: 'https://imported.example/acs', idpCert: 'x', privateKey: (await spKeyPair()).key });
      const xml = spSaml.generateServiceProviderMetadata(null, (await spKeyPair()).cert);
      const ok = await rest('import_saml_sp_metadata', { metadata_xml: xml });
      // node-saml's metadata here names no decryption key and no logout service: both answered as null
      expect(ok.body).toEqual({
        entity_id: 'https://imported.example/sp', acs_url: 'https://imported.example/acs', certificate: expect.stringMatching(/^-----BEGIN CERTIFICATE-----/),
        encryption_certificate: null, slo_url: null,
      });
      const g = await gql(d.url, 'mutation($p: ImportSAMLSPMetadataRequest!) { _import_saml_sp_metadata(params: $p) { entity_id acs_url } }', { p: { metadata_xml: xml } }, { origin: d.url, ...admin });
      expect(g.body.data._import_saml_sp_metadata).toEqual({ entity_id: 'https://imported.example/sp', acs_url: 'https://imported.example/acs' });
      const xxe = await rest('import_saml_sp_metadata', { metadata_xml: '<?xml version="1.0"?><!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/passwd">]><md:EntityDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata" entityID="&e;"/>' });
      expect([xxe.status, xxe.body]).toEqual([400, { code: 'invalid_argument', message: 'could not parse SP metadata XML: DOCTYPE and entity declarations are not allowed' }]);
      const bad = await rest('import_saml_sp_metadata', { metadata_xml: '<md:EntityDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata"><oops></md:EntityDescriptor>' });
      expect(bad.status).toBe(400);
      expect(bad.body.message).toMatch(/^could not parse SP metadata XML: /);
      const none = await rest('import_saml_sp_metadata', { metadata_xml: '<md:EntityDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata" entityID="urn:x"/>' });
      expect(none.body).toEqual({ code: 'invalid_argument', message: 'metadata did not contain an SP entity ID and Assertion Consumer Service URL' });
      // over 1 MiB: the gateway's body cap answers first on REST (the service's own 1 MiB check is unit-tested)
      const big = await rest('import_saml_sp_metadata', { metadata_xml: `<x>${'a'.repeat(1024 * 1024 + 10)}</x>` });
      expect([big.status, big.body]).toEqual([400, { code: 'invalid_argument', message: 'request body too large' }]);
      const typed = await rest('import_saml_sp_metadata', { metadata_xml: 42 });
      expect(typed.status).toBe(400);
    }, 90_000);

    it('the gate: an org admin is allowed on its org, refused (401) elsewhere and on the import; a non-member is refused', async () => {
      const login = async (email: string) => (await post(d.url, '/v1/login', { email, password: PASSWORD })).body.access_token as string;
      const orgAdminEmail = address('saml-org-admin');
      const s = await post(d.url, '/v1/signup', { email: orgAdminEmail, password: PASSWORD, confirm_password: PASSWORD });
      const orgAdminId = ((await post(d.url, '/v1/skip_mfa_setup', {}, { cookie: s.cookies.map((c) => c.split(';')[0]).join('; ') })).body.user as { id: string }).id;
      expect((await rest('add_org_member', { org_id: org.id, user_id: orgAdminId, roles: ['service:org_admin'] })).status).toBe(200);
      const asOrgAdmin = { authorization: `Bearer ${await login(orgAdminEmail)}` };
      const mine = await rest('create_saml_service_provider', { org_id: org.id, name: 'by org admin', entity_id: `urn:orgadmin:${mode}`, acs_url: 'https://oa.example/acs' }, asOrgAdmin);
      expect(mine.status).toBe(200);
      expect((await rest('rotate_saml_idp_cert', { org_id: org.id }, asOrgAdmin)).status).toBe(200);
      expect((await rest('delete_saml_service_provider', { id: mine.body.id }, asOrgAdmin)).body).toEqual({ message: 'service provider deleted' });

      const other = (await rest('create_organization', { name: `saml-other-${mode}-${Math.random().toString(36).slice(2, 8)}` })).body;
      const elsewhere = await rest('create_saml_service_provider', { org_id: other.id, name: 'x', entity_id: 'urn:x', acs_url: 'https://x.example/acs' }, asOrgAdmin);
      // refused as the orgs gate refuses (test/e2e/orgs.e2e.test.ts): 401 unauthorized
      const U = { code: 'unauthenticated', message: 'unauthorized' };
      expect([elsewhere.status, elsewhere.body]).toEqual([401, U]);
      const theirs = (await rest('create_saml_service_provider', { org_id: other.id, name: 'theirs', entity_id: 'urn:theirs', acs_url: 'https://t.example/acs' })).body;
      expect((await rest('saml_service_provider', { id: theirs.id }, asOrgAdmin)).body).toEqual(U);
      expect((await rest('retire_saml_idp_key', { id: (await rest('rotate_saml_idp_cert', { org_id: other.id })).body.id }, asOrgAdmin)).body).toEqual(U);
      const importAsOrgAdmin = await rest('import_saml_sp_metadata', { metadata_xml: '<x/>' }, asOrgAdmin);
      expect([importAsOrgAdmin.status, importAsOrgAdmin.body]).toEqual([401, U]);

      const outsiderEmail = address('saml-outsider');
      const o = await post(d.url, '/v1/signup', { email: outsiderEmail, password: PASSWORD, confirm_password: PASSWORD });
      await post(d.url, '/v1/skip_mfa_setup', {}, { cookie: o.cookies.map((c) => c.split(';')[0]).join('; ') });
      const asOutsider = { authorization: `Bearer ${await login(outsiderEmail)}` };
      expect((await rest('saml_service_providers', { org_id: org.id }, asOutsider)).body).toEqual(U);
      expect((await rest('saml_idp_keys', { org_id: org.id }, asOutsider)).body).toEqual(U);
      expect((await rest('saml_service_provider', { id: spId }, asOutsider)).body).toEqual(U);
      expect((await rest('saml_idp_keys', { org_id: org.id }, {})).status).toBe(401);
    });

    it('a disabled org refuses SAML; deleting the org removes its SPs and keys', async () => {
      const o = (await rest('create_organization', { name: `saml-gone-${mode}-${Math.random().toString(36).slice(2, 8)}` })).body;
      const s = (await rest('create_saml_service_provider', { org_id: o.id, name: 'x', entity_id: 'urn:gone', acs_url: 'https://g.example/acs' })).body;
      const k = (await rest('rotate_saml_idp_cert', { org_id: o.id })).body;
      expect((await metadata(o.name)).status).toBe(200);
      await rest('update_organization', { id: o.id, enabled: false });
      expect((await metadata(o.name)).status).toBe(403);
      expect((await raw(`${d.url}/oauth/saml/${o.name}/idp/sso?sp=urn%3Agone`)).status).toBe(403);
      expect((await rest('delete_organization', { id: o.id })).body).toEqual({ message: 'Organization deleted successfully' });
      expect((await rest('saml_service_provider', { id: s.id })).status).toBe(404);
      expect((await rest('retire_saml_idp_key', { id: k.id })).body).toEqual({ code: 'not_found', message: 'signing key not found' });
      expect((await metadata(o.name)).status).toBe(404);
    });
  });
});
