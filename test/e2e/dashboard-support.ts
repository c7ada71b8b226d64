/**
 * @module test/e2e/dashboard-support
 * Drives the admin console (`/dashboard`, issue 33 §1) in Debian's chromium with playwright-core,
 * by labels, buttons and headings, through the login page's driver (login-page-support.ts: axe-core
 * on every screen, CSP violations collected). Also a webhook receiver on 127.0.0.1 that records
 * what it is sent. Used by dashboard.e2e.test.ts and dashboard-screenshots.ts (docs/dashboard/*.png).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { type LoginPageDriver } from './login-page-support.ts';

/** The console's screen titles (the `<h1>` of each page). */
export const CONSOLE = {
  signIn: 'Sign in to the admin console',
  overview: 'Overview',
  users: 'Users',
  audit: 'Audit log',
  webhooks: 'Webhooks',
  clients: 'Clients',
  authz: 'Authorization',
  orgs: 'Organizations',
  issuers: 'Trusted issuers',
  templates: 'Email templates',
  invitations: 'Invitations',
  outbox: 'Development outbox',
} as const;

/** A desktop-sized viewport for the console's tables. */
export const CONSOLE_VIEWPORT = { width: 1280, height: 900 };

/**
 * Opens `/dashboard`, signs in with `secret` and waits for the overview.
 * @param shot the sign-in screen's screenshot name, if any
 */
export async function consoleSignIn(d: LoginPageDriver, secret: string, shot?: string): Promise<void> {
  await d.goto('/dashboard');
  await d.screen(CONSOLE.signIn, shot);
  await d.fill('Admin secret', secret);
  await d.click('Sign in');
  await d.screen(CONSOLE.overview);
}

/** Follows a link of the console's navigation and waits for its page. */
export async function openSection(d: LoginPageDriver, name: (typeof CONSOLE)[Exclude<keyof typeof CONSOLE, 'signIn'>], shot?: string): Promise<void> {
  await d.page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name, exact: true }).click();
  await d.screen(name, shot);
}

/**
 * Ticks (`on`) or clears the console's checkbox named `label` as a person does, by clicking its label
 * when its state differs (a React Aria `Checkbox`: the native input inside the label is visually
 * hidden, so a pointer never lands on it), then waits until the checkbox shows that state.
 * @throws Error (playwright's timeout) when the click does not change it
 */
export async function setCheck(d: LoginPageDriver, label: string, on: boolean): Promise<void> {
  const box = d.page.getByLabel(label, { exact: true });
  if ((await box.isChecked()) !== on) await d.page.locator('label').filter({ has: box }).click();
  await box.and(d.page.locator(on ? ':checked' : ':not(:checked)')).waitFor({ timeout: 5_000 });
}

/** One request a {@link WebhookReceiver} got. */
export interface Received { headers: http.IncomingHttpHeaders; body: string }

/** An HTTP server on 127.0.0.1 answering 200 `ok` to every POST and keeping what it got. Always `close()` it. */
export interface WebhookReceiver {
  url: string;
  received: Received[];
  close(): Promise<void>;
}

export async function startWebhookReceiver(): Promise<WebhookReceiver> {
  const received: Received[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => { body += c.toString('utf8'); });
    req.on('end', () => {
      received.push({ headers: req.headers, body });
      res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    received,
    close: () => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }),
  };
}
