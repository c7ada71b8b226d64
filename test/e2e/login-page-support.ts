/**
 * @module test/e2e/login-page-support
 * Drives the hosted login page (`/app`, issue 18 item 5) in Debian's chromium with playwright-core,
 * as a person would: by labels, buttons and headings. Each screen reached is checked with axe-core
 * (injected with `addInitScript`, which the page's CSP does not govern) and, when a directory is
 * given, photographed. Content-Security-Policy violations are collected from the console and from
 * `securitypolicyviolation` events; closeRig tears a browser test down. Used by login-page.e2e.test.ts and by
 * login-page-screenshots.ts (the docs/login-page/*.png images).
 */
import http from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { Browser, BrowserContext, CDPSession, Page } from 'playwright-core';
import { generate } from 'otplib';
import type { SmtpSink } from '@gatehouse/testing';

const require = createRequire(import.meta.url);
const AXE_SOURCE = (require('axe-core') as { source: string }).source;

/** One axe-core violation of impact serious or critical. */
export interface AxeViolation {
  screen: string;
  id: string;
  impact: string;
  help: string;
  targets: string[];
}

/** A browser context on the page's origin. */
export class LoginPageDriver {
  /** serious/critical axe violations of every screen checked so far */
  readonly violations: AxeViolation[] = [];
  /** the titles of the screens checked, in order */
  readonly screens: string[] = [];
  readonly consoleCsp: string[] = [];
  readonly context: BrowserContext;
  readonly page: Page;
  readonly origin: string;
  private readonly shots: string | null;
  private constructor(context: BrowserContext, page: Page, origin: string, shots: string | null) {
    this.context = context;
    this.page = page;
    this.origin = origin;
    this.shots = shots;
  }

  /**
   * Opens a context and page for `origin` (the deployment's `--url`).
   * @param shots a directory for one PNG per named screen, or null
   * @param viewport the page size in CSS pixels (default 520×760, a phone-sized login page)
   */
  static async open(browser: Browser, origin: string, shots: string | null = null, viewport = { width: 520, height: 760 }): Promise<LoginPageDriver> {
    const context = await browser.newContext({ viewport });
    await context.addInitScript({ content: `${AXE_SOURCE}\n;window.__csp = []; document.addEventListener('securitypolicyviolation', (e) => window.__csp.push(e.violatedDirective + ' ' + e.blockedURI));` });
    const page = await context.newPage();
    const d = new LoginPageDriver(context, page, origin, shots);
    page.on('console', (m) => {
      if (/Content Security Policy|Refused to (load|execute|apply|connect)/i.test(m.text())) d.consoleCsp.push(m.text());
    });
    return d;
  }

  /** A CDP virtual authenticator (ctap2, internal, resident keys, user verification), as passkey-browser.ts. */
  async addAuthenticator(): Promise<CDPSession> {
    const cdp = await this.context.newCDPSession(this.page);
    await cdp.send('WebAuthn.enable', { enableUI: false });
    await cdp.send('WebAuthn.addVirtualAuthenticator', {
      options: { protocol: 'ctap2', transport: 'internal', hasResidentKey: true, hasUserVerification: true, isUserVerified: true, automaticPresenceSimulation: true },
    });
    return cdp;
  }

  /** Navigates to `pathAndQuery` under the origin (or an absolute URL). */
  async goto(pathAndQuery: string): Promise<void> {
    await this.page.goto(pathAndQuery.startsWith('http') ? pathAndQuery : `${this.origin}${pathAndQuery}`);
  }

  /**
   * Waits for the screen whose `<h1>` is `title`, runs axe-core on it and keeps its serious and
   * critical violations, and photographs it as `<shot>.png` when a directory was given.
   * @throws Error when the heading does not appear within 15 s
   */
  async screen(title: string, shot?: string): Promise<void> {
    try {
      await this.page.getByRole('heading', { level: 1, name: title, exact: true }).waitFor({ timeout: 15_000 });
    } catch (err) {
      const h1 = await this.page.locator('h1').textContent().catch(() => null);
      const alert = await this.page.getByRole('alert').textContent().catch(() => null);
      throw new Error(`screen "${title}" did not appear: the page shows "${h1}" (alert: "${alert}") at ${this.page.url()}`, { cause: err });
    }
    // the page is done when `<main>` is not busy and holds no busy part (a screen that loads its data)
    await this.page.waitForFunction(() => {
      const main = (globalThis as any).document.querySelector('main');
      return main?.getAttribute('aria-busy') === 'false' && main.querySelector('[aria-busy=true]') === null;
    });
    const result = await this.page.evaluate(async () => {
      const r = await (globalThis as any).axe.run((globalThis as any).document, { resultTypes: ['violations'] });
      return (r.violations as any[]).map((v) => ({ id: String(v.id), impact: String(v.impact), help: String(v.help), targets: (v.nodes as any[]).map((n) => JSON.stringify(n.target)) }));
    });
    this.screens.push(title);
    for (const v of result) if (v.impact === 'serious' || v.impact === 'critical') this.violations.push({ screen: title, ...v });
    if (this.shots && shot) await this.page.screenshot({ path: path.join(this.shots, `${shot}.png`), fullPage: true });
  }

  /** The CSP violations the page reported (events) and printed (console). */
  async cspViolations(): Promise<string[]> {
    const events = await this.page.evaluate(() => (globalThis as any).__csp as string[]).catch(() => [] as string[]);
    return [...events, ...this.consoleCsp];
  }

  /** The text of the `role="alert"` region (errors), once it is not empty (up to 15 s). */
  async alert(): Promise<string> {
    await this.page.waitForFunction(() => (globalThis as any).document.querySelector('[role=alert]')?.textContent !== '', undefined, { timeout: 15_000 });
    return (await this.page.getByRole('alert').textContent()) ?? '';
  }

  /** The text of the `role="status"` region. */

  async status(): Promise<string> {
    return (await this.page.getByRole('status').textContent()) ?? '';
  }

  async fill(label: string, value: string): Promise<void> {
    await this.page.getByLabel(label, { exact: true }).fill(value);
  }

  async click(name: string): Promise<void> {
    await this.page.getByRole('button', { name, exact: true }).click();
  }

  async follow(name: string): Promise<void> {
    await this.page.getByRole('link', { name, exact: true }).click();
  }

  close(): Promise<void> {
    return this.context.close();
  }
}

/** The drivers one test opened: after the test, each must have seen no serious axe violation and no CSP violation. */
export class DriverPool {
  private drivers: LoginPageDriver[] = [];

  /** A new driver on `origin` (see {@link LoginPageDriver.open}), checked and closed by {@link DriverPool.checkAndClose}. */
  async open(browser: Browser, origin: string, shots: string | null = null, viewport?: { width: number; height: number }): Promise<LoginPageDriver> {
    const drv = await LoginPageDriver.open(browser, origin, shots, viewport);
    this.drivers.push(drv);
    return drv;
  }

  /**
   * For `afterEach`: closes every driver, then throws when one saw a serious/critical axe violation or a CSP
   * violation (no jest import, so the screenshot script can use this module outside jest).
   * @throws Error naming the violations
   */
  async checkAndClose(): Promise<void> {
    const drivers = this.drivers;
    this.drivers = [];
    const found: unknown[] = [];
    for (const drv of drivers) {
      const csp = await drv.cspViolations();
      if (drv.violations.length > 0 || csp.length > 0) found.push({ axe: drv.violations, csp });
      await drv.close();
    }
    if (found.length > 0) throw new Error(`accessibility or CSP violations: ${JSON.stringify(found, null, 2)}`);
  }
}

/**
 * For the screenshot scripts: prints the serious axe and CSP violations `drv` saw and how many screens
 * it checked, then closes it.
 * @returns true when there was a violation (the script must fail)
 */
export async function reportScreens(drv: LoginPageDriver, out: string): Promise<boolean> {
  const csp = await drv.cspViolations();
  const failed = drv.violations.length > 0 || csp.length > 0;
  if (failed) console.error(JSON.stringify({ axe: drv.violations, csp }, null, 2));
  console.log(`${drv.screens.length} screens checked; screenshots in ${path.relative(process.cwd(), out)}`);
  await drv.close();
  return failed;
}

/** The screen titles (the `<h1>` of each screen). */
export const TITLES = {
  login: (org: string) => `Sign in to ${org}`,
  signup: 'Create your account',
  offer: 'Set up two-step verification',
  totp: 'Two-step verification',
  signedIn: 'You are signed in',
  forgot: 'Reset your password',
  reset: 'Choose a new password',
  inbox: 'Check your inbox',
  magic: 'Sign in with an email link',
  emailOtp: 'Check your email',
  recoveryCodes: 'Save your recovery codes',
  devOutbox: 'Development outbox',
} as const;

/** A TOTP code for `secret` one step ahead (accepted within ±1 step, past the replay guard of the last step). */
export const nextTotp = (secret: string): Promise<string> => generate({ secret, epoch: Math.floor(Date.now() / 1000) + 30 });

/** Fills and sends the sign-up form (the page must show it) and waits for the MFA offer (G7). */
export async function submitSignup(d: LoginPageDriver, email: string, password: string, shot?: string): Promise<void> {
  await d.fill('Email or phone number', email);
  await d.fill('Password', password);
  await d.fill('Confirm password', password);
  if (shot) await d.screen(TITLES.signup, shot);
  await d.click('Create account');
  await d.screen(TITLES.offer);
}

/**
 * Sign-up on the page: the MFA offer (G7, behaviour.md §4.1) shows the TOTP QR code and key; the
 * code of an authenticator (otplib) turns TOTP on, the recovery codes are shown in full, and after
 * "I have saved these codes" Continue signs in.
 * @returns the TOTP secret and the recovery codes shown
 */
export async function signUpWithTotp(d: LoginPageDriver, org: string, email: string, password: string, shots = false): Promise<{ secret: string; recoveryCodes: string[] }> {
  await d.goto('/app/login');
  await d.screen(TITLES.login(org), shots ? 'login' : undefined);
  await d.follow('Create an account');
  await d.screen(TITLES.signup);
  await submitSignup(d, email, password, shots ? 'signup' : undefined);
  if (shots) await d.screen(TITLES.offer, 'mfa-offer-totp');
  const secret = (await d.page.locator('code.secret').textContent()) ?? '';
  await d.fill('Code from the app', await generate({ secret }));
  await d.click('Verify and turn on');
  // issue 33 §3: the codes in full after enrolment; Continue waits for "I have saved these codes"
  await d.screen(TITLES.recoveryCodes, shots ? 'recovery-codes' : undefined);
  const recoveryCodes = await d.page.getByRole('list', { name: 'Recovery codes' }).locator('code').allTextContents();
  await d.page.getByLabel('I have saved these codes', { exact: true }).check();
  await d.click('Continue');
  await d.screen(TITLES.signedIn, shots ? 'signed-in' : undefined);
  return { secret, recoveryCodes };
}

/** Password login on the page (from the login screen), up to the next screen. */
export async function passwordLogin(d: LoginPageDriver, org: string, identifier: string, password: string, query = ''): Promise<void> {
  await d.goto(`/app/login${query}`);
  await d.screen(TITLES.login(org));
  await d.fill('Email or phone number', identifier);
  await d.fill('Password', password);
  await d.click('Sign in');
}

/**
 * Forgot password → the emailed link → the reset screen → a new password. The link must be the
 * `--reset-password-url` default, `<url>/app/reset-password?token=…` (behaviour.md §3.4).
 * @returns the link followed
 */
export async function forgotAndReset(d: LoginPageDriver, sink: SmtpSink, org: string, email: string, newPassword: string, shots = false): Promise<URL> {
  await d.goto('/app/login');
  await d.screen(TITLES.login(org));
  await d.follow('Forgot your password?');
  await d.screen(TITLES.forgot, shots ? 'forgot-password' : undefined);
  const before = sink.to(email).length;
  await d.fill('Email or phone number', email);
  await d.click('Send reset instructions');
  await d.screen(TITLES.inbox, shots ? 'check-inbox' : undefined);
  const link = sink.tokenLink(await sink.waitForMail(email, { count: before + 1 }));
  await d.goto(link.toString());
  await d.screen(TITLES.reset, shots ? 'reset-password' : undefined);
  await d.fill('New password', newPassword);
  await d.fill('Confirm new password', newPassword);
  await d.click('Set new password');
  await d.screen(TITLES.login(org));
  return link;
}

/** Magic link on the page: the emailed link signs in; the MFA offer of a new user is skipped. */
export async function magicLink(d: LoginPageDriver, sink: SmtpSink, org: string, email: string, shots = false): Promise<void> {
  await d.goto('/app/login');
  await d.screen(TITLES.login(org));
  await d.follow('Email me a sign-in link');
  await d.screen(TITLES.magic, shots ? 'magic-link' : undefined);
  await d.fill('Email', email);
  await d.click('Email me a link');
  await d.screen(TITLES.inbox);
  const link = sink.tokenLink(await sink.waitForMail(email));
  await d.goto(link.toString());
  await d.screen(TITLES.offer, shots ? 'mfa-offer' : undefined);
  await d.click('Skip for now');
  await d.screen(TITLES.signedIn);
}

const LOGO_SVG = '<svg xmlns="http://www.w3.org/2000/svg" width="32" height="32"><rect width="32" height="32" rx="6" fill="#1f4fd1"/></svg>';

/** A server of a 32×32 SVG organization logo on 127.0.0.1 (another origin: `--organization-logo`). Always `close()` it. */
export async function startLogoServer(): Promise<{ url: string; close(): Promise<void> }> {
  const server = http.createServer((_req, res) => { res.writeHead(200, { 'content-type': 'image/svg+xml' }).end(LOGO_SVG); });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/logo.svg`,
    close: () => new Promise<void>((resolve) => { server.close(() => resolve()); }),
  };
}

/** The flags of a deployment for the page: SMTP at `sink`, magic links, the organization's name and logo. */
export const loginPageFlags = (sink: SmtpSink, org: string, logoUrl: string): string[] => [
  `--smtp-host=${sink.host}`, `--smtp-port=${sink.port}`, '--smtp-sender-email=noreply@gatehouse.test', '--skip-tls-verification',
  '--enable-magic-link-login', `--organization-name=${org}`, `--organization-logo=${logoUrl}`,
];

/** What a browser test against a deployment starts; each part may be missing when its start failed. */
export interface BrowserRig {
  browser?: { close(): Promise<void> };
  deployment?: { stop(): Promise<void> };
  others?: Array<{ close(): Promise<void> } | undefined>;
}

/** For `afterAll`: closes the browser, then stops the deployment, then closes the other servers (SMTP sink, logo, RP). */
export async function closeRig(r: BrowserRig): Promise<void> {
  await r.browser?.close();
  await r.deployment?.stop();
  await Promise.all((r.others ?? []).map((o) => o?.close()));
}
