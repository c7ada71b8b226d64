/**
 * @module test/e2e/account-console
 * The account console at `/app/account` (issue 33 §2) and its link from the signed-in screen (§3), in
 * Debian's chromium driven by playwright-core against a real deployment in both modes (passkeys are the
 * mfa service's, consents authn's, the page the gateway's): a signed-out visit
 * goes through the sign-in form and back; the profile is edited; the password is changed (a wrong
 * current password is refused and announced first); TOTP is enrolled and re-enrolled from the console,
 * each time with its recovery codes in full (download link, confirmation); a passkey is added with a
 * virtual authenticator and deleted; a third-party OAuth client's consent, given at `/authorize` to an
 * openid-client relying party, is listed and revoked; the account is deactivated after a confirmation.
 * The sessions section lists this browser and the sessions opened over REST with their devices, signs
 * one out and then all the others (their tokens fail at once, this browser stays signed in; the same
 * list over REST and GraphQL); the email and the phone number are changed (the server signs the user out
 * everywhere, the new identifier signs in); codes by email and by text message are turned on with the
 * code the SMTP and Twilio sinks received.
 * Every screen passes axe-core with no serious or critical violation and raises no CSP violation.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import * as oidc from 'openid-client';
import { generate } from 'otplib';
import type { Browser } from 'playwright-core';
import { startDeployment, startSmtpSink, startTwilioSink, type Deployment, type Mode, type SmtpSink, type TwilioSink } from '@gatehouse/testing';
import { launchChromium } from './passkey-browser.ts';
import { address, bearer, get, NEW_PASSWORD, PASSWORD, post } from './email-support.ts';
import { closeRig, DriverPool, type LoginPageDriver, loginPageFlags, nextTotp, passwordLogin, startLogoServer, TITLES } from './login-page-support.ts';
import { startRpServer } from './oauth-support.ts';

const ORG = 'Acme Account Test';
const APP = 'Photo Printer';
const ACCOUNT = 'Your account';
const PHONE_UA = 'Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Mobile/15E148 Safari/604.1';
const DESKTOP_UA = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:133.0) Gecko/20100101 Firefox/133.0';

/** The value of `read` once `ok` holds for it (polled every 100 ms), else its last value after 15 s. */
async function eventually<T>(read: () => Promise<T>, ok: (v: T) => boolean): Promise<T> {
  const deadline = Date.now() + 15_000;
  let v = await read();
  while (!ok(v) && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 100));
    v = await read();
  }
  return v;
}

/**
 * The page's `<main>` text once it includes `text` (a page updates after its API call answers, while its
 * title stays the same), or its last text when it never did within `eventually`'s time.
 */
async function mainShows(drv: { page: { locator(selector: string): { textContent(): Promise<string | null> } } }, text: string): Promise<string> {
  return (await eventually(() => drv.page.locator('main').textContent(), (v) => (v ?? '').includes(text))) ?? '';
}

describe.each(['all', 'split'] as Mode[])('the account console in Chromium (%s)', (mode) => {
  let d: Deployment;
  let sink: SmtpSink;
  let twilio: TwilioSink;
  let browser: Browser;
  let logo: { url: string; close(): Promise<void> };
  let rpServer: Awaited<ReturnType<typeof startRpServer>>;
  const drivers = new DriverPool();
  const admin = (): Record<string, string> => ({ 'x-service-admin-secret': d.adminSecret });

  beforeAll(async () => {
    [sink, twilio, logo, browser, rpServer] = await Promise.all([startSmtpSink(), startTwilioSink(), startLogoServer(), launchChromium(), startRpServer()]);
    d = await startDeployment(mode, { urlHost: 'localhost', mfa: true, readyTimeoutMs: 120_000, flags: [...loginPageFlags(sink, ORG, logo.url), ...twilio.flags()] });
  }, 180_000);
  afterAll(() => closeRig({ browser, deployment: d, others: [sink, twilio, logo, rpServer] }));
  afterEach(() => drivers.checkAndClose());

  /** A password user who declined the MFA offer (signed up over REST). */
  async function passwordUser(tag: string): Promise<string> {
    const email = address(tag);
    const signup = await post(d.url, '/v1/signup', { email, password: PASSWORD, confirm_password: PASSWORD });
    expect(signup.status).toBe(200);
    const mfa = signup.cookies.map((c) => c.split(';')[0]).join('; ');
    expect((await post(d.url, '/v1/skip_mfa_setup', {}, { cookie: mfa })).status).toBe(200);
    return email;
  }

  /** Signs in on the page and opens the console from the signed-in screen's link. */
  async function openConsole(tag: string): Promise<{ drv: LoginPageDriver; email: string }> {
    const email = await passwordUser(tag);
    const drv = await drivers.open(browser, d.url);
    await passwordLogin(drv, ORG, email, PASSWORD);
    await drv.screen(TITLES.signedIn);
    await drv.follow('Manage your account');
    await drv.screen(ACCOUNT);
    expect(new URL(drv.page.url()).pathname).toBe('/app/account');
    return { drv, email };
  }

  const section = (drv: LoginPageDriver, name: string) => drv.page.getByRole('region', { name, exact: true });

  it('a signed-out visit signs in first and comes back; the profile is edited', async () => {
    const email = await passwordUser('acct-profile');
    const drv = await drivers.open(browser, d.url);
    await drv.goto('/app/account');
    await drv.screen(TITLES.login(ORG));
    expect(new URL(drv.page.url()).searchParams.get('return_to')).toBe('/app/account');
    await drv.fill('Email or phone number', email);
    await drv.fill('Password', PASSWORD);
    await drv.click('Sign in');
    await drv.screen(ACCOUNT);
    expect(await mainShows(drv, `Signed in as ${email}`)).toContain(`Signed in as ${email}`);

    // unchanged: nothing is sent
    await drv.click('Save profile');
    expect(await eventually(() => drv.status(), (v) => v === 'Nothing was changed.')).toBe('Nothing was changed.');
    await drv.fill('Given name', 'Ada');
    await drv.fill('Family name', 'Lovelace');
    await drv.fill('Date of birth', '1815-12-10');
    await drv.click('Save profile');
    expect(await eventually(() => drv.status(), (v) => v === 'Profile details updated successfully.')).toBe('Profile details updated successfully.');
    const profile = await drv.page.evaluate(async () => (await fetch('/v1/profile')).json());
    expect(profile).toMatchObject({ email, given_name: 'Ada', family_name: 'Lovelace', birthdate: '1815-12-10' });
    // a reload shows the saved values
    await drv.page.reload();
    await drv.screen(ACCOUNT);
    expect(await drv.page.getByLabel('Given name', { exact: true }).inputValue()).toBe('Ada');
  });

  it('changes the password; a wrong current password is refused and announced', async () => {
    const { drv, email } = await openConsole('acct-password');
    await drv.fill('Current password', 'Wr0ng!password');
    await drv.fill('New password', NEW_PASSWORD);
    await drv.fill('Confirm new password', NEW_PASSWORD);
    await drv.click('Change password');
    expect(await drv.alert()).toBe('incorrect old password');
    expect(await drv.page.getByLabel('Current password', { exact: true }).getAttribute('aria-invalid')).toBe('true');
    // only the failed form is marked
    expect(await drv.page.getByLabel('Given name', { exact: true }).getAttribute('aria-invalid')).toBeNull();
    await drv.screen(ACCOUNT);
    await drv.fill('Current password', PASSWORD);
    await drv.fill('New password', NEW_PASSWORD);
    await drv.fill('Confirm new password', NEW_PASSWORD);
    await drv.click('Change password');
    expect(await eventually(() => drv.status(), (v) => v === 'Profile details updated successfully.')).toBe('Profile details updated successfully.');
    expect(await drv.page.getByLabel('Current password', { exact: true }).inputValue()).toBe('');
    expect((await post(d.url, '/v1/login', { email, password: PASSWORD })).status).toBe(401);
    expect((await post(d.url, '/v1/login', { email, password: NEW_PASSWORD })).status).toBe(200);
  });

  it('enrols TOTP with its recovery codes in full, then replaces key and codes (the old codes stop working)', async () => {
    const { drv, email } = await openConsole('acct-totp');
    const mfa = section(drv, 'Two-step verification');
    expect(await mfa.textContent()).toContain('No second step is set up');
    await drv.click('Set up an authenticator app');
    await drv.screen(ACCOUNT);
    const secret = (await drv.page.locator('code.secret').textContent()) ?? '';
    expect(secret).toMatch(/^[A-Z2-7]{32}$/);
    await drv.fill('Code from the app', '000000');
    await drv.click('Verify and turn on');
    expect(await drv.alert()).toBe('invalid otp');
    await drv.fill('Code from the app', await generate({ secret }));
    await drv.click('Verify and turn on');
    await drv.page.getByRole('heading', { name: 'Save your recovery codes' }).waitFor();
    await drv.screen(ACCOUNT);
    const first = await drv.page.getByRole('list', { name: 'Recovery codes' }).locator('code').allTextContents();
    expect(first).toHaveLength(10);
    const href = decodeURIComponent((await drv.page.getByRole('link', { name: 'Download the codes' }).getAttribute('href')) ?? '');
    for (const c of first) expect(href).toContain(c);
    await expect(drv.page.getByRole('button', { name: 'Continue' }).isDisabled()).resolves.toBe(true);
    await drv.page.getByLabel('I have saved these codes', { exact: true }).check();
    await drv.click('Continue');
    expect(await eventually(() => mfa.textContent(), (v) => (v ?? '').includes('Turned on with: authenticator app.'))).toContain('Turned on with: authenticator app.');

    // re-enrolment: a new key and a new set of codes
    await drv.click('New authenticator key and recovery codes');
    await drv.screen(ACCOUNT);
    const secret2 = (await drv.page.locator('code.secret').textContent()) ?? '';
    expect(secret2).not.toBe(secret);
    await drv.fill('Code from the app', await nextTotp(secret2));
    await drv.click('Verify and turn on');
    await drv.page.getByRole('heading', { name: 'Save your recovery codes' }).waitFor();
    const second = await drv.page.getByRole('list', { name: 'Recovery codes' }).locator('code').allTextContents();
    expect(second).toHaveLength(10);
    expect(second.filter((c) => first.includes(c))).toEqual([]);
    await drv.page.getByLabel('I have saved these codes', { exact: true }).check();
    await drv.click('Continue');
    await drv.screen(ACCOUNT);

    // an old recovery code is refused at sign-in; a new one is accepted
    const login = await post(d.url, '/v1/login', { email, password: PASSWORD });
    expect(login.body.should_show_totp_screen).toBe(true);
    const cookie = { cookie: login.cookies.map((c) => c.split(';')[0]).join('; ') };
    expect((await post(d.url, '/v1/verify_otp', { otp: first[0], is_totp: true }, cookie)).body).toMatchObject({ message: 'invalid otp' });
    const ok = await post(d.url, '/v1/verify_otp', { otp: second[0], is_totp: true }, cookie);
    expect([ok.status, typeof ok.body.access_token]).toEqual([200, 'string']);
  });

  it('adds a passkey (virtual authenticator), lists it, and deletes it', async () => {
    const { drv } = await openConsole('acct-passkey');
    await drv.addAuthenticator();
    const keys = section(drv, 'Passkeys');
    expect(await keys.textContent()).toContain('You have no passkeys.');
    await drv.fill('Name for a new passkey', 'Work laptop');
    await drv.click('Add a passkey');
    expect(await eventually(() => drv.status(), (v) => v === 'Passkey registered successfully.')).toBe('Passkey registered successfully.');
    expect(await eventually(() => keys.getByRole('list', { name: 'Your passkeys' }).locator('strong').allTextContents(), (v) => JSON.stringify(v) === JSON.stringify(['Work laptop']))).toEqual(['Work laptop']);
    await drv.screen(ACCOUNT);
    await drv.click('Delete passkey Work laptop');
    expect(await eventually(() => drv.status(), (v) => v === 'Passkey deleted successfully.')).toBe('Passkey deleted successfully.');
    expect(await eventually(() => keys.textContent(), (v) => (v ?? '').includes('You have no passkeys.'))).toContain('You have no passkeys.');
    const listed = await drv.page.evaluate(async () => (await fetch('/v1/webauthn_credentials', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })).json());
    expect(listed).toEqual({ webauthn_credentials: [] });
  });

  it('lists an OAuth client the user allowed at /authorize and removes its access', async () => {
    const created = await post(d.url, '/v1/admin/create_client', {
      name: APP, allowed_scopes: ['openid', 'profile', 'email'], redirect_uris: [rpServer.callback], grant_types: ['authorization_code'],
    }, admin());
    expect(created.status).toBe(200);
    const config = await oidc.discovery(new URL(d.url), created.body.client.client_id as string, { redirect_uris: [rpServer.callback] },
      oidc.ClientSecretBasic(created.body.client_secret as string), { execute: [oidc.allowInsecureRequests] });
    const { drv } = await openConsole('acct-apps');
    expect(await section(drv, 'Connected applications').textContent()).toContain('No application has access');
    const authorize = async (): Promise<void> => {
      const url = oidc.buildAuthorizationUrl(config, {
        redirect_uri: rpServer.callback, scope: 'openid profile email', state: oidc.randomState(),
        code_challenge: await oidc.calculatePKCECodeChallenge(oidc.randomPKCECodeVerifier()), code_challenge_method: 'S256',
      });
      await drv.goto(url.href);
    };
    await authorize();
    await drv.screen(`${APP} wants to access your account`);
    await drv.click('Allow');
    await drv.page.waitForURL((u) => u.href.startsWith(`${rpServer.callback}?`), { timeout: 15_000 });

    await drv.goto('/app/account');
    await drv.screen(ACCOUNT);
    const apps = section(drv, 'Connected applications');
    expect(await eventually(() => apps.getByRole('list', { name: 'Applications with access' }).locator('strong').allTextContents(), (v) => JSON.stringify(v) === JSON.stringify([APP]))).toEqual([APP]);
    expect(await apps.textContent()).toContain('email, openid, profile');
    await drv.click(`Remove access for ${APP}`);
    expect(await eventually(() => drv.status(), (v) => v === `${APP} no longer has access to your account.`)).toBe(`${APP} no longer has access to your account.`);
    expect(await eventually(() => apps.textContent(), (v) => (v ?? '').includes('No application has access'))).toContain('No application has access');
    // the next request asks again
    await authorize();
    await drv.screen(`${APP} wants to access your account`);
  });

  it('lists the sessions with their devices; signs out one, then all the others, whose tokens then fail', async () => {
    const { drv, email } = await openConsole('acct-sessions');
    const login = async (ua: string): Promise<string> => {
      const r = await post(d.url, '/v1/login', { email, password: PASSWORD }, { 'user-agent': ua });
      expect(r.status).toBe(200);
      return r.body.access_token as string;
    };
    const phone = await login(PHONE_UA);
    const desktop = await login(DESKTOP_UA);
    await drv.page.reload();
    await drv.screen(ACCOUNT);
    const sessions = section(drv, 'Where you are signed in');
    const titles = () => sessions.getByRole('list', { name: 'Your sessions' }).locator('strong').allTextContents();
    // the signup's session (REST, no browser), this browser, the phone and the desktop
    expect(await eventually(titles, (v) => v.length === 4)).toHaveLength(4);
    const listed = await titles();
    expect(listed[0]).toBe('Chrome on Linux (this device)');
    expect(listed).toEqual(expect.arrayContaining(['Safari on iOS', 'Firefox on Windows']));
    expect(await sessions.textContent()).toMatch(/IP address (127\.0\.0\.1|::1|::ffff:127\.0\.0\.1)/);

    // the same list over REST and GraphQL, for the phone's token
    const rest = await get(d.url, '/v1/sessions', bearer(phone));
    expect(rest.status).toBe(200);
    expect(rest.body.sessions[0]).toMatchObject({ is_current: true, user_agent: PHONE_UA, login_method: 'basic_auth' });
    expect(rest.body.sessions).toHaveLength(4);
    const gql = await post(d.url, '/graphql', { query: 'query { sessions { sessions { user_agent is_current } } }' }, bearer(phone));
    expect(gql.body.data.sessions.sessions[0]).toEqual({ user_agent: PHONE_UA, is_current: true });
    expect((await post(d.url, '/v1/revoke_session', { id: 'not-a-session' }, bearer(phone))).body).toEqual({ code: 'not_found', message: 'session not found' });

    await drv.click('Sign out Safari on iOS');
    expect(await eventually(() => drv.status(), (v) => v === 'Safari on iOS was signed out.')).toBe('Safari on iOS was signed out.');
    expect(await eventually(titles, (v) => v.length === 3)).not.toContain('Safari on iOS');
    expect((await get(d.url, '/v1/profile', bearer(phone))).status).toBe(401);
    expect((await get(d.url, '/v1/profile', bearer(desktop))).status).toBe(200);
    await drv.screen(ACCOUNT);

    await drv.click('Sign out all other sessions');
    expect(await eventually(() => drv.status(), (v) => v === 'Signed out of 2 other sessions.')).toBe('Signed out of 2 other sessions.');
    expect(await eventually(titles, (v) => v.length === 1)).toEqual(['Chrome on Linux (this device)']);
    expect((await get(d.url, '/v1/profile', bearer(desktop))).status).toBe(401);
    // this browser is still signed in
    const profile = await drv.page.evaluate(async () => (await fetch('/v1/profile')).status);
    expect(profile).toBe(200);
    await expect(drv.page.getByRole('button', { name: 'Sign out all other sessions', exact: true }).count()).resolves.toBe(0);
  }, 120_000);

  it('changes the email address: signed out everywhere, the new address signs in and the old one no longer does', async () => {
    const { drv, email } = await openConsole('acct-email');
    const other = await post(d.url, '/v1/login', { email, password: PASSWORD }, { 'user-agent': PHONE_UA });
    await drv.fill('New email address', email);
    await drv.click('Change email');
    expect(await drv.alert()).toBe('That is already your current value.');
    const next = address('acct-email-new');
    await drv.fill('New email address', next);
    await drv.click('Change email');
    await drv.screen(TITLES.login(ORG));
    expect(await eventually(() => drv.status(), (v) => v.startsWith('Profile details updated successfully.'))).toMatch(/^Profile details updated successfully\./);
    expect((await get(d.url, '/v1/profile', bearer(other.body.access_token as string))).status).toBe(401);
    expect((await post(d.url, '/v1/login', { email, password: PASSWORD })).status).toBe(401);
    const again = await post(d.url, '/v1/login', { email: next, password: PASSWORD });
    expect(again.status).toBe(200);
    expect(again.body.user.email).toBe(next);
  }, 120_000);

  it('changes the phone number, then turns on codes by text message and by email with the codes received', async () => {
    const { drv, email } = await openConsole('acct-phone');
    const mfa = section(drv, 'Two-step verification');
    // no phone number yet: only email codes are offered
    await expect(drv.page.getByRole('button', { name: 'Get codes by text message', exact: true }).count()).resolves.toBe(0);
    await drv.click('Get codes by email');
    await drv.screen(ACCOUNT);
    expect(await mainShows(drv, `We sent a code to ${email}`)).toContain(`We sent a code to ${email}`);
    await drv.fill('Code you received', 'ZZZZZZ');
    await drv.click('Verify and turn on');
    expect(await drv.alert()).toBe('invalid otp');
    await drv.fill('Code you received', sink.otpOf(await sink.waitForMail(email)));
    await drv.click('Verify and turn on');
    expect(await eventually(() => drv.status(), (v) => v === 'Codes by email turned on.')).toBe('Codes by email turned on.');
    expect(await eventually(() => mfa.textContent(), (v) => (v ?? '').includes('codes by email'))).toContain('Turned on with: codes by email');
    await drv.screen(ACCOUNT);

    const number = `+1415555${String(Math.floor(Math.random() * 10_000)).padStart(4, '0')}`;
    await drv.fill('New phone number', number);
    await drv.click('Change phone number');
    await drv.screen(TITLES.login(ORG));
    expect(await eventually(() => drv.status(), (v) => v.startsWith('Profile details updated successfully.'))).toMatch(/^Profile details updated successfully\./);
    // codes by email are on now: the sign-in asks for one
    await passwordLogin(drv, ORG, email, PASSWORD);
    await drv.screen(TITLES.emailOtp);
    await drv.fill('One-time code', sink.otpOf(await sink.waitForMail(email, { count: 2 })));
    await drv.click('Verify');
    await drv.screen(TITLES.signedIn);
    await drv.goto('/app/account');
    await drv.screen(ACCOUNT);
    expect(await mainShows(drv, number)).toContain(number);
    await drv.click('Get codes by text message');
    await drv.screen(ACCOUNT);
    expect(await mainShows(drv, `We sent a code to ${number}`)).toContain(`We sent a code to ${number}`);
    await drv.fill('Code you received', twilio.otpOf(await twilio.waitForSms(number)));
    await drv.click('Verify and turn on');
    expect(await eventually(() => drv.status(), (v) => v === 'Codes by text message turned on.')).toBe('Codes by text message turned on.');
    expect(await eventually(() => mfa.textContent(), (v) => (v ?? '').includes('codes by text message'))).toContain('codes by text message');
  }, 120_000);

  it('deactivates the account only after the confirmation; sign-in is then refused', async () => {
    const { drv, email } = await openConsole('acct-deactivate');
    const button = drv.page.getByRole('button', { name: 'Deactivate my account', exact: true });
    expect(await button.isDisabled()).toBe(true);
    await drv.page.getByLabel('I understand that I will not be able to sign in again', { exact: true }).check();
    await button.click();
    await drv.screen('Account deactivated');
    expect(await mainShows(drv, 'user account deactivated successfully')).toContain('user account deactivated successfully');
    const login = await post(d.url, '/v1/login', { email, password: PASSWORD });
    expect(login.status).toBeGreaterThanOrEqual(400);
    // the session is gone: the console asks to sign in
    await drv.goto('/app/account');
    await drv.screen(TITLES.login(ORG));
  });
});
