/**
 * `SsoRequest` (flows.ts) over the SQLite store, with a samlify IdP on the other side and authn's
 * completion recorded by the test: discovery from a verified domain (JSON and redirect, behind
 * `--enable-org-discovery`), a disabled org and an inactive connection refused with their 4xx, the
 * ACS handing the identity to the completion and making the user an org member, the §5.7 rows, and the
 * Single Logout confirmation page a GET answers (the logout itself is a POST, CSRF-checked by the gateway).
 */
import { beforeAll, afterAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import type { BusEvents } from '@gatehouse/contracts';
import { createLogger } from '@gatehouse/observability';
import { createCallContext } from '@gatehouse/rpc';
import { createSamlIdp, selfSigned } from '@gatehouse/testing';
import { createOidcConnection, createSamlConnection, updateSamlConnection } from './connections.ts';
import { handleSsoRequest, type SsoFlowDeps } from './flows.ts';
import { openSsoScratch, type SsoScratch } from './scratch.ts';

let s: SsoScratch;
let f: SsoFlowDeps;
const audits: BusEvents['audit.recorded'][] = [];
const members: Array<[string, string]> = [];
const completions: unknown[] = [];
const keys = selfSigned('flows-idp');

beforeAll(async () => {
  s = await openSsoScratch('sqlite');
  f = {
    sso: s.d,
    completion: {
      async complete(input, ctx) {
        completions.push(input);
        ctx.setCookies.push('cookie_session=x; Path=/');
        return { redirectUrl: `${input.params.redirect_uri ?? 'https://auth.example.com/app'}?access_token=t`, userId: 'user-1', created: true, error: null };
      },
    },
    addMember: async (orgId, userId) => { members.push([orgId, userId]); },
    audit: async (r) => { audits.push(r); },
    discoveryEnabled: true,
    cookieSecure: true,
    logger: createLogger('silent'),
  };
});
afterAll(async () => { await s?.close(); });

const call = (action: string, org: string, params: Record<string, string> = {}) => handleSsoRequest(f, { action, org, params }, createCallContext());

async function samlOrg(enabled = true) {
  const name = `org-${randomUUID().slice(0, 8)}`;
  const orgId = await s.newOrg(name, enabled);
  const domain = `${name}.example.org`;
  await s.verifyDomain(orgId, domain);
  const idp = createSamlIdp(`urn:idp:${name}`, 'https://idp.example.com/sso', keys);
  const conn = await createSamlConnection(s.d, { orgId, name: 'IdP', idpEntityId: idp.entityId, idpSsoUrl: 'https://idp.example.com/sso', idpCertificate: keys.cert });
  return { name, orgId, domain, idp, conn };
}

describe('SsoRequest', () => {
  it('GET /oauth/saml/<org>/logout (saml_logout_confirm) asks before logging out: a page whose one form POSTs back, no cookie touched, nothing audited', async () => {
    const o = await samlOrg();
    const before = audits.length;
    expect((await call('saml_logout_confirm', o.name)).body).toContain('the SAML connection has no single logout endpoint');
    await updateSamlConnection(s.d, { id: o.conn.id, idpSloUrl: 'https://idp.example.com/slo' });
    const ctx = createCallContext();
    const page = await handleSsoRequest(f, { action: 'saml_logout_confirm', org: o.name, params: {} }, ctx);
    expect({ status: page.status, type: page.content_type, location: page.location ?? null, cookies: ctx.setCookies }).toEqual({ status: 200, type: 'text/html; charset=utf-8', location: null, cookies: [] });
    expect(page.body).toContain(`<form method="post" action="https://auth.example.com/oauth/saml/${o.name}/logout">`);
    expect(page.body).toContain(`Sign out of ${o.name}?`);
    expect(page.body).not.toContain('<script');
    expect(audits.length).toBe(before);
    expect((await call('saml_logout_confirm', 'no-such-org')).status).toBe(404);
  });

  it('discovers the org of a verified email domain: JSON, or a redirect to its SAML login', async () => {
    const o = await samlOrg();
    const json = await call('discover', '', { email: `Bob@${o.domain}` });
    expect(json.status).toBe(200);
    expect(JSON.parse(json.body)).toEqual({
      org_id: o.orgId, org_name: o.name, display_name: null, protocol: 'saml', login_url: `https://auth.example.com/oauth/saml/${o.name}/login`,
    });
    const redirect = await call('discover_login', '', { email: `bob@${o.domain}`, redirect_uri: 'https://app.example.com/cb', state: 's' });
    expect(redirect.location).toBe(`https://auth.example.com/oauth/saml/${o.name}/login?redirect_uri=${encodeURIComponent('https://app.example.com/cb')}&state=s`);
    expect(JSON.parse((await call('discover', '', { email: 'bob@unknown.example.net' })).body))
      .toEqual({ code: 'not_found', message: 'no organization has verified this email domain' });
    expect((await call('discover', '', { email: 'not-an-email' })).status).toBe(400);
  });

  it('answers 404 for discovery when --enable-org-discovery is off', async () => {
    const o = await samlOrg();
    const res = await handleSsoRequest({ ...f, discoveryEnabled: false }, { action: 'discover', org: '', params: { email: `a@${o.domain}` } }, createCallContext());
    expect([res.status, JSON.parse(res.body).code]).toEqual([404, 'not_found']);
  });

  it('refuses a disabled org, an unknown org and an inactive connection', async () => {
    const o = await samlOrg(false);
    for (const res of [await call('saml_login', o.name), await call('saml_metadata', o.name), await call('discover', '', { email: `a@${o.domain}` })]) {
      expect([res.status, JSON.parse(res.body)]).toEqual([400, { code: 'failed_precondition', message: 'organization is disabled' }]);
    }
    expect(JSON.parse((await call('oidc_login', 'no-such-org')).body)).toEqual({ code: 'not_found', message: 'organization not found' });
    const active = await samlOrg();
    expect(JSON.parse((await call('oidc_login', active.name)).body)).toEqual({ code: 'not_found', message: 'OIDC connection not found' });
    await updateSamlConnection(s.d, { id: active.conn.id, isActive: false });
    expect(JSON.parse((await call('saml_login', active.name)).body)).toEqual({ code: 'failed_precondition', message: 'SAML connection is inactive' });
  });

  it('refuses an OIDC callback in a browser that did not start the login, before touching the pending login', async () => {
    const orgId = await s.newOrg();
    const org = (await s.d.orgs.organizations.get(orgId))!;
    await createOidcConnection(s.d, { orgId, name: 'n', issuerUrl: `https://${randomUUID()}.example.com`, clientId: 'c', clientSecret: 's' });
    await s.d.store.pending.put({ id: 'victim-state', orgId, kind: 'oidc', data: '{}', expiresAt: s.clock.now + 60 });
    // with Secure the cookie is `__Host-gh_sso_state` (issue 30 §7): a plain-named one, as a sibling
    // domain or an http answer could plant, is not read even when it carries the right state
    for (const cookie of [undefined, '__Host-gh_sso_state=other-state', 'gh_sso_state=victim-state']) {
      const ctx = createCallContext({ headers: cookie ? { cookie } : {} });
      const res = await handleSsoRequest(f, { action: 'oidc_callback', org: org.name, params: { state: 'victim-state', code: 'c' } }, ctx);
      expect([res.status, JSON.parse(res.body).message]).toEqual([400, 'SSO login failed: the login was not started in this browser']);
      expect(ctx.setCookies).toEqual(['__Host-gh_sso_state=; Path=/; Max-Age=0; HttpOnly; Secure; SameSite=Lax']);
    }
    expect(await s.d.store.pending.take('victim-state', s.clock.now)).not.toBeNull();
  });

  it('the ACS completes the login through authn, adds the membership and records saml.* rows', async () => {
    const o = await samlOrg();
    const login = await call('saml_login', o.name, { redirect_uri: 'https://app.example.com/cb', roles: 'user' });
    const metadata = (await call('saml_metadata', o.name)).body;
    const response = await o.idp.respond(metadata, { email: `ann@${o.domain}`, givenName: 'Ann' }, await o.idp.requestIdOf(metadata, login.location!));
    const ctx = createCallContext();
    const acs = await handleSsoRequest(f, { action: 'saml_acs', org: o.name, params: { SAMLResponse: response, RelayState: new URL(login.location!).searchParams.get('RelayState')! } }, ctx);
    expect(acs.location).toBe('https://app.example.com/cb?access_token=t');
    expect(ctx.setCookies).toEqual(['cookie_session=x; Path=/']);
    expect(completions.at(-1)).toEqual({
      method: 'sso', orgId: o.orgId, params: { redirect_uri: 'https://app.example.com/cb', roles: 'user' },
      identity: { issuer: o.idp.entityId, subject: `ann@${o.domain}`, email: `ann@${o.domain}`, emailVerified: true, givenName: 'Ann', familyName: null },
    });
    expect(members.at(-1)).toEqual([o.orgId, 'user-1']);
    expect(audits.map((a) => a.action).slice(-2)).toEqual(['saml.login_initiated', 'saml.acs_success']);
    const replay = await call('saml_acs', o.name, { SAMLResponse: response });
    expect([replay.status, JSON.parse(replay.body).message]).toEqual([400, 'SAML response rejected: unknown or expired request']);
    expect(audits.at(-1)).toMatchObject({ action: 'saml.acs_failed', resource_type: 'org_saml_connection' });
  });
});
