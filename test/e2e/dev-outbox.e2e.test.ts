/**
 * @module test/e2e/dev-outbox
 * Issue 33 §3 and §4 against real all-in-one servers, in Debian's Chromium with playwright-core:
 * - the development outbox: with `--env=development` and neither SMTP nor Twilio, the sign-up
 *   verification mail and an SMS one-time code are kept, logged, listed by `GET /v1/admin/dev_outbox`
 *   (401 without the super-admin) and shown on `/app/dev-outbox`, where the link and the code finish
 *   the flows; a production server still answers "email service not enabled" and refuses the route;
 * - the recovery codes after TOTP enrolment, in full, downloadable and copyable, behind "I have saved
 *   these codes";
 * - `GET /` sends a browser to `/app`, or to the GraphQL playground without the login page.
 * Every screen passes axe-core with no serious or critical violation and reports no CSP violation.
 */
import { readFile } from 'node:fs/promises';
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import type { Browser } from 'playwright-core';
import { generate } from 'otplib';
import { startDeployment, type Deployment } from '@gatehouse/testing';
import { launchChromium } from './passkey-browser.ts';
import { address, get, PASSWORD, post } from './email-support.ts';
import { DriverPool, type LoginPageDriver, submitSignup, TITLES } from './login-page-support.ts';

const ORG = 'Gatehouse';
/** A fresh E.164 number in the fictional 555 range. */
const phone = (): string => `+1555${String(Math.floor(Math.random() * 1e7)).padStart(7, '0')}`;

/** Signs up with `identifier` (an email address or a phone number) on `/app/signup`, up to the screen `next`. */
async function signUpOnPage(drv: LoginPageDriver, identifier: string, next: string): Promise<void> {
  await drv.goto('/app/signup');
  await drv.screen(TITLES.signup);
  await drv.fill('Email or phone number', identifier);
  await drv.fill('Password', PASSWORD);
  await drv.fill('Confirm password', PASSWORD);
  await drv.click('Create account');
  await drv.screen(next);
}

/** Opens `/app/dev-outbox` and signs in as the super-admin when the page asks for the secret. */
async function openOutbox(drv: LoginPageDriver, adminSecret: string): Promise<void> {
  await drv.goto('/app/dev-outbox');
  await drv.screen(TITLES.devOutbox);
  const secret = drv.page.getByLabel('Admin secret', { exact: true });
  if (await secret.isVisible()) {
    await secret.fill(adminSecret);
    await drv.click('Open the outbox');
  }
  await drv.page.getByRole('list', { name: 'Kept messages' }).waitFor();
  await drv.screen(TITLES.devOutbox);
}

/** The kept message addressed to `to` on the outbox page (its `<article>`), once it is listed. */
async function messageTo(drv: LoginPageDriver, to: string) {
  const article = drv.page.getByRole('article').filter({ hasText: to });
  for (let i = 0; i < 30 && (await article.count()) === 0; i++) {
    await new Promise((r) => setTimeout(r, 300));
    await drv.click('Refresh');
  }
  return article.first();
}

describe('the development outbox and the finished login page (issue 33 §3, §4)', () => {
  let dev: Deployment;
  let prod: Deployment;
  let noPage: Deployment;
  let browser: Browser;
  const drivers = new DriverPool();

  beforeAll(async () => {
    // one after the other, each assigned as it comes up, so afterAll stops whatever started
    browser = await launchChromium();
    const ready = { readyTimeoutMs: 90_000 };
    dev = await startDeployment('all', { ...ready, urlHost: 'localhost', flags: ['--env=development', '--enable-email-verification', '--enable-phone-verification', '--log-level=info'] });
    prod = await startDeployment('all', { ...ready, urlHost: 'localhost', mfa: true });
    // no login page and no admin console: the root falls back to the playground (the console's own
    // redirect is in dashboard.e2e.test.ts)
    noPage = await startDeployment('all', { ...ready, flags: ['--enable-login-page=false', '--enable-dashboard=false'] });
  }, 300_000);
  afterAll(async () => {
    await browser?.close();
    await Promise.all([dev, prod, noPage].map((d) => d?.stop()));
  });
  afterEach(() => drivers.checkAndClose());

  it('GET /v1/admin/dev_outbox: 401 without the super-admin; the kept messages, newest first, with the admin secret', async () => {
    const anonymous = await get(dev.url, '/v1/admin/dev_outbox');
    expect([anonymous.status, anonymous.body]).toEqual([401, { code: 'unauthenticated', message: 'unauthorized' }]);
    const [first, second] = [address('outbox-rest-1'), address('outbox-rest-2')];
    const rowsFor = async (emails: string[]): Promise<any[]> => {
      for (let i = 0; i < 50; i++) {
        const r = await get(dev.url, '/v1/admin/dev_outbox', { 'x-service-admin-secret': dev.adminSecret });
        expect(r.status).toBe(200);
        const rows = (r.body.messages as any[]).filter((m) => emails.includes(m.to));
        if (rows.length === emails.length) return rows;
        await new Promise((res) => setTimeout(res, 200));
      }
      throw new Error(`no kept mail for ${emails.join(', ')}`);
    };
    expect((await post(dev.url, '/v1/signup', { email: first, password: PASSWORD, confirm_password: PASSWORD })).status).toBe(200);
    await rowsFor([first]);
    expect((await post(dev.url, '/v1/signup', { email: second, password: PASSWORD, confirm_password: PASSWORD })).status).toBe(200);
    const rows = await rowsFor([first, second]);
    // newest first
    expect(rows.map((m) => m.to)).toEqual([second, first]);
    for (const m of rows) {
      expect(Object.keys(m).sort()).toEqual(['channel', 'created_at', 'html', 'id', 'subject', 'text', 'to']);
      expect(m).toMatchObject({ channel: 'email', id: expect.any(String), subject: 'Please verify your email', created_at: expect.any(Number) });
      expect(m.text).toContain(`${dev.url}/verify_email?token=`);
      expect(m.html).toContain('/verify_email?token=');
    }
    expect(dev.output()).toContain('development outbox: email kept');
  });

  it('signup verification mail: listed on /app/dev-outbox for the super-admin, its link verifies the address', async () => {
    const drv = await drivers.open(browser, dev.url);
    const email = address('outbox-page');
    await signUpOnPage(drv, email, TITLES.inbox);
    await openOutbox(drv, dev.adminSecret);
    const mail = await messageTo(drv, email);
    const link = mail.getByRole('link', { name: /\/verify_email\?token=/ });
    await link.waitFor();
    await link.click();
    await drv.screen(TITLES.signedIn);
    expect(await drv.page.getByText(`Signed in as ${email}.`).isVisible()).toBe(true);
  });

  it('SMS one-time code of a phone sign-up: shown on the outbox page, it completes the sign-up', async () => {
    const drv = await drivers.open(browser, dev.url);
    const number = phone();
    await signUpOnPage(drv, number, 'Check your phone');
    const outbox = await drivers.open(browser, dev.url);
    await openOutbox(outbox, dev.adminSecret);
    const sms = await messageTo(outbox, number);
    expect(await sms.getByRole('heading').textContent()).toBe('Text message');
    const code = (await sms.locator('pre').textContent())?.match(/Your verification code is: (\S+)/)?.[1];
    expect(code).toBeTruthy();
    await drv.fill('One-time code', code!);
    await drv.click('Verify');
    await drv.screen(TITLES.signedIn);
    expect(dev.output()).toContain('development outbox: sms kept');
  });

  it('production (no --env=development): no outbox; forgot_password still answers "email service not enabled"', async () => {
    const forgot = await post(prod.url, '/v1/forgot_password', { email: address('prod') });
    expect([forgot.status, forgot.body]).toEqual([400, { code: 'failed_precondition', message: 'email service not enabled' }]);
    expect((await get(prod.url, '/v1/admin/dev_outbox')).status).toBe(401);
    const admin = await get(prod.url, '/v1/admin/dev_outbox', { 'x-service-admin-secret': prod.adminSecret });
    expect(admin.status).toBe(400);
    expect(admin.body).toEqual({ code: 'failed_precondition', message: expect.stringContaining('the development outbox is off') });
    expect(prod.output()).not.toContain('development outbox');
  });

  it('TOTP enrolment shows the 10 recovery codes in full; they download and copy; Continue waits for "I have saved these codes"', async () => {
    const drv = await drivers.open(browser, prod.url);
    await drv.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: prod.url });
    await drv.goto('/app/signup');
    await drv.screen(TITLES.signup);
    await submitSignup(drv, address('recovery'), PASSWORD);
    // before enrolment the codes are not shown (they become usable with the first accepted code)
    expect(await drv.page.getByRole('list', { name: 'Recovery codes' }).count()).toBe(0);
    const secret = (await drv.page.locator('code.secret').textContent()) ?? '';
    await drv.fill('Code from the app', await generate({ secret }));
    await drv.click('Verify and turn on');
    await drv.screen(TITLES.recoveryCodes);
    const codes = await drv.page.getByRole('list', { name: 'Recovery codes' }).locator('code').allTextContents();
    expect(codes).toHaveLength(10);
    for (const c of codes) expect(await drv.page.getByText(c, { exact: true }).isVisible()).toBe(true);
    const continueButton = drv.page.getByRole('button', { name: 'Continue', exact: true });
    expect(await continueButton.isDisabled()).toBe(true);

    const [download] = await Promise.all([drv.page.waitForEvent('download'), drv.page.getByRole('link', { name: 'Download the codes' }).click()]);
    expect(download.suggestedFilename()).toBe('recovery-codes.txt');
    const file = await readFile(await download.path(), 'utf8');
    expect(file.trim().split('\n').slice(1)).toEqual(codes);

    await drv.click('Copy the codes');
    // the Clipboard API answers asynchronously: wait for the announced status
    await drv.page.getByRole('status').filter({ hasText: 'The recovery codes were copied.' }).waitFor({ timeout: 10_000 });
    expect(await drv.status()).toBe('The recovery codes were copied.');
    expect(await drv.page.evaluate(() => (globalThis as any).navigator.clipboard.readText())).toBe(file);

    await drv.page.getByLabel('I have saved these codes', { exact: true }).check();
    await continueButton.click();
    await drv.screen(TITLES.signedIn);
  });

  it('GET / redirects to /app, or to the GraphQL playground with --enable-login-page=false --enable-dashboard=false', async () => {
    const root = await get(dev.url, '/');
    expect([root.status, root.headers.get('location')]).toEqual([302, '/app']);
    const playground = await get(noPage.url, '/');
    expect([playground.status, playground.headers.get('location')]).toEqual([302, '/graphql']);
    expect((await get(noPage.url, '/app')).status).toBe(404);
    const drv = await drivers.open(browser, dev.url);
    await drv.goto('/');
    await drv.screen(TITLES.login(ORG));
    expect(new URL(drv.page.url()).pathname).toBe('/app/login');
  });
});
