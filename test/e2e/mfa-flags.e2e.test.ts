/**
 * @module test/e2e/mfa-flags
 * The MFA flags hold on every path (issue 30 §4; behaviour.md §4.1 "Usable method"), in both modes. A
 * deployment with SMTP and SMS (real SMTP and Twilio stand-ins) enrols two users per code factor (TOTP,
 * email OTP, SMS OTP), one passkey user (a passkey made by Chromium's virtual authenticator) and one who
 * skipped, then restarts the processes that read the flags, on the same database, under each row of the
 * table: all-in-one runs every row (no flag, `--disable-mfa`, `--disable-totp-login`,
 * `--disable-email-otp`, `--disable-sms-otp`, `--disable-webauthn-mfa`, `--enforce-mfa`); split mode
 * (PostgreSQL, Redis, NATS) runs the rows that need the flags to reach both authn and mfa (each its own
 * process with its own flags, read through the gateway): `--disable-mfa`, `--disable-webauthn-mfa`,
 * `--enforce-mfa`. Every row checks every flow that could reach a factor: Meta (what the hosted login
 * page shows), the signup offer, each setup endpoint, verify_otp, the login challenge of each enrolled
 * user (and whether a code was sent), the passkey login that completes an MFA session, and the hosted
 * login page's screens in Chromium (the passkey button of the sign-in screen, the methods of the MFA
 * offer after a sign-up on the page by email, the challenge screen each enrolled user reaches). A disabled
 * factor is neither offered nor accepted; an enabled one is both (so the table cannot pass by refusing
 * everything). Rows alternate between the two users of each code factor, so a row waits out the 30 s
 * resend window of a destination only when both were sent to within it.
 */
import { describe, it, expect, beforeAll, afterAll, jest } from '@jest/globals';
import type { Browser } from 'playwright-core';
import { generate } from 'otplib';
import type { CommandName } from '@gatehouse/config';
import { startDeployment, startSmtpSink, startTwilioSink, type Deployment, type Mode, type SmtpSink, type TwilioSink } from '@gatehouse/testing';
import { PASSWORD, address, bearer, cookieHeader, get, post, signup, sleep, type Reply } from './email-support.ts';
import { launchChromium, openPasskeyPage, type PasskeyPage } from './passkey-browser.ts';
import { DriverPool, TITLES, passwordLogin, submitSignup, type LoginPageDriver } from './login-page-support.ts';

jest.setTimeout(600_000);

type Factor = 'totp' | 'email' | 'sms' | 'webauthn';
const ALL: Factor[] = ['totp', 'email', 'sms', 'webauthn'];
const ORG = 'Gatehouse';
const PASSKEY_MFA_UNAVAILABLE = { code: 'failed_precondition', message: 'passkey MFA is not available on this server' };

/** Each row: its flags, the factors it turns off, whether MFA is enforced. */
/** Each row: its flags, the factors it turns off, whether MFA is enforced. */
type Row = [string, string[], Factor[], boolean];
const ROWS: Row[] = [
  ['no flag', [], [], false],
  ['--disable-mfa', ['--disable-mfa'], ALL, false],
  ['--disable-totp-login', ['--disable-totp-login'], ['totp'], false],
  ['--disable-email-otp', ['--disable-email-otp'], ['email'], false],
  ['--disable-sms-otp', ['--disable-sms-otp'], ['sms'], false],
  ['--disable-webauthn-mfa', ['--disable-webauthn-mfa'], ['webauthn'], false],
  ['--enforce-mfa', ['--enforce-mfa'], [], true],
];
const SPLIT_ROWS = new Set(['--disable-mfa', '--disable-webauthn-mfa', '--enforce-mfa']);

/**
 * Per mode: the rows, and the processes a row restarts with its flags. In split mode the services that
 * read the MFA flags are authn (Meta, the login and signup gate, the passkey login) and mfa (setup,
 * verify_otp, the codes it sends); the gateway and the login page only relay what these answer. They
 * restart one after the other, callee first, so authn's channel to mfa opens on a running mfa.
 */
const SETUPS: Array<{ mode: Mode; rows: Row[]; takers: CommandName[] }> = [
  { mode: 'all', rows: ROWS, takers: ['all'] },
  { mode: 'split', rows: ROWS.filter(([name]) => SPLIT_ROWS.has(name)), takers: ['mfa', 'authn'] },
];

/** The 30 s resend window of one destination (behaviour.md §4.4), and a second of slack. */
const RESEND_WINDOW_MS = 31_000;

const phone = (): string => `+1555${String(Math.floor(Math.random() * 1e7)).padStart(7, '0')}`;
const refused = (r: { status: number }): boolean => r.status >= 400 && r.status < 500;

interface User { email: string; phone: string; secret?: string }
/** One user enrolled with each code factor; rows use the slot sent to least recently. */
interface Slot { totp: User; email: User; sms: User; lastSend: number }

describe.each(SETUPS)('MFA flags on every path that could reach a factor ($mode)', ({ mode, rows, takers }) => {
  let smtp: SmtpSink;
  let sms: TwilioSink;
  let d: Deployment;
  let browser: Browser;
  let page: PasskeyPage;
  const drivers = new DriverPool();
  /** `<email> <code>`: TOTP codes already used (the replay guard refuses a reused one, §4.4) */
  const usedCodes = new Set<string>();
  const slots: Slot[] = [];
  const users = {} as Record<'webauthn' | 'skipped', User>;

  beforeAll(async () => {
    smtp = await startSmtpSink();
    sms = await startTwilioSink();
    d = await startDeployment(mode, {
      mfa: true, urlHost: 'localhost', readyTimeoutMs: 60_000,
      // every row sends codes to the same users: the per-destination caps (5 an hour) are not what this
      // test is about, so they are off here (test/e2e/send-caps.e2e.test.ts covers them)
      flags: [`--smtp-host=${smtp.host}`, `--smtp-port=${smtp.port}`, '--smtp-sender-email=noreply@gatehouse.test', '--skip-tls-verification', '--send-cap-per-hour=0', '--send-cap-per-day=0', ...sms.flags()],
    });
    browser = await launchChromium();
    page = await openPasskeyPage(browser, d.url);

    // users enrolled from the signup offer with every factor usable
    const offered = async (tag: string) => {
      const u: User = { email: address(tag), phone: phone() };
      const res = await signup(d.url, u.email, { phone_number: u.phone });
      expect(res.body.message).toBe('Proceed to mfa setup');
      return { u, res, mfa: cookieHeader(res.cookies) };
    };
    for (let i = 0; i < 2; i++) {
      const slot = {} as Slot;
      {
        const { u, res, mfa } = await offered('flags-totp');
        const first = await generate({ secret: res.body.authenticator_secret });
        usedCodes.add(`${u.email} ${first}`);
        const done = await post(d.url, '/v1/verify_otp', { otp: first, is_totp: true }, mfa);
        expect(done.body.message).toBe('OTP verified successfully.');
        slot.totp = { ...u, secret: res.body.authenticator_secret };
      }
      {
        const { u, mfa } = await offered('flags-email');
        expect((await post(d.url, '/v1/email_otp_mfa_setup', { email: u.email }, mfa)).status).toBe(200);
        const done = await post(d.url, '/v1/verify_otp', { otp: smtp.otpOf(await smtp.waitForMail(u.email)) }, mfa);
        expect(done.body.user.enrolled_mfa_methods).toEqual(['email_otp']);
        slot.email = u;
      }
      {
        const { u, mfa } = await offered('flags-sms');
        expect((await post(d.url, '/v1/sms_otp_mfa_setup', { phone_number: u.phone }, mfa)).status).toBe(200);
        const done = await post(d.url, '/v1/verify_otp', { otp: sms.otpOf(await sms.waitForSms(u.phone)), phone_number: u.phone }, mfa);
        expect(done.body.user.enrolled_mfa_methods).toEqual(['sms_otp']);
        slot.sms = u;
      }
      slot.lastSend = Date.now();
      slots.push(slot);
    }
    {
      const u = { email: address('flags-passkey'), phone: phone() };
      const offer = await page.post('/v1/signup', { email: u.email, password: PASSWORD, confirm_password: PASSWORD });
      expect(offer.body.should_offer_webauthn_mfa_setup).toBe(true);
      const reg = await page.register();
      expect(reg.verify.body.message).toBe('Passkey registered and MFA setup complete.');
      users.webauthn = u;
    }
    {
      const { u, mfa } = await offered('flags-skip');
      expect((await post(d.url, '/v1/skip_mfa_setup', {}, mfa)).status).toBe(200);
      users.skipped = u;
    }
  }, 300_000);
  afterAll(async () => {
    await page?.close();
    await browser?.close();
    await d?.stop();
    await smtp?.close();
    await sms?.close();
  });

  it.each(rows)('%s', async (_name, flags, off, enforced) => {
    // every process that reads the flags starts again with this row's (and only this row's) flags
    for (const command of takers) await d.restart(command, flags);
    const on = (f: Factor): boolean => !off.includes(f);
    const mfaOn = ALL.some(on);

    // Meta
    const meta = (await get(d.url, '/v1/meta')).body;
    expect({
      totp: meta.is_totp_mfa_enabled, email: meta.is_email_otp_mfa_enabled, sms: meta.is_sms_otp_mfa_enabled,
      webauthn: meta.is_webauthn_enabled, mfa: meta.is_multi_factor_auth_enabled,
    }).toEqual({ totp: on('totp'), email: on('email'), sms: on('sms'), webauthn: on('webauthn'), mfa: mfaOn });

    // the signup offer (G5 when enforced, G7 otherwise), and each setup endpoint with its cookie
    const fresh = { email: address('flags-new'), phone: phone() };
    const offer = await signup(d.url, fresh.email, { phone_number: fresh.phone });
    let credential: Record<string, string>;
    if (!mfaOn) {
      expect([offer.status, typeof offer.body.access_token]).toEqual([200, 'string']);
      credential = bearer(offer.body.access_token);
    } else {
      expect({
        message: offer.body.message, issued: offer.body.access_token !== null,
        totp: offer.body.should_show_totp_screen && offer.body.authenticator_secret !== null,
        email: offer.body.should_offer_email_otp_mfa_setup, sms: offer.body.should_offer_sms_otp_mfa_setup, webauthn: offer.body.should_offer_webauthn_mfa_setup,
      }).toEqual({ message: 'Proceed to mfa setup', issued: false, totp: on('totp'), email: on('email'), sms: on('sms'), webauthn: on('webauthn') });
      credential = cookieHeader(offer.cookies);
    }
    const setups: Array<[Factor, () => Promise<Reply>]> = [
      ['totp', () => post(d.url, '/v1/totp_mfa_setup', {}, credential)],
      ['email', () => post(d.url, '/v1/email_otp_mfa_setup', { email: fresh.email }, credential)],
      ['sms', () => post(d.url, '/v1/sms_otp_mfa_setup', { phone_number: fresh.phone }, credential)],
      ['webauthn', () => post(d.url, '/v1/webauthn_registration_options', {}, credential)],
    ];
    for (const [factor, call] of setups) {
      const res = await call();
      // a disabled factor's setup is refused; an enabled one's is served (TOTP setup needs a signed-in user)
      // (a signed-in user may register a passkey as a login credential whatever the MFA flags say)
      if (!on(factor)) { if (mfaOn || factor !== 'webauthn') expect([factor, res.status, refused(res)]).toEqual([factor, res.status, true]); }
      else if (factor !== 'totp') expect([factor, res.status]).toEqual([factor, 200]);
    }
    if (mfaOn) {
      // skip is refused exactly when MFA is enforced
      const skip = await post(d.url, '/v1/skip_mfa_setup', {}, cookieHeader(offer.cookies));
      expect(['skip', refused(skip), skip.status === 200]).toEqual(['skip', enforced, !enforced]);
    }

    // the login of each enrolled user: challenged by its factor only while the factor is usable
    const login = (u: { email: string }) => post(d.url, '/v1/login', { email: u.email, password: PASSWORD });
    // a code to the same address within 30 s of the last is not sent again (behaviour.md §4.4 resend
    // limit): take the slot sent to least recently and wait out what is left of its window, so each
    // row's send (or its absence) is its own
    const slot = slots.reduce((a, b) => (b.lastSend < a.lastSend ? b : a));
    await sleep(Math.max(0, slot.lastSend + RESEND_WINDOW_MS - Date.now()));
    const mailsBefore = smtp.to(slot.email.email).length;
    const smsBefore = sms.to(slot.sms.phone).length;
    const t = await login(slot.totp);
    const e = await login(slot.email);
    const s = await login(slot.sms);
    expect({
      totp: t.body.should_show_totp_screen === true && t.body.authenticator_secret === null,
      email: e.body.should_show_email_otp_screen, sms: s.body.should_show_mobile_otp_screen,
    }).toEqual({ totp: on('totp'), email: on('email'), sms: on('sms') });
    for (const [factor, res] of [['totp', t], ['email', e], ['sms', s]] as const) {
      // no factor left usable and not enforced: the tokens; else no tokens until a usable factor is proven
      expect([factor, res.status, res.body.access_token !== null]).toEqual([factor, 200, !mfaOn]);
    }
    // a code went out exactly when the factor is usable
    if (on('email')) await smtp.waitForMail(slot.email.email, { count: mailsBefore + 1 });
    if (on('sms')) await sms.waitForSms(slot.sms.phone, { count: smsBefore + 1 });
    if (on('email') || on('sms')) slot.lastSend = Date.now();
    await sleep(500);
    expect([smtp.to(slot.email.email).length - mailsBefore, sms.to(slot.sms.phone).length - smsBefore]).toEqual([on('email') ? 1 : 0, on('sms') ? 1 : 0]);

    // verify_otp with the user's valid TOTP code: accepted only while TOTP is usable
    if (mfaOn) {
      // a code not used before by this user (the replay guard refuses a reused one, §4.4)
      let code = await generate({ secret: slot.totp.secret! });
      while (usedCodes.has(`${slot.totp.email} ${code}`)) {
        await sleep(2000);
        code = await generate({ secret: slot.totp.secret! });
      }
      usedCodes.add(`${slot.totp.email} ${code}`);
      const verified = await post(d.url, '/v1/verify_otp', { otp: code, is_totp: true }, cookieHeader(t.cookies));
      if (on('totp')) expect([verified.status, typeof verified.body.access_token]).toEqual([200, 'string']);
      else expect(['verify_otp totp', refused(verified), verified.body.access_token ?? null]).toEqual(['verify_otp totp', true, null]);
    }

    // the passkey user: offered the passkey at login only while passkey MFA is usable, and the
    // passkey completes the open MFA session only then (issue 30: it did under --disable-webauthn-mfa)
    const pk = await page.post('/v1/login', { email: users.webauthn.email, password: PASSWORD });
    expect([pk.status, pk.body.should_offer_webauthn_mfa_verify, pk.body.access_token !== null]).toEqual([200, on('webauthn'), !mfaOn]);
    const passkey = await page.login();
    if (!mfaOn) expect(passkey.verify.status).toBe(200); // no MFA session: a plain passkey login
    else if (on('webauthn')) expect([passkey.verify.status, passkey.verify.body.message]).toEqual([200, 'Logged in successfully with passkey.']);
    else expect([passkey.verify.status, passkey.verify.body]).toEqual([400, PASSKEY_MFA_UNAVAILABLE]);

    // the user who skipped: passes quietly unless MFA is enforced
    const skipped = await login(users.skipped);
    expect(['skipped', skipped.body.access_token !== null]).toEqual(['skipped', !enforced]);

    // the hosted login page shows what Meta and the API say, and no more
    await checkLoginPage(on, mfaOn, enforced, slot);
    if (on('email') || on('sms')) slot.lastSend = Date.now();
  });

  /**
   * The hosted login page in Chromium under one row: the sign-in screen offers a passkey only while
   * passkeys are usable; a sign-up on the page reaches the MFA offer listing exactly the usable methods
   * (and "Skip for now" only when MFA is not enforced), or signs in when no factor is usable; each
   * enrolled user's sign-in on the page reaches its factor's challenge screen only while that factor is
   * usable. Each screen is checked by axe-core and for CSP violations (DriverPool).
   */
  async function checkLoginPage(on: (f: Factor) => boolean, mfaOn: boolean, enforced: boolean, slot: Slot): Promise<void> {
    const button = (drv: LoginPageDriver, name: string) => drv.page.getByRole('button', { name, exact: true }).count().then((n) => n > 0);
    const heading = async (drv: LoginPageDriver): Promise<string> => {
      await drv.page.waitForFunction(() => (globalThis as any).document.querySelector('main')?.getAttribute('aria-busy') === 'false');
      return (await drv.page.locator('h1').textContent()) ?? '';
    };
    try {
      // sign-up on the page: the offer lists the usable methods
      const signupDrv = await drivers.open(browser, d.url);
      await signupDrv.goto('/app/login');
      await signupDrv.screen(TITLES.login(ORG));
      expect(['passkey sign-in button', await button(signupDrv, 'Sign in with a passkey')]).toEqual(['passkey sign-in button', on('webauthn')]);
      await signupDrv.follow('Create an account');
      await signupDrv.screen(TITLES.signup);
      if (!mfaOn) {
        await signupDrv.fill('Email or phone number', address('flags-page'));
        await signupDrv.fill('Password', PASSWORD);
        await signupDrv.fill('Confirm password', PASSWORD);
        await signupDrv.click('Create account');
        await signupDrv.screen(TITLES.signedIn);
      } else {
        await submitSignup(signupDrv, address('flags-page'), PASSWORD);
        expect({
          totp: await signupDrv.page.getByRole('heading', { level: 2, name: 'Authenticator app', exact: true }).count() > 0,
          email: await button(signupDrv, 'Codes by email'), sms: await button(signupDrv, 'Codes by text message'),
          webauthn: await button(signupDrv, 'A passkey on this device'), skip: await button(signupDrv, 'Skip for now'),
          // the page signs up by email only: text-message codes are offered to users with a phone number
          // (the API rows above check that offer), never to this one
        }).toEqual({ totp: on('totp'), email: on('email'), sms: false, webauthn: on('webauthn'), skip: !enforced });
      }

      // each enrolled user's sign-in on the page (within the resend window of the API login above, so no
      // second code goes out): the factor's challenge while it is usable, signed in when no factor is
      const challenge: Array<[string, string, boolean, (drv: LoginPageDriver) => Promise<boolean>]> = [
        ['totp', slot.totp.email, on('totp'), async (drv) => (await heading(drv)) === TITLES.totp && await drv.page.getByLabel('Code from the app', { exact: true }).count() > 0],
        ['email', slot.email.email, on('email'), async (drv) => (await heading(drv)) === TITLES.emailOtp],
        ['sms', slot.sms.email, on('sms'), async (drv) => (await heading(drv)) === 'Check your phone'],
        ['webauthn', users.webauthn.email, on('webauthn'), async (drv) => (await heading(drv)) === TITLES.totp && await button(drv, 'Use my passkey')],
      ];
      for (const [factor, email, usable, showsChallenge] of challenge) {
        const drv = await drivers.open(browser, d.url);
        await passwordLogin(drv, ORG, email, PASSWORD);
        await drv.page.waitForFunction((login) => (globalThis as any).document.querySelector('h1')?.textContent !== login, TITLES.login(ORG), { timeout: 15_000 });
        const title = await heading(drv);
        await drv.screen(title);
        expect([factor, await showsChallenge(drv), title === TITLES.signedIn]).toEqual([factor, usable, !mfaOn]);
      }
    } finally {
      await drivers.checkAndClose();
    }
  }
});
