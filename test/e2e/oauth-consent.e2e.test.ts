/**
 * @module test/e2e/oauth-consent
 * Issue 34 §1, both modes: a third-party client (not marked first-party) asks the user's consent at
 * `/authorize`. A real relying party (`openid-client`) starts code + PKCE; Debian's chromium, driven by
 * playwright-core, signs in on the hosted login page and then sees the consent page (the client's name,
 * the host its answer goes to, the scopes in words). Allow → the RP exchanges the code; the consent is
 * remembered (the next request goes straight through); deny → `access_denied` at the RP (RFC 6749
 * §4.1.2.1), which openid-client reports; the answered form cannot be replayed; the user and an admin list
 * the grant, a revocation ends the client's tokens and the next request asks again. Issue 34 §2: a
 * client registers itself with openid-client's RFC 7591 `dynamicClientRegistration` (a public client
 * with a port-less loopback redirect URI), runs the flow on a port of its own (RFC 8252 §7.3) through the
 * consent page, then reads and deletes its registration (RFC 7592). Every page passes axe-core and
 * raises no CSP violation.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import * as oidc from 'openid-client';
import type { Browser } from 'playwright-core';
import { startDeployment, startSmtpSink, type Deployment, type Mode, type SmtpSink } from '@gatehouse/testing';
import { launchChromium } from './passkey-browser.ts';
import { address, bearer, PASSWORD, post } from './email-support.ts';
import { DriverPool, type LoginPageDriver, loginPageFlags, startLogoServer, TITLES } from './login-page-support.ts';
import { startRpServer } from './oauth-support.ts';

const ORG = 'Acme Consent Test';
const APP = 'Photo Printer';
const CONSENT_TITLE = `${APP} wants to access your account`;

describe.each(['all', 'split'] as Mode[])('consent for a third-party client in Chromium (%s)', (mode) => {
  let d: Deployment;
  let sink: SmtpSink;
  let browser: Browser;
  let logo: { url: string; close(): Promise<void> };
  let rpServer: Awaited<ReturnType<typeof startRpServer>>;
  let config: oidc.Configuration;
  let clientId: string;
  const drivers = new DriverPool();
  const admin = (): Record<string, string> => ({ 'x-service-admin-secret': d.adminSecret });

  beforeAll(async () => {
    [sink, logo, browser, rpServer] = await Promise.all([startSmtpSink(), startLogoServer(), launchChromium(), startRpServer()]);
    d = await startDeployment(mode, {
      urlHost: 'localhost', mfa: true, readyTimeoutMs: 120_000, flags: [...loginPageFlags(sink, ORG, logo.url), '--enable-dynamic-client-registration'],
    });
    const created = await post(d.url, '/v1/admin/create_client', {
      name: APP, allowed_scopes: ['openid', 'profile', 'email', 'offline_access'],
      redirect_uris: [rpServer.callback], grant_types: ['authorization_code', 'refresh_token'],
    }, admin());
    expect(created.status).toBe(200);
    expect(created.body.client.is_first_party).toBe(false);
    clientId = created.body.client.client_id as string;
    config = await oidc.discovery(new URL(d.url), clientId, { redirect_uris: [rpServer.callback] },
      oidc.ClientSecretBasic(created.body.client_secret as string), { execute: [oidc.allowInsecureRequests] });
  }, 180_000);
  afterAll(async () => {
    await browser?.close();
    await d?.stop();
    await Promise.all([sink?.close(), logo?.close(), rpServer?.close()]);
  });
  afterEach(() => drivers.checkAndClose());

  /** A password user who declined MFA; returns the email and a first-party access token from /v1/login. */
  async function passwordUser(): Promise<{ email: string; token: string }> {
    const email = address('consent');
    const signup = await post(d.url, '/v1/signup', { email, password: PASSWORD, confirm_password: PASSWORD });
    const mfa = signup.cookies.map((c) => c.split(';')[0]).join('; ');
    expect((await post(d.url, '/v1/skip_mfa_setup', {}, { cookie: mfa })).status).toBe(200);
    const login = await post(d.url, '/v1/login', { email, password: PASSWORD });
    expect(login.status).toBe(200);
    return { email, token: login.body.access_token as string };
  }

  async function startFlow(drv: LoginPageDriver, scope = 'openid profile email offline_access', rp = config) {
    const verifier = oidc.randomPKCECodeVerifier();
    const state = oidc.randomState();
    const nonce = oidc.randomNonce();
    const url = oidc.buildAuthorizationUrl(rp, {
      redirect_uri: rpServer.callback, scope, state, nonce, code_challenge: await oidc.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256',
    });
    await drv.goto(url.href);
    return { verifier, state, nonce };
  }

  async function signIn(drv: LoginPageDriver, email: string): Promise<void> {
    await drv.screen(TITLES.login(ORG));
    await drv.fill('Email or phone number', email);
    await drv.fill('Password', PASSWORD);
    await drv.click('Sign in');
  }

  async function landed(drv: LoginPageDriver): Promise<URL> {
    await drv.page.waitForURL((u) => u.href.startsWith(`${rpServer.callback}?`), { timeout: 15_000 });
    return new URL(drv.page.url());
  }

  /** The consent page is on screen: its facts, and the ticket its form carries. */
  async function consentShown(drv: LoginPageDriver, title = CONSENT_TITLE): Promise<string> {
    await drv.screen(title);
    expect(new URL(drv.page.url()).pathname).toBe('/authorize');
    const text = await drv.page.locator('main').innerText();
    expect(text).toContain(new URL(rpServer.callback).host);
    expect(text).toContain('See your email address');
    expect(text).toContain('See your name');
    return (await drv.page.locator('input[name=consent_ticket]').getAttribute('value'))!;
  }

  it('allow: the RP gets its tokens; the consent is remembered, listed, revoked (its tokens end) and asked again', async () => {
    const user = await passwordUser();
    const drv = await drivers.open(browser, d.url);
    const flow = await startFlow(drv);
    await signIn(drv, user.email);
    const ticket = await consentShown(drv);
    // nothing reached the RP before the answer
    expect(rpServer.seen.some((u) => u.searchParams.get('state') === flow.state)).toBe(false);
    await drv.click('Allow');
    const callback = await landed(drv);
    const tokens = await oidc.authorizationCodeGrant(config, callback, { pkceCodeVerifier: flow.verifier, expectedState: flow.state, expectedNonce: flow.nonce });
    const sub = tokens.claims()!.sub;
    expect(await oidc.fetchUserInfo(config, tokens.access_token, sub)).toMatchObject({ email: user.email });

    // the answered form cannot be posted again, even with the browser's own cookies
    const cookies = (await drv.context.cookies(d.url)).map((c) => `${c.name}=${c.value}`).join('; ');
    const replay = await fetch(`${d.url}/authorize`, {
      method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: cookies },
      body: new URLSearchParams({ consent_ticket: ticket, decision: 'allow' }).toString(),
    });
    expect(replay.status).toBe(400);
    expect(await replay.text()).toContain('already answered');

    // remembered: the same scopes (or fewer) go straight to the RP
    const again = await startFlow(drv, 'openid email');
    const quick = await landed(drv);
    expect(quick.searchParams.get('state')).toBe(again.state);
    expect(quick.searchParams.get('code')).toBeTruthy();

    // listed for the user and for an admin
    const mine = await post(d.url, '/v1/consent_grants', {}, bearer(user.token));
    expect(mine.status).toBe(200);
    expect(mine.body.consent_grants).toEqual([expect.objectContaining({ client_id: clientId, client_name: APP, scopes: ['email', 'offline_access', 'openid', 'profile'] })]);
    const listed = await post(d.url, '/v1/admin/user_consent_grants', { user_id: sub }, admin());
    expect(listed.body.consent_grants.map((g: { id: string }) => g.id)).toEqual([mine.body.consent_grants[0].id]);
    const gql = await post(d.url, '/graphql', { query: 'query { consent_grants { consent_grants { client_name scopes } pagination { total } } }' }, bearer(user.token));
    expect(gql.body).toEqual({ data: { consent_grants: { consent_grants: [{ client_name: APP, scopes: ['email', 'offline_access', 'openid', 'profile'] }], pagination: { total: 1 } } } });

    // revoked by the user: the client's tokens stop working at once, the user's own session does not
    expect((await oidc.tokenIntrospection(config, tokens.access_token)).active).toBe(true);
    const revoked = await post(d.url, '/v1/revoke_consent_grant', { id: mine.body.consent_grants[0].id }, bearer(user.token));
    expect(revoked.body).toEqual({ message: 'Consent revoked' });
    expect((await oidc.tokenIntrospection(config, tokens.access_token)).active).toBe(false);
    await expect(oidc.refreshTokenGrant(config, tokens.refresh_token!)).rejects.toMatchObject({ error: 'invalid_grant' });
    expect((await post(d.url, '/v1/consent_grants', {}, bearer(user.token))).body.consent_grants).toEqual([]);

    // and the next request asks again
    await startFlow(drv);
    await consentShown(drv);
  }, 120_000);

  it('deny: access_denied reaches the RP with its state and openid-client reports it; nothing is remembered', async () => {
    const user = await passwordUser();
    const drv = await drivers.open(browser, d.url);
    const flow = await startFlow(drv);
    await signIn(drv, user.email);
    await consentShown(drv);
    await drv.click('Deny');
    const callback = await landed(drv);
    expect(callback.searchParams.get('error')).toBe('access_denied');
    expect(callback.searchParams.get('code')).toBeNull();
    await expect(oidc.authorizationCodeGrant(config, callback, { pkceCodeVerifier: flow.verifier, expectedState: flow.state, expectedNonce: flow.nonce }))
      .rejects.toMatchObject({ error: 'access_denied' });
    expect((await post(d.url, '/v1/consent_grants', {}, bearer(user.token))).body.consent_grants).toEqual([]);
    // an admin revokes nothing that is not there
    expect((await post(d.url, '/v1/admin/revoke_user_consent_grant', { id: '00000000-0000-4000-8000-000000000000' }, admin())).status).toBe(404);
    // asked again next time
    await startFlow(drv);
    await consentShown(drv);
  }, 120_000);

  it('RFC 7591: a client registers itself, runs code + PKCE on its own loopback port through consent, then deletes itself (RFC 7592)', async () => {
    // registered without a port; the flow uses the RP server's ephemeral one (RFC 8252 §7.3)
    const registered = `http://127.0.0.1${new URL(rpServer.callback).pathname}`;
    const agent = await oidc.dynamicClientRegistration(new URL(d.url), {
      client_name: 'Terminal Agent', redirect_uris: [registered], token_endpoint_auth_method: 'none', grant_types: ['authorization_code', 'refresh_token'],
    }, oidc.None(), { execute: [oidc.allowInsecureRequests] });
    const meta = agent.clientMetadata();
    expect(meta).toMatchObject({ client_name: 'Terminal Agent', token_endpoint_auth_method: 'none', redirect_uris: [registered] });
    expect(meta.client_secret).toBeUndefined();

    const user = await passwordUser();
    const drv = await drivers.open(browser, d.url);
    const flow = await startFlow(drv, 'openid profile email', agent);
    await signIn(drv, user.email);
    await consentShown(drv, 'Terminal Agent wants to access your account');
    await drv.click('Allow');
    const callback = await landed(drv);
    const tokens = await oidc.authorizationCodeGrant(agent, callback, { pkceCodeVerifier: flow.verifier, expectedState: flow.state, expectedNonce: flow.nonce });
    expect(await oidc.fetchUserInfo(agent, tokens.access_token, tokens.claims()!.sub)).toMatchObject({ email: user.email });

    // RFC 7592 with the registration access token
    const uri = String(meta.registration_client_uri);
    const auth = { authorization: `Bearer ${String(meta.registration_access_token)}` };
    const read = await fetch(uri, { headers: auth });
    expect(read.status).toBe(200);
    expect(await read.json()).toMatchObject({ client_id: meta.client_id, client_name: 'Terminal Agent' });
    expect((await fetch(uri, { headers: { authorization: 'Bearer wrong' } })).status).toBe(401);
    expect((await fetch(uri, { method: 'DELETE', headers: auth })).status).toBe(204);
    // its tokens end with it, and the token endpoint no longer knows it
    await expect(oidc.fetchUserInfo(agent, tokens.access_token, tokens.claims()!.sub)).rejects.toBeDefined();
    await expect(oidc.genericGrantRequest(agent, 'refresh_token', { refresh_token: 'x' })).rejects.toMatchObject({ error: 'invalid_client' });
    // an admin sees no such client any more
    expect((await post(d.url, '/v1/admin/client', { id: meta.client_id }, admin())).status).toBe(404);
  }, 120_000);
});
