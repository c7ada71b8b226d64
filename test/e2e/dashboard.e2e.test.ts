/**
 * @module test/e2e/dashboard
 * The admin console (issue 33 §1) in Debian's chromium driven by playwright-core against a real
 * deployment: all-in-one for every page's main task (sign-in, session expiry and sign-out; the
 * overview and the playground it links to, opened by the cookie alone; users: search, paging, edit,
 * sign out everywhere, revoke and enable access, delete with a confirmation; the audit log's filters, paging and
 * metadata; webhooks: add with the secret shown once and copied, test, edit, disable, rotate,
 * deliveries, delete), each with an error the server refuses shown to the person; and split mode for
 * the console being served and signing in. Also the console's later tasks: emptying a client's post-logout
 * redirect URIs, making an earlier model version current again, editing a member's org roles in place,
 * the "Who has access?" tester's contextual tuples and condition context, and an email template's design (JSON).
 * Every screen passes axe-core with no serious or critical
 * violation, and the browser reports no violation of the console's CSP.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import type { Browser } from 'playwright-core';
import { startDeployment, type Deployment } from '@gatehouse/testing';
import { launchChromium } from './passkey-browser.ts';
import { address, get, PASSWORD, post, signup, sleep } from './email-support.ts';
import { DriverPool, type LoginPageDriver } from './login-page-support.ts';
import { CONSOLE, CONSOLE_VIEWPORT, consoleSignIn, openSection, setCheck, startWebhookReceiver, type WebhookReceiver } from './dashboard-support.ts';

const admin = (d: Deployment): Record<string, string> => ({ 'x-service-admin-secret': d.adminSecret });

/** Retries `check` every 250 ms for up to 10 s (an audit row or a delivery is written after the answer). */
async function eventually(check: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < 40; i++) {
    if (await check()) return;
    await sleep(250);
  }
  throw new Error('the condition did not hold within 10 s');
}

describe('the admin console in Chromium (all-in-one)', () => {
  let d: Deployment;
  let browser: Browser;
  let hooks: WebhookReceiver;
  const drivers = new DriverPool();
  const open = (): Promise<LoginPageDriver> => drivers.open(browser, d.url, null, CONSOLE_VIEWPORT);

  beforeAll(async () => {
    [browser, hooks] = await Promise.all([launchChromium(), startWebhookReceiver()]);
    // localhost: the browser keeps the Secure service-admin cookie for a potentially trustworthy origin
    d = await startDeployment('all', { urlHost: 'localhost', flags: ['--allow-private-webhook-targets', '--roles=user,editor', '--default-roles=user'] });
  }, 180_000);
  afterAll(async () => {
    await browser?.close();
    await d?.stop();
    await hooks?.close();
  });
  afterEach(() => drivers.checkAndClose());

  it('is served under /dashboard with its CSP (no inline script), history fallback and immutable assets', async () => {
    const page = await fetch(`${d.url}/dashboard/users/some-id?x=1`);
    expect(page.status).toBe(200);
    const csp = page.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("connect-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toMatch(/unsafe-inline|unsafe-eval/);
    expect(page.headers.get('cache-control')).toBe('no-store');
    const html = await page.text();
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)/);
    expect(html).toContain('data-gatehouse-config="{&quot;base_path&quot;:&quot;&quot;,&quot;playground&quot;:true}"');
    const js = html.match(/src="(\/dashboard\/assets\/[^"]+\.js)"/)?.[1];
    const asset = await fetch(`${d.url}${js!}`);
    expect([asset.status, asset.headers.get('content-security-policy'), asset.headers.get('cache-control')]).toEqual([200, csp, 'public, max-age=31536000, immutable']);
    expect((await fetch(`${d.url}/dashboard/assets/nope.js`)).status).toBe(404);
    // the root still lands on the login page while it is served
    expect((await get(d.url, '/')).headers.get('location')).toBe('/app');
  });

  it('signs in with the admin secret (a wrong one is refused), survives a reload, signs out, and returns to sign-in when the session ends', async () => {
    const drv = await open();
    await drv.goto('/dashboard/users');
    await drv.screen(CONSOLE.signIn);
    await drv.fill('Admin secret', 'not-the-secret');
    await drv.click('Sign in');
    expect(await drv.alert()).toBe('invalid admin secret');
    await drv.fill('Admin secret', d.adminSecret);
    await drv.click('Sign in');
    // signed in on the page the address names
    await drv.screen(CONSOLE.users);
    const cookies = await drv.context.cookies();
    expect(cookies.map((c) => [c.name, c.httpOnly])).toEqual([['service-admin', true]]);
    await drv.page.reload();
    await drv.screen(CONSOLE.users);
    // the session ends (expired, or ended elsewhere): the next call's 401 returns to sign-in
    await drv.context.clearCookies();
    await openSection(drv, 'Audit log').catch(() => undefined);
    await drv.screen(CONSOLE.signIn);
    expect(await drv.status()).toBe('Your session has expired. Sign in again.');
    await drv.fill('Admin secret', d.adminSecret);
    await drv.click('Sign in');
    await drv.screen(CONSOLE.audit);
    await drv.click('Sign out');
    await drv.screen(CONSOLE.signIn);
    expect(await drv.status()).toBe('You are signed out.');
    expect(await drv.context.cookies()).toEqual([]);
  }, 90_000);

  it('works from the keyboard: Tab from the heading reaches the secret, Enter signs in, Shift+Tab walks back to the navigation, a new page\'s heading takes the focus', async () => {
    const drv = await open();
    const focused = (): Promise<string> => drv.page.evaluate(() => {
      const el = (globalThis as any).document.activeElement;
      return `${String(el?.tagName).toLowerCase()} ${el?.id || el?.textContent || ''}`.trim();
    });
    await drv.goto('/dashboard');
    await drv.screen(CONSOLE.signIn);
    expect(await focused()).toBe(`h1 ${CONSOLE.signIn}`);
    await drv.page.keyboard.press('Tab');
    expect(await focused()).toBe('input admin-secret');
    await drv.page.keyboard.type(d.adminSecret);
    await drv.page.keyboard.press('Enter');
    await drv.screen(CONSOLE.overview);
    expect(await focused()).toBe('h1 Overview');
    // forward into the page's content, backward through the header to the navigation
    await drv.page.keyboard.press('Tab');
    const walk = [await focused()];
    for (let i = 0; i < 3; i++) {
      await drv.page.keyboard.press('Shift+Tab');
      walk.push(await focused());
    }
    expect(walk).toEqual(['a Open the GraphQL playground', 'button Sign out', 'a Development outbox', 'a Authorization']);
    await drv.page.keyboard.press('Enter');
    await drv.screen(CONSOLE.authz);
    expect(await focused()).toBe('h1 Authorization');
    expect(await drv.page.getByRole('link', { name: 'Authorization', exact: true }).getAttribute('aria-current')).toBe('page');
  }, 90_000);

  it('overview: version, features and counts from the API, and the playground opens with the cookie alone', async () => {
    const email = address('overview');
    expect((await signup(d.url, email)).status).toBe(200);
    const meta = (await get(d.url, '/v1/admin/meta', admin(d))).body as { version: string; database_type: string; deployment: string; bus: string };
    const users = (await post(d.url, '/v1/admin/users', { pagination: { page: 1, limit: 1 } }, admin(d))).body as { pagination: { total: number } };
    const drv = await open();
    await consoleSignIn(drv, d.adminSecret);
    await expect(drv.page.getByTestId('version').textContent()).resolves.toBe(meta.version);
    await expect(drv.page.getByTestId('count-users').textContent()).resolves.toBe(String(users.pagination.total));
    await expect(drv.page.getByTestId('count-clients').textContent()).resolves.toMatch(/^\d+$/);
    expect(await drv.page.locator('main').textContent()).toContain(meta.database_type);
    expect([meta.deployment, meta.bus]).toEqual(['all-in-one', 'in-process']);
    await expect(drv.page.getByTestId('deployment').textContent()).resolves.toBe('All-in-one (one process)');
    await expect(drv.page.getByTestId('bus').textContent()).resolves.toBe('In-process');
    await expect(drv.page.getByRole('listitem').filter({ hasText: 'Sign-up' }).textContent()).resolves.toContain('On');
    await drv.follow('Open the GraphQL playground');
    await drv.page.waitForURL(`${d.url}/graphql`);
    await drv.page.locator('.graphiql-container').waitFor({ timeout: 15_000 });
  }, 90_000);

  it('users: search, page, edit (a role the server refuses), sign out everywhere, revoke and enable access, delete with a confirmation', async () => {
    const tag = `pager${Math.random().toString(36).slice(2, 7)}`;
    const emails = Array.from({ length: 12 }, (_, i) => `${tag}-${String(i).padStart(2, '0')}@example.com`);
    for (const e of emails) expect((await signup(d.url, e)).status).toBe(200);
    const drv = await open();
    await consoleSignIn(drv, d.adminSecret);
    await openSection(drv, 'Users');
    await drv.fill('Search users', tag);
    await drv.click('Search');
    await drv.page.getByText('Page 1 of 2 · 12 users').waitFor();
    expect(await drv.page.locator('tbody tr').count()).toBe(10);
    await drv.click('Next page');
    await drv.page.getByText('Page 2 of 2 · 12 users').waitFor();
    expect(await drv.page.locator('tbody tr').count()).toBe(2);
    await drv.screen(CONSOLE.users);
    // one user's page, from the second page
    const target = (await drv.page.locator('tbody tr a').first().textContent()) ?? '';
    expect(emails).toContain(target);
    await drv.follow(target);
    await drv.screen(target);
    // the server refuses a role outside --roles; the person sees why
    await drv.fill('Roles (comma separated)', 'user, superuser');
    await drv.click('Save changes');
    expect(await drv.alert()).toBe('invalid list of roles');
    await drv.fill('Given name', 'Ada');
    await drv.fill('Family name', 'Lovelace');
    await drv.fill('Roles (comma separated)', 'user, editor');
    await setCheck(drv, 'Email verified', true);
    await drv.click('Save changes');
    await drv.page.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
    const saved = (await post(d.url, '/v1/admin/user', { email: target }, admin(d))).body as { id: string; given_name: string; family_name: string; roles: string[]; email_verified: boolean };
    expect([saved.given_name, saved.family_name, [...saved.roles].sort(), saved.email_verified]).toEqual(['Ada', 'Lovelace', ['editor', 'user'], true]);
    // sign out everywhere: the user's tokens stop working, and they may sign in again at once
    const signedIn = await post(d.url, '/v1/login', { email: target, password: PASSWORD });
    const token = (signedIn.body as { access_token: string }).access_token;
    expect((await fetch(`${d.url}/v1/profile`, { headers: { authorization: `Bearer ${token}` } })).status).toBe(200);
    await drv.click('Sign out everywhere');
    expect(await drv.page.getByRole('status').filter({ hasText: 'Signed out of' }).textContent()).toMatch(/^Signed out of [1-9]\d* sessions?; the user can sign in again\.$/);
    expect((await fetch(`${d.url}/v1/profile`, { headers: { authorization: `Bearer ${token}` } })).status).toBe(401);
    expect((await post(d.url, '/v1/login', { email: target, password: PASSWORD })).status).toBe(200);
    // revoke: the user can no longer sign in; enable: they can again
    await drv.click('Revoke access');
    await drv.page.getByRole('status').filter({ hasText: 'Access revoked' }).waitFor();
    expect((await post(d.url, '/v1/login', { email: target, password: PASSWORD })).status).toBe(401);
    await drv.click('Enable access');
    await drv.page.getByRole('status').filter({ hasText: 'Access enabled.' }).waitFor();
    expect((await post(d.url, '/v1/login', { email: target, password: PASSWORD })).status).toBe(200);
    // delete asks first; Cancel keeps the user
    await drv.click('Delete user');
    await drv.page.getByRole('heading', { name: 'Delete this user?' }).waitFor();
    await drv.screen(target);
    await drv.click('Cancel');
    expect((await post(d.url, '/v1/admin/user', { id: saved.id }, admin(d))).status).toBe(200);
    await drv.click('Delete user');
    await drv.click('Delete permanently');
    await drv.screen(CONSOLE.users);
    expect(await drv.status()).toBe(`Deleted ${target}.`);
    expect((await post(d.url, '/v1/admin/user', { id: saved.id }, admin(d))).status).toBe(404);
    // a search the server refuses (over 256 characters)
    await drv.fill('Search users', 'x'.repeat(300));
    await drv.click('Search');
    expect(await drv.alert()).toMatch(/query/);
  }, 120_000);

  it('audit log: filters by action and resource, pages, shows a row\'s metadata, and shows the server\'s refusal of a time before 1970', async () => {
    const email = address('audited');
    const { body } = await signup(d.url, email);
    const id = (body as { user: { id: string } }).user.id;
    for (let i = 0; i < 3; i++) expect((await post(d.url, '/v1/admin/update_user', { id, given_name: `Name ${i}` }, admin(d))).status).toBe(200);
    await eventually(async () => ((await post(d.url, '/v1/admin/audit_logs', { pagination: { page: 1, limit: 10 }, resource_id: id, action: 'admin.user_updated' }, admin(d))).body as { audit_logs: unknown[] }).audit_logs.length === 3);
    const drv = await open();
    await consoleSignIn(drv, d.adminSecret);
    await openSection(drv, 'Audit log');
    await drv.fill('Action', 'admin.user_updated');
    await drv.fill('Resource ID', id);
    await drv.click('Apply filters');
    await drv.page.getByText('Page 1 of 1 · 3 entries').waitFor();
    expect(await drv.page.locator('tbody tr').count()).toBe(3);
    await drv.page.getByRole('button', { name: 'Show metadata admin.user_updated' }).first().click();
    const metadata = JSON.parse((await drv.page.getByLabel('Metadata', { exact: true }).textContent()) ?? '') as Record<string, unknown>;
    expect(metadata).toEqual(expect.objectContaining({ fields: ['given_name'] }));
    await drv.screen(CONSOLE.audit);
    // paging over everything (more than 20 rows by now)
    await drv.click('Clear filters');
    await drv.page.getByText(/^Page 1 of [2-9]/).waitFor();
    await drv.click('Next page');
    await drv.page.getByText(/^Page 2 of/).waitFor();
    // a time the server refuses
    await drv.fill('From', '1969-06-01T00:00');
    await drv.click('Apply filters');
    expect(await drv.alert()).toBe('from_timestamp must be a Unix timestamp in seconds');
  }, 90_000);

  it('webhooks: add (secret shown once, copied), refuse an unknown event, test, edit, disable, rotate, see deliveries, delete', async () => {
    const drv = await open();
    await drv.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: d.url });
    await consoleSignIn(drv, d.adminSecret);
    await openSection(drv, 'Webhooks');
    // the server refuses an event it does not know
    await drv.fill('Event', 'user.exploded');
    await drv.fill('Endpoint URL', hooks.url);
    await drv.click('Add webhook');
    expect(await drv.alert()).toBe('invalid event name user.exploded');
    // a test event: the endpoint's answer is shown
    await drv.fill('Event', 'user.created');
    await drv.click('Send a test event');
    await drv.page.getByRole('status').filter({ hasText: 'The endpoint answered 200: ok' }).waitFor();
    await drv.click('Add webhook');
    const secret = (await drv.page.getByTestId('secret').textContent()) ?? '';
    expect(secret).toMatch(/^whsec_/);
    await drv.screen(CONSOLE.webhooks);
    await drv.click('Copy');
    await drv.page.getByText('Copied to the clipboard.').waitFor();
    expect(await drv.page.evaluate(() => navigator.clipboard.readText())).toBe(secret);
    await drv.click('I have copied the secret');
    await drv.page.getByTestId('secret').waitFor({ state: 'detached' });
    // a real delivery appears in the logs with its status and attempt
    const before = hooks.received.length;
    expect((await signup(d.url, address('hooked'))).status).toBe(200);
    await eventually(async () => hooks.received.length > before);
    // the log row is written once the endpoint answered
    const [hook] = ((await post(d.url, '/v1/admin/webhooks', { page: 1, limit: 10 }, admin(d))).body as { webhooks: Array<{ id: string }> }).webhooks;
    await eventually(async () => ((await post(d.url, '/v1/admin/webhook_logs', { webhook_id: hook!.id }, admin(d))).body as { webhook_logs: unknown[] }).webhook_logs.length > 0);
    await drv.page.getByRole('button', { name: `Show deliveries ${hooks.url}` }).click();
    await drv.page.getByRole('heading', { name: `Deliveries to ${hooks.url}` }).waitFor();
    await drv.page.getByRole('table', { name: 'Delivery logs' }).getByRole('cell', { name: '200', exact: true }).first().waitFor();
    expect(await drv.page.getByRole('table', { name: 'Delivery logs' }).locator('tbody tr').first().textContent()).toMatch(/2001ok$/);
    await drv.click('Close');
    // edit the description, then disable
    await drv.page.getByRole('button', { name: `Edit ${hooks.url}` }).click();
    await drv.fill('Description', 'new users to the CRM');
    await drv.click('Save webhook');
    await drv.page.getByText('new users to the CRM').waitFor();
    await drv.page.getByRole('button', { name: `Disable ${hooks.url}` }).click();
    await drv.page.getByRole('button', { name: `Enable ${hooks.url}` }).waitFor();
    const list = (await post(d.url, '/v1/admin/webhooks', { page: 1, limit: 10 }, admin(d))).body as { webhooks: Array<{ id: string; enabled: boolean; event_description: string }> };
    expect(list.webhooks.map((w) => [w.enabled, w.event_description])).toEqual([[false, 'new users to the CRM']]);
    // rotate: a new secret, shown once
    await drv.page.getByRole('button', { name: `Rotate signing secret ${hooks.url}` }).click();
    const rotated = (await drv.page.getByTestId('secret').textContent()) ?? '';
    expect(rotated).toMatch(/^whsec_/);
    expect(rotated).not.toBe(secret);
    await drv.click('I have copied the secret');
    // delete asks first
    await drv.page.getByRole('button', { name: `Delete ${hooks.url}` }).click();
    await drv.screen(CONSOLE.webhooks);
    await drv.click('Delete webhook');
    await drv.page.getByRole('status').filter({ hasText: 'Webhook deleted.' }).waitFor();
    await drv.page.getByText('No webhook yet.').waitFor();
  }, 90_000);

  it('clients: refuses a public client with client_credentials; creates one whose secret (shown once) gets a token; rotates it; deactivates; deletes', async () => {
    const token = (clientId: string, secret: string): Promise<number> => fetch(`${d.url}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${Buffer.from(`${clientId}:${secret}`).toString('base64')}` },
      body: 'grant_type=client_credentials',
    }).then((r) => r.status);
    const drv = await open();
    await consoleSignIn(drv, d.adminSecret);
    await openSection(drv, 'Clients');
    await drv.fill('Name', 'reports worker');
    await drv.fill('Allowed scopes', 'read:reports');
    await setCheck(drv, 'Public client (no secret; PKCE required)', true);
    await drv.click('Create client');
    expect(await drv.alert()).toBe('a public client cannot use client_credentials');
    await setCheck(drv, 'Public client (no secret; PKCE required)', false);
    await drv.click('Create client');
    const secret = (await drv.page.getByTestId('secret').textContent()) ?? '';
    await drv.screen(CONSOLE.clients);
    await drv.click('I have copied the secret');
    const row = drv.page.getByRole('row').filter({ hasText: 'reports worker' });
    const clientId = (await row.locator('code').textContent()) ?? '';
    expect(await token(clientId, secret)).toBe(200);
    // rotate: the new secret works, the old one no longer does
    await drv.page.getByRole('button', { name: 'Rotate secret reports worker' }).click();
    const rotated = (await drv.page.getByTestId('secret').textContent()) ?? '';
    expect(rotated).not.toBe(secret);
    await drv.click('I have copied the secret');
    expect([await token(clientId, secret), await token(clientId, rotated)]).toEqual([401, 200]);
    // deactivate: no token
    await drv.page.getByRole('button', { name: 'Deactivate reports worker' }).click();
    await drv.page.getByRole('button', { name: 'Activate reports worker' }).waitFor();
    expect(await token(clientId, rotated)).not.toBe(200);
    // delete asks first
    await drv.page.getByRole('button', { name: 'Delete reports worker' }).click();
    await drv.click('Delete client');
    await drv.page.getByRole('status').filter({ hasText: 'Client deleted.' }).waitFor();
    await row.waitFor({ state: 'detached' });
    const left = (await post(d.url, '/v1/admin/clients', { pagination: { page: 1, limit: 100 } }, admin(d))).body as { clients: Array<{ client_id: string }> };
    expect(left.clients.map((c) => c.client_id)).not.toContain(clientId);
  }, 90_000);

  it('authorization: a model error points at its line and column; a model saved; tuples written, filtered, tested (list_users, expand) and deleted', async () => {
    const drv = await open();
    await consoleSignIn(drv, d.adminSecret);
    await openSection(drv, 'Authorization');
    /** the text of the one non-empty error region (each section of the page has its own) */
    const alert = async (): Promise<string> => {
      const shown = drv.page.getByRole('alert').filter({ hasText: /\S/ });
      await shown.first().waitFor();
      return (await shown.first().textContent()) ?? '';
    };
    const broken = 'model\n  schema 1.1\ntype user\ntype document\n  relations\n    define viewer: [user or editor\n';
    await drv.fill('Model (OpenFGA DSL)', broken);
    await drv.click('Save model');
    const message = await alert();
    const at = /line (\d+), column (\d+)/.exec(message);
    expect(at?.[1]).toBe('6');
    await drv.page.getByText(`The error is at line 6, column ${at![2]}; the cursor is there.`).waitFor();
    const caret = await drv.page.getByLabel('Model (OpenFGA DSL)', { exact: true }).evaluate((el) => {
      const a = el as unknown as { value: string; selectionStart: number };
      return a.value.slice(0, a.selectionStart).split('\n').length;
    });
    expect(caret).toBe(6);
    await drv.screen(CONSOLE.authz);
    const model = 'model\n  schema 1.1\ntype user\ntype document\n  relations\n    define editor: [user]\n    define viewer: [user] or editor\n';
    await drv.fill('Model (OpenFGA DSL)', model);
    await drv.click('Save model');
    await drv.page.getByRole('status').filter({ hasText: /^Model saved: version / }).waitFor();
    // a tuple the model refuses, then one it takes
    const write = async (user: string, relation: string, object: string): Promise<void> => {
      await drv.fill('User', user);
      await drv.fill('Relation', relation);
      await drv.fill('Object', object);
      await drv.click('Write tuple');
    };
    await write('user:ada', 'owner', 'document:roadmap');
    expect(await alert()).toMatch(/owner/);
    await write('user:ada', 'editor', 'document:roadmap');
    await drv.page.getByRole('status').filter({ hasText: 'Tuple written.' }).waitFor();
    await write('user:grace', 'viewer', 'document:budget');
    await drv.page.getByRole('status').filter({ hasText: 'Tuple written.' }).waitFor();
    const tuples = drv.page.getByRole('table', { name: 'Tuples' });
    await tuples.getByRole('cell', { name: 'user:grace', exact: true }).waitFor();
    await drv.fill('Filter by object', 'document:roadmap');
    await drv.click('Filter tuples');
    await tuples.getByRole('cell', { name: 'user:grace', exact: true }).waitFor({ state: 'detached' });
    expect(await tuples.locator('tbody tr').count()).toBe(1);
    // who may view the roadmap: ada, through editor
    await drv.fill('Relation to test', 'viewer');
    await drv.fill('Object to test', 'document:roadmap');
    await drv.click('Test');
    await drv.page.getByTestId('list-users').getByText('user:ada', { exact: true }).waitFor();
    // expand is one level deep (OpenFGA's): viewer is the union of its direct users and the editors
    const tree = drv.page.getByTestId('expand-tree');
    expect(await tree.getByRole('listitem').filter({ hasText: /^computed/ }).first().textContent()).toContain('document:roadmap#editor');
    expect(await tree.getByText('union', { exact: true }).count()).toBe(1);
    await drv.screen(CONSOLE.authz);
    // delete asks first
    await drv.page.getByRole('button', { name: 'Delete user:ada editor document:roadmap' }).click();
    await drv.click('Delete tuple');
    await drv.page.getByRole('status').filter({ hasText: 'Tuple deleted.' }).waitFor();
    await drv.page.getByText('No tuple matches.').waitFor();
  }, 90_000);
  it('organizations: a name the server refuses; create; members; a domain\'s TXT record and the DNS refusal; OIDC SSO; SCIM token shown once and rotated; SAML IdP service provider from metadata and keys; delete', async () => {
    const tag = Math.random().toString(36).slice(2, 8);
    const member = address('orgmember');
    expect((await signup(d.url, member)).status).toBe(200);
    const drv = await open();
    await drv.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: d.url });
    await consoleSignIn(drv, d.adminSecret);
    await openSection(drv, 'Organizations');
    await drv.fill('Name', 'acme corp');
    await drv.click('Create organization');
    expect(await drv.alert()).toBe('organization name must be a URL-safe slug: the character " " is not allowed');
    await drv.fill('Name', `acme-${tag}`);
    await drv.fill('Display name', `Acme ${tag}`);
    await drv.click('Create organization');
    await drv.screen(`Acme ${tag}`);
    const orgId = (await drv.page.getByRole('region', { name: 'Settings' }).locator('code').first().textContent()) ?? '';
    const section = (name: string) => drv.page.getByRole('region', { name, exact: true });
    const shown = async (name: string, text: string | RegExp): Promise<void> => { await section(name).getByRole('status').filter({ hasText: text }).waitFor(); };
    const refused = async (name: string): Promise<string> => {
      const alert = section(name).getByRole('alert').filter({ hasText: /\S/ });
      await alert.first().waitFor();
      return (await alert.first().textContent()) ?? '';
    };
    // members: by email address, as an org admin
    await section('Members').getByLabel('User (email address or ID)', { exact: true }).fill(member);
    await section('Members').getByLabel('Org roles', { exact: true }).fill('service:org_admin');
    await drv.click('Add member');
    await section('Members').getByRole('cell', { name: member, exact: true }).waitFor();
    const members = (await post(d.url, '/v1/admin/org_members', { org_id: orgId }, admin(d))).body as { org_members: Array<{ email: string; roles: string[] }> };
    expect(members.org_members.map((m) => [m.email, m.roles])).toEqual([[member, ['service:org_admin']]]);
    // a domain: the TXT record to publish; Verify looks it up, and the refusal is shown
    const domain = `acme-${tag}.example.com`;
    await section('Domains').getByLabel('Domain', { exact: true }).fill(domain);
    await drv.click('Request verification');
    const challenge = drv.page.getByTestId('domain-challenge');
    await challenge.getByText(`_service-challenge.${domain}`, { exact: true }).waitFor();
    expect(await challenge.locator('code.secret').textContent()).toMatch(/^service-domain-verification=[a-z2-7]{52}$/);
    await drv.page.getByRole('button', { name: `Verify ${domain}` }).click();
    expect(await refused('Domains')).toMatch(/^dns verification failed: /);
    await section('Domains').getByLabel('Domain', { exact: true }).fill(`sso-${tag}.example.org`);
    await drv.click('Add as verified (skip DNS)');
    await section('Domains').getByRole('cell', { name: /^Verified on / }).waitFor();
    // OIDC single sign-on: an http issuer is refused, an https one taken
    const oidc = section('OIDC single sign-on');
    await oidc.getByLabel('Connection name', { exact: true }).fill('Okta');
    await oidc.getByLabel('Issuer URL', { exact: true }).fill(`http://idp-${tag}.example.com`);
    await oidc.getByLabel('Client ID at the identity provider', { exact: true }).fill('gatehouse');
    await oidc.getByLabel('Client secret at the identity provider', { exact: true }).fill('s3cret');
    await drv.click('Create OIDC connection');
    expect(await refused('OIDC single sign-on')).toBe('issuer_url must be a valid https URL');
    await oidc.getByLabel('Issuer URL', { exact: true }).fill(`https://idp-${tag}.example.com`);
    await drv.click('Create OIDC connection');
    await shown('OIDC single sign-on', 'Connection created.');
    await drv.page.getByRole('button', { name: 'Save OIDC connection' }).waitFor();
    const conn = (await post(d.url, '/v1/admin/org_oidc_connection', { org_id: orgId }, admin(d))).body as { issuer_url: string; sso_client_id: string };
    expect([conn.issuer_url, conn.sso_client_id]).toEqual([`https://idp-${tag}.example.com`, 'gatehouse']);
    // SCIM: the token is shown once and works; a rotation ends the old one
    const scimUsers = (token: string): Promise<number> => fetch(`${d.url}/scim/v2/Users`, { headers: { authorization: `Bearer ${token}` } }).then((r) => r.status);
    await drv.click('Create SCIM endpoint');
    const token = (await drv.page.getByTestId('secret').textContent()) ?? '';
    expect(await drv.page.getByTestId('scim-base').textContent()).toBe(`${d.url}/scim/v2`);
    expect(await scimUsers(token)).toBe(200);
    await drv.click('I have copied the secret');
    await drv.click('Rotate SCIM token');
    const rotated = (await drv.page.getByTestId('secret').textContent()) ?? '';
    expect(rotated).not.toBe(token);
    expect([await scimUsers(token), await scimUsers(rotated)]).toEqual([401, 200]);
    await drv.click('I have copied the secret');
    // SAML IdP: a service provider from pasted metadata, then the signing keys
    const idp = section('SAML identity provider');
    const xml = `<md:EntityDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata" entityID="https://sp-${tag}.example.com/metadata"><md:SPSSODescriptor protocolSupportEnumeration="urn:oasis:names:tc:SAML:2.0:protocol"><md:AssertionConsumerService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST" Location="https://sp-${tag}.example.com/acs" index="0"/></md:SPSSODescriptor></md:EntityDescriptor>`;
    await idp.getByLabel('Service provider metadata (XML)', { exact: true }).fill('<md:EntityDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata" entityID="urn:x"/>');
    await drv.click('Read metadata');
    expect(await refused('SAML identity provider')).toBe('metadata did not contain an SP entity ID and Assertion Consumer Service URL');
    await idp.getByLabel('Service provider metadata (XML)', { exact: true }).fill(xml);
    await drv.click('Read metadata');
    await shown('SAML identity provider', /^Metadata read/);
    expect(await idp.getByLabel('ACS URL', { exact: true }).inputValue()).toBe(`https://sp-${tag}.example.com/acs`);
    await idp.getByLabel('Service provider name', { exact: true }).fill('Wiki');
    await drv.click('Add service provider');
    await idp.getByRole('cell', { name: 'Wiki', exact: true }).waitFor();
    await drv.click('Rotate signing key');
    await idp.getByRole('cell', { name: 'current', exact: true }).waitFor();
    await drv.click('Rotate signing key');
    await idp.getByRole('cell', { name: 'active', exact: true }).waitFor();
    const keys = (await post(d.url, '/v1/admin/saml_idp_keys', { org_id: orgId }, admin(d))).body as { saml_idp_keys: Array<{ id: string; status: string }> };
    const current = keys.saml_idp_keys.find((k) => k.status === 'current')!;
    const previous = keys.saml_idp_keys.find((k) => k.status === 'active')!;
    await drv.page.getByRole('button', { name: `Retire ${current.id}` }).click();
    expect(await refused('SAML identity provider')).toBe('cannot retire the current signing key; rotate to a new key first');
    await drv.page.getByRole('button', { name: `Retire ${previous.id}` }).click();
    await shown('SAML identity provider', 'signing key retired');
    await drv.screen(`Acme ${tag}`);
    // delete asks first, then the list says so
    await drv.click('Delete organization');
    await drv.click('Delete permanently');
    await drv.screen(CONSOLE.orgs);
    await drv.page.getByRole('status').filter({ hasText: `Organization acme-${tag} deleted.` }).waitFor();
    expect((await post(d.url, '/v1/admin/organization', { id: orgId }, admin(d))).status).toBe(404);
  }, 120_000);

  it('trusted issuers: a duplicate issuer is refused; add under a service account, edit, deactivate, delete', async () => {
    const tag = Math.random().toString(36).slice(2, 8);
    const sa = (await post(d.url, '/v1/admin/create_client', { name: `workload ${tag}`, allowed_scopes: ['read:docs'] }, admin(d))).body as { client: { id: string } };
    const issuerUrl = `https://issuer-${tag}.example.com`;
    const drv = await open();
    await consoleSignIn(drv, d.adminSecret);
    await openSection(drv, 'Trusted issuers');
    await drv.page.getByLabel('Service account', { exact: true }).selectOption(sa.client.id);
    await drv.fill('Name', 'cluster');
    await drv.fill('Issuer URL', issuerUrl);
    await drv.page.getByLabel('Issuer type', { exact: true }).selectOption('kubernetes_sa');
    await drv.page.getByLabel('Keys from', { exact: true }).selectOption('static_jwks_url');
    await drv.fill('JWKS URL', `${issuerUrl}/jwks.json`);
    await drv.fill('Expected audience', 'gatehouse');
    await drv.fill('Allowed subjects', 'system:serviceaccount:apps:api');
    await drv.click('Add trusted issuer');
    await drv.page.getByRole('status').filter({ hasText: 'Trusted issuer added.' }).waitFor();
    const row = drv.page.getByRole('row').filter({ hasText: issuerUrl });
    expect(await row.textContent()).toContain(`workload ${tag}`);
    // the same issuer again
    await drv.page.getByLabel('Service account', { exact: true }).selectOption(sa.client.id);
    await drv.fill('Name', 'again');
    await drv.fill('Issuer URL', issuerUrl);
    await drv.fill('Expected audience', 'gatehouse');
    await drv.click('Add trusted issuer');
    expect(await drv.alert()).toBe(`issuer_url already registered: ${issuerUrl}`);
    await drv.screen(CONSOLE.issuers);
    // edit: audience and deactivation
    await drv.page.getByRole('button', { name: 'Edit cluster' }).click();
    await drv.fill('Expected audience', 'gatehouse-prod');
    await setCheck(drv, 'Active', false);
    await drv.click('Save trusted issuer');
    await drv.page.getByRole('status').filter({ hasText: 'Trusted issuer saved.' }).waitFor();
    const list = (await post(d.url, '/v1/admin/trusted_issuers', { service_account_id: sa.client.id }, admin(d))).body as { trusted_issuers: Array<{ expected_aud: string; is_active: boolean; issuer_type: string; allowed_subjects: string }> };
    expect(list.trusted_issuers.map((x) => [x.expected_aud, x.is_active, x.issuer_type, x.allowed_subjects])).toEqual([['gatehouse-prod', false, 'kubernetes_sa', 'system:serviceaccount:apps:api']]);
    await drv.page.getByRole('button', { name: 'Delete cluster' }).click();
    await drv.click('Delete trusted issuer');
    await drv.page.getByRole('status').filter({ hasText: 'Trusted issuer deleted.' }).waitFor();
    await row.waitFor({ state: 'detached' });
  }, 90_000);

  it('email templates: a construct the server refuses; the preview fills the placeholders; add, edit, delete', async () => {
    const drv = await open();
    await consoleSignIn(drv, d.adminSecret);
    await openSection(drv, 'Email templates');
    await drv.page.getByLabel('Event', { exact: true }).selectOption('forgot_password');
    await drv.fill('Subject', 'Reset your {{.organization.name}} password');
    await drv.fill('Body (HTML)', '<p>Hello {{if .user.given_name}}</p>');
    await drv.click('Add template');
    expect(await drv.alert()).toBe('unsupported template syntax: {{if .user.given_name}}');
    await drv.fill('Body (HTML)', '<style>p { color: red }</style><h2>Hello {{ .user.given_name }}</h2><p style="color:red">Follow <a href="{{.verification_url}}">this link</a>.</p><script>alert(1)</script>');
    await expect(drv.page.getByTestId('preview-subject').textContent()).resolves.toBe('Reset your Gatehouse password');
    const preview = drv.page.getByTestId('preview-body');
    await preview.getByRole('heading', { name: 'Hello Ada' }).waitFor();
    expect(await preview.getByRole('link', { name: 'this link' }).getAttribute('href')).toBe('https://auth.example.com/verify_email?token=sample');
    expect(await preview.innerHTML()).not.toMatch(/script|style=/);
    await drv.click('Add template');
    await drv.page.getByRole('status').filter({ hasText: 'Email template added.' }).waitFor();
    await drv.screen(CONSOLE.templates);
    await drv.page.getByRole('button', { name: 'Edit forgot_password' }).click();
    await drv.fill('Subject', 'Your password reset');
    await drv.click('Save template');
    await drv.page.getByRole('cell', { name: 'Your password reset', exact: true }).waitFor();
    const saved = (await post(d.url, '/v1/admin/email_templates', { page: 1, limit: 10 }, admin(d))).body as { email_templates: Array<{ event_name: string; subject: string; template: string }> };
    expect(saved.email_templates.map((x) => [x.event_name, x.subject])).toEqual([['forgot_password', 'Your password reset']]);
    expect(saved.email_templates[0]!.template).toContain('{{ .user.given_name }}');
    await drv.page.getByRole('button', { name: 'Delete forgot_password' }).click();
    await drv.click('Delete template');
    await drv.page.getByText('No template yet: the built-in mails are sent.').waitFor();
  }, 90_000);

  it('email templates: the design is edited as JSON text, refused in the page when it is not JSON, and kept by the server', async () => {
    const drv = await open();
    await consoleSignIn(drv, d.adminSecret);
    await openSection(drv, 'Email templates');
    await drv.page.getByLabel('Event', { exact: true }).selectOption('magic_link_login');
    await drv.fill('Subject', 'Your sign-in link');
    await drv.fill('Body (HTML)', '<p><a href="{{.verification_url}}">Sign in</a></p>');
    await drv.fill('Design (JSON, optional)', '{"body": {"rows": [}');
    await drv.click('Add template');
    expect(await drv.alert()).toBe('The design must be JSON, for example {"body": {"rows": []}}, or left empty.');
    const list = async (): Promise<Array<{ id: string; event_name: string; design: string }>> =>
      ((await post(d.url, '/v1/admin/email_templates', { page: 1, limit: 10 }, admin(d))).body as { email_templates: Array<{ id: string; event_name: string; design: string }> }).email_templates
        .filter((x) => x.event_name === 'magic_link_login');
    expect(await list()).toEqual([]);
    const design = '{"body": {"rows": [{"cells": [1]}]}}';
    await drv.fill('Design (JSON, optional)', design);
    await drv.click('Add template');
    await drv.page.getByRole('status').filter({ hasText: 'Email template added.' }).waitFor();
    expect((await list()).map((x) => x.design)).toEqual([design]);
    // the edit form shows the stored design; a new one replaces it
    await drv.page.getByRole('button', { name: 'Edit magic_link_login' }).click();
    expect(await drv.page.getByLabel('Design (JSON, optional)', { exact: true }).inputValue()).toBe(design);
    await drv.fill('Design (JSON, optional)', '[]');
    await drv.click('Save template');
    await drv.page.getByRole('status').filter({ hasText: 'Email template saved.' }).waitFor();
    expect((await list()).map((x) => x.design)).toEqual(['[]']);
    await drv.screen(CONSOLE.templates);
    await drv.page.getByRole('button', { name: 'Delete magic_link_login' }).click();
    await drv.click('Delete template');
    await drv.page.getByText('No template yet: the built-in mails are sent.').waitFor();
  }, 90_000);

  it('clients: the logout URIs (front- and back-channel) are refused when not absolute and saved on the client', async () => {
    const drv = await open();
    await consoleSignIn(drv, d.adminSecret);
    await openSection(drv, 'Clients');
    await drv.fill('Name', 'portal');
    await drv.fill('Allowed scopes', 'openid');
    await drv.fill('Redirect URIs', 'https://portal.example.com/callback');
    await setCheck(drv, 'authorization_code', true);
    await setCheck(drv, 'client_credentials', false);
    await drv.fill('Post-logout redirect URIs', 'https://portal.example.com/bye');
    await drv.fill('Back-channel logout URI', 'portal/logout');
    await drv.click('Create client');
    expect(await drv.alert()).toBe('backchannel_logout_uri must be an absolute http(s) URL without a fragment');
    await drv.fill('Back-channel logout URI', 'https://portal.example.com/backchannel');
    await setCheck(drv, 'Back-channel logout needs the session ID (sid)', true);
    await drv.fill('Front-channel logout URI', 'https://portal.example.com/frontchannel');
    await drv.click('Create client');
    await drv.page.getByTestId('secret').waitFor();
    await drv.click('I have copied the secret');
    const find = async () => ((await post(d.url, '/v1/admin/clients', { pagination: { page: 1, limit: 100 } }, admin(d))).body as { clients: Array<Record<string, unknown>> }).clients.find((c) => c.name === 'portal')!;
    expect(await find()).toMatchObject({
      post_logout_redirect_uris: ['https://portal.example.com/bye'], backchannel_logout_uri: 'https://portal.example.com/backchannel', backchannel_logout_session_required: true,
      frontchannel_logout_uri: 'https://portal.example.com/frontchannel', frontchannel_logout_session_required: false,
    });
    // edit: the form shows them; emptying the front-channel URI removes it
    await drv.page.getByRole('button', { name: 'Edit client portal' }).click();
    expect(await drv.page.getByLabel('Back-channel logout URI', { exact: true }).inputValue()).toBe('https://portal.example.com/backchannel');
    await drv.fill('Front-channel logout URI', '');
    await drv.click('Save client');
    await drv.page.getByRole('status').filter({ hasText: 'Client saved.' }).waitFor();
    const after = await find();
    expect([after.frontchannel_logout_uri ?? null, after.backchannel_logout_uri]).toEqual([null, 'https://portal.example.com/backchannel']);
    // emptying the post-logout redirect URIs removes them (the form sends clear_post_logout_redirect_uris)
    await drv.page.getByRole('button', { name: 'Edit client portal' }).click();
    expect(await drv.page.getByLabel('Post-logout redirect URIs', { exact: true }).inputValue()).toBe('https://portal.example.com/bye');
    await drv.fill('Post-logout redirect URIs', '');
    await drv.click('Save client');
    await drv.page.getByRole('status').filter({ hasText: 'Client saved.' }).waitFor();
    expect((await find()).post_logout_redirect_uris).toEqual([]);
    await drv.page.getByRole('button', { name: 'Edit client portal' }).click();
    expect(await drv.page.getByLabel('Post-logout redirect URIs', { exact: true }).inputValue()).toBe('');
    await drv.click('Cancel');
  }, 90_000);

  it('update_client: an empty post_logout_redirect_uris keeps them, clear_post_logout_redirect_uris removes them, both at once are refused; GraphQL leaves them alone', async () => {
    const created = (await post(d.url, '/v1/admin/create_client', {
      name: `rp-${Math.random().toString(36).slice(2, 8)}`, allowed_scopes: ['openid'], redirect_uris: ['https://rp.example.com/cb'],
      grant_types: ['authorization_code'], post_logout_redirect_uris: ['https://rp.example.com/bye', 'https://rp.example.com/later'],
    }, admin(d))).body as { client: { id: string } };
    const id = created.client.id;
    const update = (body: Record<string, unknown>) => post(d.url, '/v1/admin/update_client', { id, ...body }, admin(d));
    const uris = async (): Promise<unknown> => ((await post(d.url, '/v1/admin/client', { id }, admin(d))).body as { post_logout_redirect_uris: string[] }).post_logout_redirect_uris;
    const logoutTo = async (): Promise<[number, string | null]> => {
      const r = await fetch(`${d.url}/logout?client_id=${id}&post_logout_redirect_uri=${encodeURIComponent('https://rp.example.com/bye')}`, { redirect: 'manual' });
      return [r.status, r.headers.get('location')];
    };
    expect((await logoutTo())[1]).toBe('https://rp.example.com/bye');
    expect(((await update({ name: 'renamed', post_logout_redirect_uris: [] })).body as Record<string, unknown>).post_logout_redirect_uris).toEqual(['https://rp.example.com/bye', 'https://rp.example.com/later']);
    const gql = await post(d.url, '/graphql', { query: 'mutation($p: UpdateClientRequest!) { _update_client(params: $p) { id name } }', variables: { p: { id, name: 'by-graphql' } } }, admin(d));
    expect(gql.body).toEqual({ data: { _update_client: { id, name: 'by-graphql' } } });
    expect(await uris()).toEqual(['https://rp.example.com/bye', 'https://rp.example.com/later']);
    const both = await update({ post_logout_redirect_uris: ['https://rp.example.com/x'], clear_post_logout_redirect_uris: true });
    expect([both.status, both.body]).toEqual([400, { code: 'invalid_argument', message: 'clear_post_logout_redirect_uris cannot be combined with post_logout_redirect_uris' }]);
    expect(await uris()).toEqual(['https://rp.example.com/bye', 'https://rp.example.com/later']);
    const cleared = await update({ clear_post_logout_redirect_uris: true });
    expect([cleared.status, (cleared.body as Record<string, unknown>).post_logout_redirect_uris]).toEqual([200, []]);
    expect(await uris()).toEqual([]);
    // a cleared client's former target is no longer followed after logout
    expect(await logoutTo()).toEqual([200, null]);
    expect(((await update({ post_logout_redirect_uris: ['https://rp.example.com/again'] })).body as Record<string, unknown>).post_logout_redirect_uris).toEqual(['https://rp.example.com/again']);
  }, 60_000);

  it('authorization: the model versions, newest first, with their text; a user\'s check and permissions', async () => {
    const v1 = 'model\n  schema 1.1\ntype user\ntype folder\n  relations\n    define viewer: [user]\n';
    const v2 = `${v1}type report\n  relations\n    define reader: [user]\n    define owner: [user]\n`;
    const first = (await post(d.url, '/v1/admin/fga/model', { dsl: v1 }, admin(d))).body as { id: string };
    const second = (await post(d.url, '/v1/admin/fga/model', { dsl: v2 }, admin(d))).body as { id: string };
    expect((await post(d.url, '/v1/admin/fga/tuples', { tuples: [{ user: 'user:lin', relation: 'reader', object: 'report:q3' }, { user: 'user:lin', relation: 'owner', object: 'report:q4' }] }, admin(d))).status).toBe(200);
    const page = (await post(d.url, '/v1/admin/fga/models', { page_size: 1 }, admin(d))).body as { models: Array<{ id: string }>; continuation_token: string };
    expect(page.models.map((m) => m.id)).toEqual([second.id]);
    expect(((await post(d.url, '/v1/admin/fga/models', { page_size: 1, continuation_token: page.continuation_token }, admin(d))).body as { models: Array<{ id: string }> }).models.map((m) => m.id)).toEqual([first.id]);
    expect((await post(d.url, '/v1/admin/fga/models', { page_size: 101 }, admin(d))).body).toEqual({ code: 'invalid_argument', message: 'page_size must be between 1 and 100' });
    const drv = await open();
    await consoleSignIn(drv, d.adminSecret);
    await openSection(drv, 'Authorization');
    const history = drv.page.getByRole('table', { name: 'Model versions' });
    await history.getByRole('cell', { name: second.id, exact: true }).waitFor();
    const ids = await history.locator('tbody tr td:first-child code').allTextContents();
    expect(ids.indexOf(second.id)).toBe(0);
    expect(ids.indexOf(first.id)).toBe(1);
    expect(await history.locator('tbody tr').first().textContent()).toContain('Active');
    await drv.page.getByRole('button', { name: `Show model ${first.id}` }).click();
    expect(await drv.page.getByTestId(`model-${first.id}`).textContent()).toBe(v1);
    // one user's check and permissions
    await drv.fill('User to test', 'user:lin');
    await drv.fill('Relation to check', 'reader');
    await drv.fill('Object (for a check)', 'report:q3');
    await drv.click('Check');
    await expect(drv.page.getByTestId('check-result').textContent()).resolves.toBe('Allowed: user:lin has reader on report:q3.');
    await drv.fill('Object (for a check)', 'report:q4');
    await drv.click('Check');
    await expect(drv.page.getByTestId('check-result').textContent()).resolves.toBe('Denied: user:lin does not have reader on report:q4.');
    await drv.fill('Relation to check', '');
    await drv.fill('Object type (for a list)', 'report');
    await drv.click('List permissions');
    const perms = drv.page.getByTestId('permissions');
    await perms.getByRole('listitem').first().waitFor();
    expect((await perms.getByRole('listitem').allTextContents()).sort()).toEqual(['owner report:q4', 'reader report:q3']);
    await drv.screen(CONSOLE.authz);
    // a check the server refuses (no object)
    await drv.fill('Object (for a check)', '');
    await drv.fill('Relation to check', 'reader');
    await drv.click('Check');
    const refusal = drv.page.getByRole('region', { name: 'What may a user do?' }).getByRole('alert');
    await refusal.filter({ hasText: /\S/ }).waitFor();
    expect(await refusal.textContent()).toBe('each check requires relation and object');
  }, 90_000);

  it('authorization: an earlier model version is made current again (a new version with its text); _fga_read_models answers as fga/models', async () => {
    const v1 = 'model\n  schema 1.1\ntype user\ntype album\n  relations\n    define owner: [user]\n';
    const v2 = `${v1}type photo\n  relations\n    define viewer: [user]\n`;
    const first = (await post(d.url, '/v1/admin/fga/model', { dsl: v1 }, admin(d))).body as { id: string };
    const second = (await post(d.url, '/v1/admin/fga/model', { dsl: v2 }, admin(d))).body as { id: string };
    // GraphQL: the same versions, newest first, with the same paging
    const rest = (await post(d.url, '/v1/admin/fga/models', { page_size: 2 }, admin(d))).body as { models: Array<{ id: string; dsl: string }>; continuation_token: string };
    const q = 'query($p: FgaReadModelsInput) { _fga_read_models(params: $p) { models { id dsl } continuation_token } }';
    const viaGql = await post(d.url, '/graphql', { query: q, variables: { p: { page_size: 2 } } }, admin(d));
    expect(viaGql.body).toEqual({ data: { _fga_read_models: rest } });
    expect(rest.models.map((m) => m.id)).toEqual([second.id, first.id]);
    expect(((await post(d.url, '/graphql', { query: q }, admin(d))).body as { data: { _fga_read_models: { models: Array<{ id: string }> } } }).data._fga_read_models.models[0]!.id).toBe(second.id);
    const badPage = (await post(d.url, '/graphql', { query: q, variables: { p: { page_size: 0.5 } } }, admin(d))).body as { errors: unknown[] };
    expect(badPage.errors.length).toBeGreaterThan(0);
    expect(((await post(d.url, '/graphql', { query: q, variables: { p: { page_size: 101 } } }, admin(d))).body as { errors: Array<{ message: string }> }).errors[0]!.message).toBe('page_size must be between 1 and 100');
    expect(((await post(d.url, '/graphql', { query: q }, {})).body as { errors: Array<{ message: string }> }).errors[0]!.message).toBe('unauthorized');
    // the console: make the first version current again
    const drv = await open();
    await consoleSignIn(drv, d.adminSecret);
    await openSection(drv, 'Authorization');
    const history = drv.page.getByRole('table', { name: 'Model versions' });
    await history.getByRole('cell', { name: second.id, exact: true }).waitFor();
    expect(await drv.page.getByRole('button', { name: `Make current ${second.id}` }).count()).toBe(0);
    await drv.page.getByRole('button', { name: `Make current ${first.id}` }).click();
    await drv.page.getByText(`Make version ${first.id} the current model again?`, { exact: false }).waitFor();
    await drv.screen(CONSOLE.authz);
    await drv.click('Make current');
    const done = drv.page.getByRole('region', { name: 'Model versions' }).getByRole('status').filter({ hasText: /\S/ });
    await done.waitFor();
    const restoredId = /as version (\S+)\.$/.exec((await done.textContent()) ?? '')?.[1] ?? '';
    expect(await done.textContent()).toBe(`Version ${first.id} is current again, as version ${restoredId}.`);
    const active = (await get(d.url, '/v1/admin/fga/model', admin(d))).body as { id: string; dsl: string };
    expect([active.id, active.dsl]).toEqual([restoredId, v1]);
    // the history and the editor show the restored version
    await history.getByRole('cell', { name: restoredId, exact: true }).waitFor();
    expect((await history.locator('tbody tr td:first-child code').allTextContents()).slice(0, 3)).toEqual([restoredId, second.id, first.id]);
    await drv.page.getByText(`Current version: ${restoredId}`, { exact: true }).waitFor();
    expect(await drv.page.getByLabel('Model (OpenFGA DSL)', { exact: true }).inputValue()).toBe(v1);
    await drv.screen(CONSOLE.authz);
  }, 90_000);

  it('authorization: a tuple written with a condition and its context; the permission tester with a condition context and contextual tuples', async () => {
    const model = 'model\n  schema 1.1\ntype user\ntype doc\n  relations\n    define viewer: [user, user with in_network]\ncondition in_network(ip: ipaddress, cidr: string) {\n  ip.in_cidr(cidr)\n}\n';
    expect((await post(d.url, '/v1/admin/fga/model', { dsl: model }, admin(d))).status).toBe(200);
    const kim = `user:kim${Math.random().toString(36).slice(2, 7)}`;
    const drv = await open();
    await consoleSignIn(drv, d.adminSecret);
    await openSection(drv, 'Authorization');
    const tuples = drv.page.getByRole('region', { name: 'Relationship tuples' });
    await drv.page.locator('#az-w-user').fill(kim);
    await drv.page.locator('#az-w-relation').fill('viewer');
    await drv.page.locator('#az-w-object').fill('doc:office');
    await drv.page.locator('#az-w-condition').fill('in_network');
    // not a JSON object: refused in the page, nothing written
    await drv.fill('Condition context (optional)', '["10.0.0.0/8"]');
    await drv.click('Write tuple');
    const tupleError = tuples.getByRole('alert').filter({ hasText: /\S/ });
    await tupleError.waitFor();
    expect(await tupleError.textContent()).toBe('The condition context must be a JSON object, for example {"ip": "10.0.0.1"}.');
    await drv.fill('Condition context (optional)', '{"cidr": "10.0.0.0/8"}');
    await drv.click('Write tuple');
    await tuples.getByRole('status').filter({ hasText: 'Tuple written.' }).waitFor();
    const stored = (await post(d.url, '/v1/admin/fga/tuples/read', { user: kim }, admin(d))).body as { tuples: unknown[] };
    expect(stored.tuples).toEqual([{ user: kim, relation: 'viewer', object: 'doc:office', condition: { name: 'in_network', context: { cidr: '10.0.0.0/8' } } }]);
    await tuples.getByText('{"cidr":"10.0.0.0/8"}', { exact: true }).waitFor();
    // the tester: the condition's context decides
    const tester = drv.page.getByRole('region', { name: 'What may a user do?' });
    const result = async (): Promise<string> => (await drv.page.getByTestId('check-result').textContent()) ?? '';
    await drv.fill('User to test', kim);
    await drv.fill('Relation to check', 'viewer');
    await drv.fill('Object (for a check)', 'doc:office');
    await drv.fill('Condition context for the test (optional)', '{"ip": "10.1.2.3"}');
    await drv.click('Check');
    await drv.page.getByTestId('check-result').waitFor();
    expect(await result()).toBe(`Allowed: ${kim} has viewer on doc:office.`);
    await drv.fill('Condition context for the test (optional)', '{"ip": "192.168.0.1"}');
    await drv.click('Check');
    await drv.page.getByTestId('check-result').filter({ hasText: 'Denied' }).waitFor();
    // without the parameter, the server's refusal is shown
    await drv.fill('Condition context for the test (optional)', '');
    await drv.click('Check');
    const refusal = tester.getByRole('alert').filter({ hasText: /\S/ });
    await refusal.waitFor();
    expect(await refusal.textContent()).toBe(`failed to evaluate relationship condition 'in_network': tuple 'doc:office#viewer@${kim}' is missing context parameters '[ip]'`);
    // a contextual tuple counts for the test only
    await drv.fill('Condition context for the test (optional)', '{"ip": "10.1.2.3"}');
    await drv.fill('Object (for a check)', 'doc:plans');
    await drv.click('Check');
    await drv.page.getByTestId('check-result').filter({ hasText: 'Denied' }).waitFor();
    await drv.fill('Contextual tuples (optional)', `${kim} viewer\n`);
    await drv.click('Check');
    await refusal.filter({ hasText: 'line 1' }).waitFor();
    expect(await refusal.textContent()).toBe('Contextual tuple on line 1: write user, relation and object separated by spaces.');
    await drv.fill('Contextual tuples (optional)', `\n${kim} viewer doc:plans\n`);
    await drv.click('Check');
    await drv.page.getByTestId('check-result').filter({ hasText: 'Allowed' }).waitFor();
    expect(await result()).toBe(`Allowed: ${kim} has viewer on doc:plans.`);
    await drv.screen(CONSOLE.authz);
    // list_permissions takes both: the stored conditioned tuple and the contextual one
    await drv.fill('Object type (for a list)', 'doc');
    await drv.click('List permissions');
    const perms = drv.page.getByTestId('permissions');
    await perms.getByRole('listitem').nth(1).waitFor();
    expect((await perms.getByRole('listitem').allTextContents()).sort()).toEqual(['viewer doc:office', 'viewer doc:plans']);
    expect((await post(d.url, '/v1/admin/fga/tuples/read', { user: kim }, admin(d))).body).toMatchObject({ tuples: [{ object: 'doc:office' }] });
  }, 90_000);

  it('authorization: who has access, with contextual tuples and a condition context (list_users), the tree from the stored and contextual tuples (expand)', async () => {
    const model = 'model\n  schema 1.1\ntype user\ntype doc\n  relations\n    define viewer: [user, user with in_network]\ncondition in_network(ip: ipaddress, cidr: string) {\n  ip.in_cidr(cidr)\n}\n';
    expect((await post(d.url, '/v1/admin/fga/model', { dsl: model }, admin(d))).status).toBe(200);
    const tag = Math.random().toString(36).slice(2, 7);
    const [lee, zed, room] = [`user:lee${tag}`, `user:zed${tag}`, `doc:room${tag}`];
    expect((await post(d.url, '/v1/admin/fga/tuples', { tuples: [{ user: lee, relation: 'viewer', object: room, condition: { name: 'in_network', context: { cidr: '10.0.0.0/8' } } }] }, admin(d))).status).toBe(200);
    const drv = await open();
    await consoleSignIn(drv, d.adminSecret);
    await openSection(drv, 'Authorization');
    const tester = drv.page.getByRole('region', { name: 'Who has access?' });
    const refusal = tester.getByRole('alert').filter({ hasText: /\S/ });
    const listed = drv.page.getByTestId('list-users');
    const users = async (): Promise<string[]> => (await listed.getByRole('listitem').allTextContents()).sort();
    await drv.fill('Relation to test', 'viewer');
    await drv.fill('Object to test', room);
    // a context that is not a JSON object is refused in the page
    await drv.fill('Condition context for the access test (optional)', '"10.1.2.3"');
    await drv.click('Test');
    await refusal.waitFor();
    expect(await refusal.textContent()).toBe('The condition context must be a JSON object, for example {"ip": "10.0.0.1"}.');
    // the condition's context decides whether the conditioned tuple counts
    await drv.fill('Condition context for the access test (optional)', '{"ip": "10.1.2.3"}');
    await drv.click('Test');
    await listed.getByText(lee, { exact: true }).waitFor();
    expect(await users()).toEqual([lee]);
    await drv.fill('Condition context for the access test (optional)', '{"ip": "192.168.0.1"}');
    await drv.click('Test');
    await drv.page.getByText('No user has this relation.', { exact: true }).waitFor();
    // a contextual tuple counts for the test only; a malformed line is refused with its number
    await drv.fill('Contextual tuples for the access test (optional)', `${zed} viewer`);
    await drv.click('Test');
    await refusal.filter({ hasText: 'line 1' }).waitFor();
    await drv.fill('Contextual tuples for the access test (optional)', `${zed} viewer ${room}\n`);
    await drv.click('Test');
    await listed.getByText(zed, { exact: true }).waitFor();
    expect(await users()).toEqual([zed]);
    await drv.fill('Condition context for the access test (optional)', '{"ip": "10.9.9.9"}');
    await drv.click('Test');
    await listed.getByText(lee, { exact: true }).waitFor();
    expect(await users()).toEqual([lee, zed].sort());
    // expand takes the contextual tuples too (it evaluates no condition): the tree holds both, and
    // without the contextual line the stored, conditioned tuple only
    const tree = drv.page.getByTestId('expand-tree');
    expect(await tree.textContent()).toContain(lee);
    expect(await tree.textContent()).toContain(zed);
    await drv.fill('Contextual tuples for the access test (optional)', '');
    await drv.click('Test');
    await listed.getByText(zed, { exact: true }).waitFor({ state: 'detached' });
    await listed.getByText(lee, { exact: true }).waitFor();
    expect(await users()).toEqual([lee]);
    expect(await tree.textContent()).toContain(lee);
    expect(await tree.textContent()).not.toContain(zed);
    await drv.fill('Contextual tuples for the access test (optional)', `${zed} viewer ${room}\n`);
    await drv.click('Test');
    await listed.getByText(zed, { exact: true }).waitFor();
    await drv.screen(CONSOLE.authz);
    const stored = (await post(d.url, '/v1/admin/fga/tuples/read', { object: room }, admin(d))).body as { tuples: Array<{ user: string }> };
    expect(stored.tuples.map((x) => x.user)).toEqual([lee]);
  }, 90_000);

  it('organizations: a member\'s roles edited in place (normalised by the server), a cancelled edit, roles emptied, and the server\'s refusal shown', async () => {
    const tag = Math.random().toString(36).slice(2, 8);
    const org = (await post(d.url, '/v1/admin/create_organization', { name: `roles-${tag}` }, admin(d))).body as { id: string };
    const who = address('roles');
    const user = (await signup(d.url, who)).body as { user: { id: string } };
    expect((await post(d.url, '/v1/admin/add_org_member', { org_id: org.id, user_id: user.user.id, roles: ['billing'] }, admin(d))).status).toBe(200);
    const roles = async (): Promise<string[]> => ((await post(d.url, '/v1/admin/org_members', { org_id: org.id }, admin(d))).body as { org_members: Array<{ roles: string[] }> }).org_members[0]!.roles;
    const drv = await open();
    await consoleSignIn(drv, d.adminSecret);
    await drv.goto(`/dashboard/organizations/${org.id}`);
    await drv.screen(`roles-${tag}`);
    const members = drv.page.getByRole('region', { name: 'Members', exact: true });
    await members.getByRole('cell', { name: who, exact: true }).waitFor();
    await drv.page.getByRole('button', { name: `Edit roles ${who}` }).click();
    const field = drv.page.getByLabel(`Org roles of ${who}`, { exact: true });
    expect(await field.inputValue()).toBe('billing');
    await field.fill('service:org_admin, auditor ,auditor');
    await drv.screen(`roles-${tag}`);
    await drv.click('Save roles');
    await members.getByRole('status').filter({ hasText: 'Roles saved.' }).waitFor();
    expect(await roles()).toEqual(['service:org_admin', 'auditor']);
    await members.getByRole('cell', { name: 'service:org_admin, auditor', exact: true }).waitFor();
    // cancel leaves them; emptying the field removes every role
    await drv.page.getByRole('button', { name: `Edit roles ${who}` }).click();
    await drv.page.getByLabel(`Org roles of ${who}`, { exact: true }).fill('nothing');
    await members.getByRole('button', { name: 'Cancel', exact: true }).click();
    expect(await roles()).toEqual(['service:org_admin', 'auditor']);
    await drv.page.getByRole('button', { name: `Edit roles ${who}` }).click();
    await drv.page.getByLabel(`Org roles of ${who}`, { exact: true }).fill('');
    await drv.click('Save roles');
    await members.getByRole('status').filter({ hasText: 'Roles saved.' }).waitFor();
    expect(await roles()).toEqual([]);
    // a refusal is shown: the membership is gone by the time it is saved
    await drv.page.getByRole('button', { name: `Edit roles ${who}` }).click();
    expect((await post(d.url, '/v1/admin/remove_org_member', { org_id: org.id, user_id: user.user.id }, admin(d))).status).toBe(200);
    await drv.page.getByLabel(`Org roles of ${who}`, { exact: true }).fill('billing');
    await drv.click('Save roles');
    const refusal = members.getByRole('alert').filter({ hasText: /\S/ });
    await refusal.waitFor();
    expect(await refusal.textContent()).toBe('membership not found');
  }, 90_000);

  it('the development outbox page shows the server\'s refusal in production', async () => {
    const drv = await open();
    await consoleSignIn(drv, d.adminSecret);
    await openSection(drv, 'Development outbox');
    expect(await drv.alert()).toMatch(/development/);
  }, 60_000);
});

describe('the admin console in Chromium (all-in-one, development outbox)', () => {
  let d: Deployment;
  let browser: Browser;
  const drivers = new DriverPool();
  beforeAll(async () => {
    browser = await launchChromium();
    d = await startDeployment('all', { urlHost: 'localhost', flags: ['--env=development', '--enable-email-verification'] });
  }, 180_000);
  afterAll(async () => {
    await browser?.close();
    await d?.stop();
  });
  afterEach(() => drivers.checkAndClose());

  it('invitations: an invalid list is refused; people are invited, their requests listed, and the mails shown in the development outbox', async () => {
    const tag = Math.random().toString(36).slice(2, 8);
    const [a, b] = [`invited-a-${tag}@example.com`, `invited-b-${tag}@example.com`];
    const drv = await drivers.open(browser, d.url, null, CONSOLE_VIEWPORT);
    await consoleSignIn(drv, d.adminSecret);
    await openSection(drv, 'Invitations');
    await drv.fill('Email addresses', 'not-an-address');
    await drv.click('Send invitations');
    expect(await drv.alert()).toBe('no valid emails found');
    await drv.fill('Email addresses', `${a}, ${b}`);
    await drv.click('Send invitations');
    await drv.page.getByRole('status').filter({ hasText: '2 user(s) invited successfully.' }).waitFor();
    expect(await drv.page.getByTestId('invited').getByRole('listitem').allTextContents()).toEqual([a, b]);
    const requests = drv.page.getByRole('table', { name: 'Verification requests' });
    await requests.getByRole('cell', { name: a, exact: true }).waitFor();
    expect(await requests.getByRole('row').filter({ hasText: a }).textContent()).toMatch(/invite_member|magic_link_login/);
    await drv.screen(CONSOLE.invitations);
    await openSection(drv, 'Development outbox');
    const mail = drv.page.getByRole('article').filter({ hasText: a });
    for (let i = 0; i < 30 && (await mail.count()) === 0; i++) {
      await sleep(300);
      await drv.click('Refresh');
    }
    expect(await mail.first().getByRole('link').first().getAttribute('href')).toMatch(new RegExp(`^${d.url}/`));
    await drv.screen(CONSOLE.outbox);
  }, 90_000);
});

describe('the admin console in Chromium (split)', () => {
  let d: Deployment;
  let browser: Browser;
  const drivers = new DriverPool();
  beforeAll(async () => {
    browser = await launchChromium();
    d = await startDeployment('split', { urlHost: 'localhost', flags: ['--enable-login-page=false'] });
  }, 240_000);
  afterAll(async () => {
    await browser?.close();
    await d?.stop();
  });
  afterEach(() => drivers.checkAndClose());

  it('the root redirects to the console when the login page is off; it signs in and shows counts from three services', async () => {
    expect((await get(d.url, '/')).headers.get('location')).toBe('/dashboard');
    expect((await signup(d.url, address('split'))).status).toBe(200);
    const drv = await drivers.open(browser, d.url, null, CONSOLE_VIEWPORT);
    await consoleSignIn(drv, d.adminSecret);
    await expect(drv.page.getByTestId('count-users').textContent()).resolves.toBe('1');
    await expect(drv.page.getByTestId('count-organizations').textContent()).resolves.toBe('0');
    await expect(drv.page.getByTestId('deployment').textContent()).resolves.toBe('Split (a process per service)');
    await expect(drv.page.getByTestId('bus').textContent()).resolves.toBe('NATS JetStream');
    await openSection(drv, 'Users');
    expect(await drv.page.locator('tbody tr').count()).toBe(1);
  }, 90_000);
});
