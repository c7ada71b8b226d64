/**
 * @module test/e2e/passkey-browser
 * Debian's chromium driven by playwright-core, with the CDP virtual authenticator (WebAuthn.enable,
 * WebAuthn.addVirtualAuthenticator: ctap2, internal, resident keys, user verification), on a page of
 * the deployment's own origin (`--url` = `http://localhost:<port>`, RP ID `localhost`). The page is a
 * tiny HTML document plus @simplewebauthn/browser's UMD bundle, served by the test for that origin
 * (playwright `route`); every `/v1` call goes to the real gateway. Nothing fakes the authenticator:
 * the credentials come from Chromium's authenticator through `navigator.credentials`.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { chromium, type Browser, type BrowserContext, type CDPSession, type Page } from 'playwright-core';

/** TOOLCHAIN.md: Debian's chromium and its flags on these machines */
export const CHROMIUM = '/usr/bin/chromium';
const FLAGS = ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

const require = createRequire(import.meta.url);
// the package's entry is <pkg>/script/index.js (require) or <pkg>/esm/index.js (import); the UMD bundle sits beside them
const BUNDLE = readFileSync(path.join(path.dirname(require.resolve('@simplewebauthn/browser')), '..', 'dist/bundle/index.umd.min.js'), 'utf8');
const PAGE = '<!doctype html><html><head><meta charset="utf-8"><title>passkeys</title><script src="/__passkey-test/simplewebauthn-browser.js"></script></head><body>passkeys</body></html>';

/** The result of a `/v1` call made by the page. */
export interface PageReply {
  status: number;
  body: any;
}

/** One browser context on the deployment's origin, with its authenticator(s). */
export interface PasskeyPage {
  page: Page;
  cdp: CDPSession;
  /** the current virtual authenticator */
  authenticatorId: string;
  /** POST `path` from the page with a JSON body (cookies of the context go along) */
  post(pathname: string, body?: unknown): Promise<PageReply>;
  /** GET `path` from the page */
  get(pathname: string): Promise<PageReply>;
  /** webauthn_registration_options → startRegistration → webauthn_registration_verify, all in the page */
  register(verifyBody?: Record<string, unknown>, optionsBody?: Record<string, unknown>): Promise<{ options: PageReply; verify: PageReply; credential: string | null }>;
  /** webauthn_login_options → startAuthentication → webauthn_login_verify; `credential` is the assertion JSON sent */
  login(optionsBody?: Record<string, unknown>): Promise<{ options: PageReply; verify: PageReply; credential: string | null }>;
  /** replaces the authenticator with a fresh one (same options) */
  newAuthenticator(): Promise<string>;
  close(): Promise<void>;
}

/** Starts chromium headless. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: FLAGS });
}

/**
 * Opens a context on `origin` (the deployment's `--url`), loads the test page and adds a virtual
 * authenticator.
 */
export async function openPasskeyPage(browser: Browser, origin: string): Promise<PasskeyPage> {
  const context: BrowserContext = await browser.newContext();
  const page = await context.newPage();
  await page.route(`${origin}/__passkey-test/**`, (route) => {
    const url = new URL(route.request().url());
    if (url.pathname.endsWith('.js')) return route.fulfill({ status: 200, contentType: 'text/javascript', body: BUNDLE });
    return route.fulfill({ status: 200, contentType: 'text/html', body: PAGE });
  });
  await page.goto(`${origin}/__passkey-test/index.html`);
  await page.waitForFunction(() => typeof (globalThis as any).SimpleWebAuthnBrowser?.startRegistration === 'function');
  const cdp = await context.newCDPSession(page);
  await cdp.send('WebAuthn.enable', { enableUI: false });
  const add = async (): Promise<string> => (await cdp.send('WebAuthn.addVirtualAuthenticator', {
    options: { protocol: 'ctap2', transport: 'internal', hasResidentKey: true, hasUserVerification: true, isUserVerified: true, automaticPresenceSimulation: true },
  })).authenticatorId;
  const handle: PasskeyPage = {
    page, cdp, authenticatorId: await add(),
    post: (pathname, body = {}) => page.evaluate(async ({ pathname, body }) => {
      const res = await fetch(pathname, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body), credentials: 'same-origin' });
      const text = await res.text();
      return { status: res.status, body: text ? JSON.parse(text) : null };
    }, { pathname, body }),
    get: (pathname) => page.evaluate(async (pathname) => {
      const res = await fetch(pathname);
      const text = await res.text();
      return { status: res.status, body: text ? JSON.parse(text) : null };
    }, pathname),
    register: (verifyBody = {}, optionsBody = {}) => page.evaluate(async ({ verifyBody, optionsBody }) => {
      const call = async (p: string, b: unknown) => {
        const res = await fetch(p, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(b) });
        return { status: res.status, body: (await res.json()) as any };
      };
      const options = await call('/v1/webauthn_registration_options', optionsBody);
      if (options.status !== 200) return { options, verify: { status: 0, body: null }, credential: null };
      const cred = await (globalThis as any).SimpleWebAuthnBrowser.startRegistration({ optionsJSON: JSON.parse(options.body.options) });
      const credential = JSON.stringify(cred);
      return { options, verify: await call('/v1/webauthn_registration_verify', { ...verifyBody, credential }), credential };
    }, { verifyBody, optionsBody }),
    login: (optionsBody = {}) => page.evaluate(async ({ optionsBody }) => {
      const call = async (p: string, b: unknown) => {
        const res = await fetch(p, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(b) });
        return { status: res.status, body: (await res.json()) as any };
      };
      const options = await call('/v1/webauthn_login_options', optionsBody);
      if (options.status !== 200) return { options, verify: { status: 0, body: null }, credential: null };
      const cred = await (globalThis as any).SimpleWebAuthnBrowser.startAuthentication({ optionsJSON: JSON.parse(options.body.options) });
      const credential = JSON.stringify(cred);
      return { options, verify: await call('/v1/webauthn_login_verify', { credential }), credential };
    }, { optionsBody }),
    async newAuthenticator() {
      await cdp.send('WebAuthn.removeVirtualAuthenticator', { authenticatorId: handle.authenticatorId });
      handle.authenticatorId = await add();
      return handle.authenticatorId;
    },
    close: () => context.close(),
  };
  return handle;
}
