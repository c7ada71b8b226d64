/**
 * @module test/e2e/oauth-browser
 * The headline of issue 18, both modes: a real relying party (`openid-client`) does discovery and
 * the authorization code flow with PKCE against `/authorize` in Debian's chromium, where the hosted
 * login page (`/app`) is filled in by playwright-core as a person would (email and password; and
 * with the MFA gate: a TOTP code from otplib). The browser ends on the RP's redirect URI, a small
 * HTTP server of the test's own on 127.0.0.1 that records the callback URL; openid-client then
 * exchanges the code, checks the ID token (signature, `iss`, `aud`, `nonce`; the test adds `at_hash`
 * per OIDC Core §3.1.3.6, `auth_time`, `amr`, `sid`), calls userinfo, refreshes and revokes.
 * `prompt=login` (OIDC Core §3.1.2.1) shows the sign-in form although the browser has a session;
 * without it the session is reused and no page is shown.
 */
import { createHash } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import * as oidc from 'openid-client';
import { decodeProtectedHeader } from 'jose';
import type { Browser } from 'playwright-core';
import { startDeployment, startSmtpSink, type Deployment, type Mode, type SmtpSink } from '@gatehouse/testing';
import { launchChromium } from './passkey-browser.ts';
import { address, PASSWORD, post } from './email-support.ts';
import { DriverPool, type LoginPageDriver, loginPageFlags, nextTotp, signUpWithTotp, startLogoServer, TITLES } from './login-page-support.ts';
import { startRpServer } from './oauth-support.ts';

const ORG = 'Acme RP Test';

/** OIDC Core §3.1.3.6: base64url of the left half of the hash of the access token, the hash of the ID token's `alg`. */
function atHashOf(accessToken: string, alg: string): string {
  const bits = alg.endsWith('512') ? 'sha512' : alg.endsWith('384') ? 'sha384' : 'sha256';
  const digest = createHash(bits).update(accessToken, 'ascii').digest();
  return digest.subarray(0, digest.length / 2).toString('base64url');
}

const nowS = (): number => Math.floor(Date.now() / 1000);

describe.each(['all', 'split'] as Mode[])('openid-client through the hosted login page in Chromium (%s)', (mode) => {
  let d: Deployment;
  let sink: SmtpSink;
  let browser: Browser;
  let logo: { url: string; close(): Promise<void> };
  let rpServer: Awaited<ReturnType<typeof startRpServer>>;
  let config: oidc.Configuration;
  const drivers = new DriverPool();

  beforeAll(async () => {
    [sink, logo, browser, rpServer] = await Promise.all([startSmtpSink(), startLogoServer(), launchChromium(), startRpServer()]);
    d = await startDeployment(mode, { urlHost: 'localhost', mfa: true, flags: loginPageFlags(sink, ORG, logo.url) });
    const created = await post(d.url, '/v1/admin/create_client', {
      name: 'browser relying party', allowed_scopes: ['openid', 'profile', 'email', 'offline_access'],
      redirect_uris: [rpServer.callback], grant_types: ['authorization_code', 'refresh_token'], is_first_party: true,
    }, { 'x-service-admin-secret': d.adminSecret });
    expect(created.status).toBe(200);
    const client = created.body.client as { client_id: string };
    config = await oidc.discovery(new URL(d.url), client.client_id, { redirect_uris: [rpServer.callback] },
      oidc.ClientSecretBasic(created.body.client_secret as string), { execute: [oidc.allowInsecureRequests] });
  }, 180_000);
  afterAll(async () => {
    await browser?.close();
    await d?.stop();
    await Promise.all([sink?.close(), logo?.close(), rpServer?.close()]);
  });
  /** every page seen: no serious axe violation, no CSP violation */
  afterEach(() => drivers.checkAndClose());
  const open = (): Promise<LoginPageDriver> => drivers.open(browser, d.url);

  /** A password user who declined MFA (behaviour.md §4.1 G6), created through /v1 (setup, not the flow under test). */
  async function passwordUser(): Promise<string> {
    const email = address('rp-user');
    const signup = await post(d.url, '/v1/signup', { email, password: PASSWORD, confirm_password: PASSWORD });
    expect(signup.status).toBe(200);
    const mfa = signup.cookies.map((c) => c.split(';')[0]).join('; ');
    expect((await post(d.url, '/v1/skip_mfa_setup', {}, { cookie: mfa })).status).toBe(200);
    return email;
  }

  /** The RP starts a code + PKCE request and sends the browser to `/authorize`. */
  async function startFlow(drv: LoginPageDriver, extra: Record<string, string> = {}) {
    const verifier = oidc.randomPKCECodeVerifier();
    const state = oidc.randomState();
    const nonce = oidc.randomNonce();
    const url = oidc.buildAuthorizationUrl(config, {
      redirect_uri: rpServer.callback, scope: 'openid profile email offline_access', state, nonce,
      code_challenge: await oidc.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256', ...extra,
    });
    await drv.goto(url.href);
    return { verifier, state, nonce };
  }

  /** Waits for the browser to land on the RP's redirect URI; the RP server must have seen that same URL. */
  async function landed(drv: LoginPageDriver): Promise<URL> {
    await drv.page.waitForURL((u) => u.href.startsWith(`${rpServer.callback}?`), { timeout: 15_000 });
    const callback = new URL(drv.page.url());
    expect(rpServer.seen.map((u) => u.href)).toContain(callback.href);
    return callback;
  }

  /** Signs in on the hosted page the browser was sent to (it must show the sign-in form). */
  async function signInOnPage(drv: LoginPageDriver, email: string): Promise<void> {
    await drv.screen(TITLES.login(ORG));
    expect(new URL(drv.page.url()).pathname).toBe('/app/login');
    await drv.fill('Email or phone number', email);
    await drv.fill('Password', PASSWORD);
    await drv.click('Sign in');
  }

  /** The token exchange by openid-client (PKCE verifier, state, nonce checked) and the ID token checks of the issue. */
  async function exchange(callback: URL, flow: { verifier: string; state: string; nonce: string }, expectAmr: string[], since: number) {
    const tokens = await oidc.authorizationCodeGrant(config, callback, { pkceCodeVerifier: flow.verifier, expectedState: flow.state, expectedNonce: flow.nonce });
    const claims = tokens.claims()!;
    const { alg } = decodeProtectedHeader(tokens.id_token!);
    expect(claims).toMatchObject({ iss: d.url, aud: config.clientMetadata().client_id, nonce: flow.nonce, amr: expectAmr, sid: expect.any(String) });
    expect(claims.at_hash).toBe(atHashOf(tokens.access_token, alg!));
    expect(claims.auth_time).toBeGreaterThanOrEqual(since);
    expect(claims.auth_time).toBeLessThanOrEqual(nowS());
    expect(tokens.refresh_token).toEqual(expect.any(String));
    return { tokens, claims };
  }

  /** A new browser: the RP's request, the page's form signed in with a password, the callback. */
  async function passwordFlow(email: string) {
    const drv = await open();
    const since = nowS();
    const flow = await startFlow(drv);
    await signInOnPage(drv, email);
    return { drv, since, flow, callback: await landed(drv) };
  }

  it('email + password on the page: code + PKCE, ID token (nonce, at_hash, auth_time, amr, sid), userinfo, refresh, revocation', async () => {
    const email = await passwordUser();
    const { flow, callback, since } = await passwordFlow(email);
    expect(callback.searchParams.get('state')).toBe(flow.state);
    const { tokens, claims } = await exchange(callback, flow, ['pwd'], since);

    const info = await oidc.fetchUserInfo(config, tokens.access_token, claims.sub);
    expect(info).toMatchObject({ sub: claims.sub, email, email_verified: true });

    // refresh: a new refresh token and ID token for the same user and session
    const refreshed = await oidc.refreshTokenGrant(config, tokens.refresh_token!);
    expect(refreshed.refresh_token).not.toBe(tokens.refresh_token);
    expect(refreshed.claims()).toMatchObject({ sub: claims.sub, sid: claims.sid, auth_time: claims.auth_time });
    expect((await oidc.tokenIntrospection(config, refreshed.access_token)).active).toBe(true);

    // revocation (RFC 7009) of the refresh token ends what it issued
    await oidc.tokenRevocation(config, refreshed.refresh_token!);
    expect((await oidc.tokenIntrospection(config, refreshed.access_token)).active).toBe(false);
    await expect(oidc.fetchUserInfo(config, refreshed.access_token, claims.sub)).rejects.toBeDefined();
    await expect(oidc.refreshTokenGrant(config, refreshed.refresh_token!)).rejects.toMatchObject({ error: 'invalid_grant' });
  });

  it('the MFA gate: a TOTP user signs in on the page with password and an authenticator code; amr says so', async () => {
    const enrol = await open();
    const email = address('rp-totp');
    const { secret } = await signUpWithTotp(enrol, ORG, email, PASSWORD);

    const drv = await open();
    const since = nowS();
    const flow = await startFlow(drv);
    await signInOnPage(drv, email);
    await drv.screen(TITLES.totp);
    // no code yet: the RP has seen nothing of this flow
    expect(rpServer.seen.some((u) => u.searchParams.get('state') === flow.state)).toBe(false);
    await drv.fill('Code from the app', await nextTotp(secret));
    await drv.click('Verify');
    const callback = await landed(drv);
    const { tokens, claims } = await exchange(callback, flow, ['pwd', 'otp', 'mfa'], since);
    expect(await oidc.fetchUserInfo(config, tokens.access_token, claims.sub)).toMatchObject({ email });
  });

  it('a session is reused without the page; prompt=login shows the sign-in form anyway and opens a new session', async () => {
    const email = await passwordUser();
    const { drv, since, flow: first, callback } = await passwordFlow(email);
    const firstIds = (await exchange(callback, first, ['pwd'], since)).claims;

    // single sign-on: the browser's session answers /authorize at once, no page in between; the same login
    const sso = await startFlow(drv);
    const ssoCallback = await landed(drv);
    const ssoIds = (await exchange(ssoCallback, sso, ['pwd'], since)).claims;
    expect({ sub: ssoIds.sub, auth_time: ssoIds.auth_time }).toEqual({ sub: firstIds.sub, auth_time: firstIds.auth_time });

    // prompt=login: the page shows the form although the session is alive, and the login is a new one (a later auth_time)
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    const again = await startFlow(drv, { prompt: 'login' });
    expect(new URL(drv.page.url()).pathname).toBe('/app/login');
    await signInOnPage(drv, email);
    const forced = (await exchange(await landed(drv), again, ['pwd'], firstIds.auth_time! + 1)).claims;
    expect(forced.sub).toBe(firstIds.sub);
  });
});
