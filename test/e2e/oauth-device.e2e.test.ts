/**
 * @module test/e2e/oauth-device
 * Issue 34 §5, both modes: the OAuth 2.0 Device Authorization Grant (RFC 8628). The device is
 * openid-client (panva): `initiateDeviceAuthorization` against the discovered
 * `device_authorization_endpoint`, then `pollDeviceAuthorizationGrant` on the token endpoint. The user is
 * Debian's chromium driven by playwright-core on the hosted page's `/app/device`: sent to sign in first,
 * the code prefilled from `verification_uri_complete` (or typed in lower case without the dash), the
 * consent screen naming the application and its scopes, allow or deny. Also shown: `slow_down` when
 * a poll comes sooner than the interval (openid-client then waits 5 s more and gets the tokens),
 * `expired_token` after `--device-code-expires-in`, single use, wrong codes refused and limited
 * (RFC 8628 §5.1), and a client without the grant type refused. Two replicas (two `gatehouse all`
 * processes on one database; two authn processes in split mode) share the state: a poll on one and a
 * poll on the other are paced together, the user's answer on one is seen by the other, and the code is
 * redeemed once. Every screen passes axe-core and raises no CSP violation.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { calculateJwkThumbprint, decodeJwt, exportJWK } from 'jose';
import * as oidc from 'openid-client';
import type { Browser } from 'playwright-core';
import { startDeployment, startSmtpSink, type Deployment, type Mode, type SmtpSink } from '@gatehouse/testing';
import { closeGrpcClients, grpcRpc } from '../support/surfaces.ts';
import { launchChromium } from './passkey-browser.ts';
import { address, PASSWORD, post, sleep } from './email-support.ts';
import { DriverPool, type LoginPageDriver, loginPageFlags, startLogoServer, TITLES } from './login-page-support.ts';

const ORG = 'Acme Device Test';
const APP = 'Living Room TV';
const DEVICE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';
/** --device-code-expires-in: long enough for a flow in the browser, short enough to wait out once */
const EXPIRES_IN = 60;
const TITLE = { enter: 'Connect a device', consent: `${APP} wants to access your account`, connected: 'Device connected', denied: 'Access denied' };

describe.each(['all', 'split'] as Mode[])('device authorization grant with openid-client and Chromium (%s)', (mode) => {
  let d: Deployment;
  let sink: SmtpSink;
  let browser: Browser;
  let logo: { url: string; close(): Promise<void> };
  let config: oidc.Configuration;
  /** every token endpoint answer openid-client received: its `error`, or `tokens` */
  let polls: string[];
  const drivers = new DriverPool();
  const admin = (): Record<string, string> => ({ 'x-service-admin-secret': d.adminSecret });

  beforeAll(async () => {
    [sink, logo, browser] = await Promise.all([startSmtpSink(), startLogoServer(), launchChromium()]);
    d = await startDeployment(mode, {
      urlHost: 'localhost', mfa: true, readyTimeoutMs: 180_000, flags: [...loginPageFlags(sink, ORG, logo.url), `--device-code-expires-in=${EXPIRES_IN}`],
      ...(mode === 'all' ? { replicas: 2 } : { authnReplicas: 2 }),
    });
    // a public client (a TV has no secret), enabled for the device grant only
    const created = await post(d.url, '/v1/admin/create_client', {
      name: APP, allowed_scopes: ['openid', 'profile', 'email'], grant_types: [DEVICE_GRANT], is_public: true,
    }, admin());
    expect(created.status).toBe(200);
    config = await oidc.discovery(new URL(d.url), created.body.client.client_id as string, {}, oidc.None(), { execute: [oidc.allowInsecureRequests] });
    polls = [];
    config[oidc.customFetch] = async (url, options) => {
      const res = await fetch(url, options as RequestInit);
      if (new URL(url).pathname === '/oauth/token') {
        const body = await res.clone().json() as { error?: string };
        polls.push(body.error ?? 'tokens');
      }
      return res;
    };
  }, 180_000);
  afterAll(async () => {
    closeGrpcClients();
    await browser?.close();
    await d?.stop();
    await Promise.all([sink?.close(), logo?.close()]);
  });
  afterEach(() => drivers.checkAndClose());

  /** A password user who declined MFA. */
  async function passwordUser(): Promise<string> {
    const email = address('device');
    const signup = await post(d.url, '/v1/signup', { email, password: PASSWORD, confirm_password: PASSWORD });
    const mfa = signup.cookies.map((c) => c.split(';')[0]).join('; ');
    expect((await post(d.url, '/v1/skip_mfa_setup', {}, { cookie: mfa })).status).toBe(200);
    return email;
  }

  /** Opens `url` signed out: the page sends the browser to sign in, then back to `/app/device`. */
  async function signInVia(drv: LoginPageDriver, url: string, email: string): Promise<void> {
    await drv.goto(url);
    await drv.screen(TITLES.login(ORG));
    await drv.fill('Email or phone number', email);
    await drv.fill('Password', PASSWORD);
    await drv.click('Sign in');
    await drv.screen(TITLE.enter);
  }

  /** The consent screen is on screen with the application, the code and the scopes in words. */
  async function consentShown(drv: LoginPageDriver, userCode: string): Promise<void> {
    await drv.screen(TITLE.consent);
    const text = await drv.page.locator('main').innerText();
    expect(text).toContain(userCode);
    expect(text).toContain('Know who you are');
    expect(text).toContain('See your email address');
  }

  /** A raw token request of the device (the RFC 8628 §3.4 form), for what openid-client hides. */
  async function rawPoll(deviceCode: string): Promise<{ status: number; body: Record<string, unknown> }> {
    const res = await fetch(`${d.url}/oauth/token`, {
      method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: DEVICE_GRANT, device_code: deviceCode, client_id: config.clientMetadata().client_id }),
    });
    return { status: res.status, body: await res.json() as Record<string, unknown> };
  }

  /** A device token request answered by the second replica: its own HTTP port (all-in-one) or its authn process over gRPC (split). */
  async function pollOtherReplica(deviceCode: string): Promise<{ status: number; body: Record<string, unknown> }> {
    const params = { grant_type: DEVICE_GRANT, device_code: deviceCode, client_id: config.clientMetadata().client_id };
    if (mode === 'all') {
      expect(d.replicaUrls).toHaveLength(2);
      const res = await fetch(`${d.replicaUrls[1]}/oauth/token`, {
        method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(params),
      });
      return { status: res.status, body: await res.json() as Record<string, unknown> };
    }
    expect(d.authnGrpcAddresses).toHaveLength(2);
    const r = await grpcRpc({ url: d.url, grpcAddress: d.authnGrpcAddresses[1]! }, 'OauthToken', { params, method: 'POST' });
    if (!r.ok) throw new Error(`${r.code}: ${r.message}`);
    return { status: Number(r.body.status), body: r.body.body as Record<string, unknown> };
  }

  it('across replicas: polls on two replicas are paced together, the answer given on one is redeemed on the other, once', async () => {
    const email = await passwordUser();
    const auth = await oidc.initiateDeviceAuthorization(config, { scope: 'openid email' });
    expect(await pollOtherReplica(auth.device_code)).toMatchObject({ status: 400, body: { error: 'authorization_pending' } });
    expect(await rawPoll(auth.device_code)).toMatchObject({ status: 400, body: { error: 'slow_down' } });
    const drv = await drivers.open(browser, d.url);
    await signInVia(drv, auth.verification_uri_complete!, email);
    await drv.click('Continue');
    await consentShown(drv, auth.user_code);
    await drv.click('Allow');
    await drv.screen(TITLE.connected);
    const tokens = await pollOtherReplica(auth.device_code);
    expect(tokens).toMatchObject({ status: 200, body: { token_type: 'Bearer', scope: 'openid email', access_token: expect.any(String) } });
    expect(await oidc.fetchUserInfo(config, String(tokens.body.access_token), oidc.skipSubjectCheck)).toMatchObject({ email });
    expect(await rawPoll(auth.device_code)).toEqual({ status: 400, body: { error: 'invalid_grant', error_description: 'device_code already used' } });
  }, 150_000);

  it('discovery advertises the endpoint; allow: the code prefilled from verification_uri_complete, openid-client gets the tokens, once', async () => {
    const meta = config.serverMetadata();
    expect(meta.device_authorization_endpoint).toBe(`${d.url}/oauth/device_authorization`);
    expect(meta.grant_types_supported).toContain(DEVICE_GRANT);
    const email = await passwordUser();
    const auth = await oidc.initiateDeviceAuthorization(config, { scope: 'openid email profile' });
    expect(auth).toMatchObject({
      verification_uri: `${d.url}/app/device`, expires_in: EXPIRES_IN, interval: 5,
      user_code: expect.stringMatching(/^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$/),
    });
    expect(auth.verification_uri_complete).toBe(`${d.url}/app/device?user_code=${auth.user_code}`);
    polls.length = 0;
    const tokens = oidc.pollDeviceAuthorizationGrant(config, auth);

    const drv = await drivers.open(browser, d.url);
    await signInVia(drv, auth.verification_uri_complete!, email);
    expect(await drv.page.getByLabel('Code', { exact: true }).inputValue()).toBe(auth.user_code);
    await drv.click('Continue');
    await consentShown(drv, auth.user_code);
    await drv.click('Allow');
    await drv.screen(TITLE.connected);

    const got = await tokens;
    expect(got.scope).toBe('openid email profile');
    expect(polls.at(-1)).toBe('tokens');
    expect(polls.slice(0, -1).every((p) => p === 'authorization_pending')).toBe(true);
    const sub = got.claims()!.sub;
    expect(await oidc.fetchUserInfo(config, got.access_token, sub)).toMatchObject({ email });
    // single use: the device code is spent
    expect(await rawPoll(auth.device_code)).toEqual({ status: 400, body: { error: 'invalid_grant', error_description: 'device_code already used' } });
  }, 150_000);

  it('DPoP (RFC 9449): polled with openid-client\'s DPoP handle, the device\'s access token is bound to its key', async () => {
    const email = await passwordUser();
    const pair = await oidc.randomDPoPKeyPair('ES256');
    const jkt = await calculateJwkThumbprint(await exportJWK(pair.publicKey), 'sha256');
    const dpop = oidc.getDPoPHandle(config, pair);
    const auth = await oidc.initiateDeviceAuthorization(config, { scope: 'openid email' });
    const tokens = oidc.pollDeviceAuthorizationGrant(config, auth, undefined, { DPoP: dpop });
    const drv = await drivers.open(browser, d.url);
    await signInVia(drv, auth.verification_uri_complete!, email);
    await drv.click('Continue');
    await consentShown(drv, auth.user_code);
    await drv.click('Allow');
    await drv.screen(TITLE.connected);
    const got = await tokens;
    expect(got.token_type).toBe('dpop');
    expect(decodeJwt(got.access_token)).toMatchObject({ cnf: { jkt } });
    const sub = got.claims()!.sub;
    expect(await oidc.fetchUserInfo(config, got.access_token, sub, { DPoP: dpop })).toMatchObject({ email });
  }, 150_000);

  it('deny: the code typed in lower case without the dash; openid-client reports access_denied', async () => {
    const email = await passwordUser();
    const auth = await oidc.initiateDeviceAuthorization(config, { scope: 'openid email' });
    const denied = oidc.pollDeviceAuthorizationGrant(config, auth).then(() => 'tokens', (err: { error?: string }) => err.error ?? String(err));

    const drv = await drivers.open(browser, d.url);
    await signInVia(drv, auth.verification_uri, email);
    expect(await drv.page.getByLabel('Code', { exact: true }).inputValue()).toBe('');
    await drv.fill('Code', auth.user_code.replace('-', '').toLowerCase());
    await drv.click('Continue');
    await consentShown(drv, auth.user_code);
    await drv.click('Deny');
    await drv.screen(TITLE.denied);
    expect(await denied).toBe('access_denied');
  }, 150_000);

  it('slow_down: a poll sooner than the interval is refused and adds 5 s; openid-client waits longer and gets the tokens', async () => {
    const email = await passwordUser();
    // a poll right after another: the second is slow_down (RFC 8628 §3.5)
    const raw = await oidc.initiateDeviceAuthorization(config, { scope: 'openid' });
    expect((await rawPoll(raw.device_code)).body.error).toBe('authorization_pending');
    expect(await rawPoll(raw.device_code)).toEqual({ status: 400, body: { error: 'slow_down', error_description: 'polling too fast: wait at least 10 seconds between requests' } });

    // openid-client polls after 5 s; another poll of the same code 3 s in makes its poll too soon
    const auth = await oidc.initiateDeviceAuthorization(config, { scope: 'openid email' });
    polls.length = 0;
    const tokens = oidc.pollDeviceAuthorizationGrant(config, auth);
    await sleep(3_000);
    expect((await rawPoll(auth.device_code)).body.error).toBe('authorization_pending');
    const drv = await drivers.open(browser, d.url);
    await signInVia(drv, auth.verification_uri_complete!, email);
    // the approval comes after openid-client's first poll
    while (polls.length < 1) await sleep(250);
    await drv.click('Continue');
    await consentShown(drv, auth.user_code);
    await drv.click('Allow');
    await drv.screen(TITLE.connected);
    const got = await tokens;
    expect(got.access_token).toBeTruthy();
    // openid-client's first poll was slow_down; every later one, 10 s apart, was accepted
    expect(polls[0]).toBe('slow_down');
    expect(polls.slice(1)).not.toContain('slow_down');
    expect(polls.at(-1)).toBe('tokens');
  }, 150_000);

  it('wrong codes: refused with a message, limited to 5 per user; an unknown client and a client without the grant are refused', async () => {
    const email = await passwordUser();
    const drv = await drivers.open(browser, d.url);
    await signInVia(drv, '/app/device', email);
    /** Types a code, sends it, and answers the HTTP status and the alert the page shows. */
    const enter = async (code: string): Promise<{ status: number; alert: string | null }> => {
      await drv.fill('Code', code);
      const answered = drv.page.waitForResponse((r) => new URL(r.url()).pathname === '/oauth/device_verification');
      await drv.click('Continue');
      const status = (await answered).status();
      await drv.page.waitForFunction(() => (globalThis as any).document.querySelector('main')?.getAttribute('aria-busy') === 'false');
      return { status, alert: await drv.page.getByRole('alert').textContent() };
    };
    for (let i = 0; i < 5; i++) {
      expect(await enter(i % 2 ? 'bbbb-bbbb' : 'BCDF-GHJK')).toEqual({ status: 400, alert: 'That code is not valid or has expired. Check the code shown on your device and try again.' });
    }
    // even the right code waits now
    const auth = await oidc.initiateDeviceAuthorization(config, { scope: 'openid' });
    expect(await enter(auth.user_code)).toEqual({ status: 429, alert: 'too many wrong codes, please try again later' });
    await drv.screen(TITLE.enter);

    // the device endpoint: a client without the device grant, and an unknown client
    const other = await post(d.url, '/v1/admin/create_client', {
      name: 'Web App', allowed_scopes: ['openid'], redirect_uris: ['https://app.example/cb'], grant_types: ['authorization_code'], is_public: true,
    }, admin());
    const form = (clientId: string) => fetch(`${d.url}/oauth/device_authorization`, {
      method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ client_id: clientId, scope: 'openid' }),
    });
    const refused = await form(other.body.client.client_id as string);
    expect({ status: refused.status, body: await refused.json() }).toEqual({ status: 400, body: { error: 'unauthorized_client', error_description: `the client may not use the ${DEVICE_GRANT} grant` } });
    const unknown = await form('no-such-client');
    expect({ status: unknown.status, error: ((await unknown.json()) as { error: string }).error }).toEqual({ status: 401, error: 'invalid_client' });
  }, 150_000);

  it(`expiry: an unanswered code answers expired_token after ${EXPIRES_IN} s, and the page no longer takes it`, async () => {
    const email = await passwordUser();
    const auth = await oidc.initiateDeviceAuthorization(config, { scope: 'openid' });
    const outcome = oidc.pollDeviceAuthorizationGrant(config, auth, undefined, { signal: AbortSignal.timeout((EXPIRES_IN + 60) * 1000) })
      .then(() => 'tokens', (err: { error?: string }) => err.error ?? String(err));
    expect(await outcome).toBe('expired_token');
    const drv = await drivers.open(browser, d.url);
    await signInVia(drv, auth.verification_uri_complete!, email);
    await drv.click('Continue');
    expect(await drv.alert()).toContain('not valid or has expired');
  }, 240_000);
});
