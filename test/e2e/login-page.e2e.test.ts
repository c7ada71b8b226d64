/**
 * @module test/e2e/login-page
 * The hosted login page (issue 18 item 5), both modes, in Debian's chromium driven by
 * playwright-core against a real deployment with a real SMTP sink: sign-up with TOTP enrolment and a
 * TOTP login, forgot → reset through the emailed link (the `--reset-password-url` default), the
 * `/authorize` return contract, magic link, email-OTP enrolment and challenge, passkey registration
 * and usernameless login. Every screen passes axe-core with no serious or critical violation; every
 * page and asset carries the page's CSP and the browser reports no violation of it.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import type { Browser } from 'playwright-core';
import { startDeployment, startSmtpSink, type Deployment, type Mode, type SmtpSink } from '@gatehouse/testing';
import { launchChromium } from './passkey-browser.ts';
import { address, NEW_PASSWORD, PASSWORD, post } from './email-support.ts';
import { DriverPool, forgotAndReset, type LoginPageDriver, loginPageFlags, magicLink, nextTotp, passwordLogin, signUpWithTotp, startLogoServer, submitSignup, TITLES } from './login-page-support.ts';

const ORG = 'Acme Test';
describe.each(['all', 'split'] as Mode[])('the hosted login page in Chromium (%s)', (mode) => {
  let d: Deployment;
  let sink: SmtpSink;
  let browser: Browser;
  let logo: { url: string; close(): Promise<void> };
  const drivers = new DriverPool();

  beforeAll(async () => {
    [sink, logo, browser] = await Promise.all([startSmtpSink(), startLogoServer(), launchChromium()]);
    d = await startDeployment(mode, {
      urlHost: 'localhost',
      mfa: true,
      flags: loginPageFlags(sink, ORG, logo.url),
    });
  }, 180_000);
  afterAll(async () => {
    await browser?.close();
    await d?.stop();
    await sink?.close();
    await logo?.close();
  });
  /** every driver of a test: axe found nothing serious, CSP was never violated */
  afterEach(() => drivers.checkAndClose());
  const open = (): Promise<LoginPageDriver> => drivers.open(browser, d.url);

  it('serves the page with its CSP on /app, every path under it (history fallback) and its assets', async () => {
    const page = await fetch(`${d.url}/app/some/deep/path?x=1`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    const csp = page.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain(`img-src 'self' data: ${new URL(logo.url).origin}`);
    expect(csp).not.toContain('unsafe-inline');
    expect(csp).toContain("frame-ancestors 'none'");
    expect(page.headers.get('cache-control')).toBe('no-store');
    const html = await page.text();
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)/); // no inline script
    expect(html).toContain('data-gatehouse-config="{&quot;organization_name&quot;:&quot;Acme Test&quot;');
    for (const p of ['/app', '/app/', '/app/login', '/app/reset-password?token=x']) {
      const res = await fetch(`${d.url}${p}`);
      expect([p, res.status, res.headers.get('content-security-policy')]).toEqual([p, 200, csp]);
    }
    const js = html.match(/src="(\/app\/assets\/[^"]+\.js)"/)?.[1];
    const css = html.match(/href="(\/app\/assets\/[^"]+\.css)"/)?.[1];
    for (const [asset, type] of [[js, 'text/javascript'], [css, 'text/css']] as const) {
      const res = await fetch(`${d.url}${asset!}`);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toContain(type);
      expect(res.headers.get('content-security-policy')).toBe(csp);
      expect(res.headers.get('cache-control')).toContain('immutable');
    }
    const missing = await fetch(`${d.url}/app/assets/nope.js`);
    expect([missing.status, await missing.json()]).toEqual([404, { code: 'not_found', message: 'Not Found' }]);
  });

  it('signs up with the TOTP offer (an authenticator code turns it on), signs out, and signs in again with a TOTP code', async () => {
    const drv = await open();
    const email = address('page-signup');
    const { secret } = await signUpWithTotp(drv, ORG, email, PASSWORD);
    expect(secret).toMatch(/^[A-Z2-7]{32}$/);
    expect(await drv.page.locator('main').textContent()).toContain(`Signed in as ${email}`);
    // the organization's name and logo
    await expect(drv.page.locator('header.brand').textContent()).resolves.toBe(ORG);
    expect(await drv.page.locator('header.brand img').evaluate((img: any) => img.complete && img.naturalWidth)).toBe(32);
    // the session is the browser's cookie
    const profile = await drv.page.evaluate(async () => (await fetch('/v1/profile')).json());
    expect(profile).toMatchObject({ email, enrolled_mfa_methods: ['totp'] });

    await drv.click('Sign out');
    await drv.screen(TITLES.login(ORG));
    expect(await drv.status()).toBe('Logged out successfully');
    // a wrong password: the error is announced in the alert region
    await passwordLogin(drv, ORG, email, 'Wr0ng!password');
    expect(await drv.alert()).toBe('invalid credentials');
    await drv.fill('Password', PASSWORD);
    await drv.click('Sign in');
    await drv.screen(TITLES.totp);
    await drv.fill('Code from the app', '000000');
    await drv.click('Verify');
    expect(await drv.alert()).toBe('invalid otp');
    expect(await drv.page.getByLabel('Code from the app').getAttribute('aria-invalid')).toBe('true');
    await drv.fill('Code from the app', await nextTotp(secret));
    await drv.click('Verify');
    await drv.screen(TITLES.signedIn);
  });

  it('a recovery code shown at enrolment completes the TOTP challenge', async () => {
    const drv = await open();
    const email = address('page-recovery');
    const { recoveryCodes } = await signUpWithTotp(drv, ORG, email, PASSWORD);
    expect(recoveryCodes).toHaveLength(10);
    await drv.click('Sign out');
    await drv.screen(TITLES.login(ORG));
    await passwordLogin(drv, ORG, email, PASSWORD);
    await drv.screen(TITLES.totp);
    await drv.click('Use a recovery code');
    await drv.fill('Recovery code', recoveryCodes[0]!);
    await drv.click('Verify');
    await drv.screen(TITLES.signedIn);
  });

  it('works from the keyboard: Tab walks the fields in order, Enter submits, a new screen\'s heading takes the focus', async () => {
    const drv = await open();
    await drv.goto('/app/login');
    await drv.screen(TITLES.login(ORG));
    const focused = (): Promise<string> => drv.page.evaluate(() => {
      const el = (globalThis as any).document.activeElement;
      return `${el.tagName.toLowerCase()}:${el.id || el.textContent}`;
    });
    await drv.page.keyboard.press('Tab');
    expect(await focused()).toBe('input:f-identifier');
    await drv.page.keyboard.type(address('nobody'));
    await drv.page.keyboard.press('Tab');
    expect(await focused()).toBe('input:f-password');
    await drv.page.keyboard.type(PASSWORD);
    await drv.page.keyboard.press('Enter');
    expect(await drv.alert()).toBe('invalid credentials');
    await drv.page.keyboard.press('Tab');
    expect(await focused()).toBe('button:Sign in');
    await drv.page.keyboard.press('Tab');
    expect(await focused()).toBe('a:Forgot your password?');
    await drv.page.keyboard.press('Enter');
    await drv.screen(TITLES.forgot);
    expect(await focused()).toBe(`h1:${TITLES.forgot}`);
  });

  it('forgot password: the emailed link opens /app/reset-password with the token; the new password signs in and returns to /authorize', async () => {
    const email = address('page-reset');
    // an account that declined MFA (G6: later logins pass without it)
    const signup = await post(d.url, '/v1/signup', { email, password: PASSWORD, confirm_password: PASSWORD });
    const mfa = signup.cookies.map((c) => c.split(';')[0]).join('; ');
    expect((await post(d.url, '/v1/skip_mfa_setup', {}, { cookie: mfa })).status).toBe(200);

    const drv = await open();
    const link = await forgotAndReset(drv, sink, ORG, email, NEW_PASSWORD);
    expect(`${link.origin}${link.pathname}`).toBe(`${d.url}/app/reset-password`);
    expect(link.searchParams.get('token')).toMatch(/.{16,}/);
    // the token left the address bar
    expect(new URL(drv.page.url()).search).toBe('');
    expect(await drv.status()).toBe('Password updated successfully. You can now sign in.');

    // the old password is refused; the new one signs in and goes back to /authorize (the contract with /authorize)
    await passwordLogin(drv, ORG, email, PASSWORD);
    expect(await drv.alert()).toBe('invalid credentials');
    const authorize = '/authorize?client_id=gatehouse&response_type=code&state=s%201';
    await passwordLogin(drv, ORG, email, NEW_PASSWORD, `?return_to=${encodeURIComponent(authorize)}`);
    await drv.page.waitForURL(`${d.url}${authorize}`);
    // the session cookie came with it (read from the browser: /authorize answers its own page here, under a CSP with no connect-src)
    const cookie = (await drv.context.cookies(d.url)).map((c) => `${c.name}=${c.value}`).join('; ');
    expect((await fetch(`${d.url}/v1/profile`, { headers: { cookie } })).status).toBe(200);

    // a return_to elsewhere is ignored: the signed-in screen instead
    const other = await open();
    await passwordLogin(other, ORG, email, NEW_PASSWORD, `?return_to=${encodeURIComponent('https://evil.example/authorize')}`);
    await other.screen(TITLES.signedIn);
    expect(other.page.url()).toBe(`${d.url}/app/login`);
    // the reused reset link is refused, with the error announced
    await other.goto(link.toString());
    await other.screen(TITLES.reset);
    await other.fill('New password', `${NEW_PASSWORD}x`);
    await other.fill('Confirm new password', `${NEW_PASSWORD}x`);
    await other.click('Set new password');
    expect(await other.alert()).toBe('invalid token');
  });

  it('magic link: the emailed link signs a new user in after the MFA offer is skipped', async () => {
    const drv = await open();
    const email = address('page-magic');
    await magicLink(drv, sink, ORG, email);
    expect(await drv.page.locator('main').textContent()).toContain(`Signed in as ${email}`);
    // no token stays in the address bar
    expect(drv.page.url()).toBe(`${d.url}/app/login`);
  });

  it('email OTP: chosen in the MFA offer (code from the SMTP sink), then the challenge of the next login', async () => {
    const drv = await open();
    const email = address('page-otp');
    await drv.goto('/app/signup');
    await drv.screen(TITLES.signup);
    await submitSignup(drv, email, PASSWORD);
    await drv.click('Codes by email');
    await drv.screen(TITLES.emailOtp);
    expect(await drv.status()).toBe('Check your email for the verification code');
    await drv.fill('One-time code', sink.otpOf(await sink.waitForMail(email)));
    await drv.click('Verify');
    await drv.screen(TITLES.signedIn);

    await drv.click('Sign out');
    await drv.screen(TITLES.login(ORG));
    await passwordLogin(drv, ORG, email, PASSWORD);
    await drv.screen(TITLES.emailOtp);
    expect(await drv.status()).toBe('Please check email inbox for the OTP');
    await drv.fill('One-time code', sink.otpOf(await sink.waitForMail(email, { count: 2 })).toLowerCase());
    await drv.click('Verify');
    await drv.screen(TITLES.signedIn);
  });

  it('passkey: registered in the MFA offer, then a usernameless sign-in with it', async () => {
    const drv = await open();
    await drv.addAuthenticator();
    const email = address('page-passkey');
    await drv.goto('/app/signup');
    await drv.screen(TITLES.signup);
    await submitSignup(drv, email, PASSWORD);
    await drv.click('A passkey on this device');
    await drv.screen(TITLES.signedIn);
    await drv.click('Sign out');
    await drv.screen(TITLES.login(ORG));
    await drv.click('Sign in with a passkey');
    await drv.screen(TITLES.signedIn);
    expect(await drv.page.locator('main').textContent()).toContain(`Signed in as ${email}`);
  });
});
