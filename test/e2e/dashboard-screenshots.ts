/**
 * @module test/e2e/dashboard-screenshots
 * Re-creates docs/dashboard/*.png: one screenshot of each page of the admin console, taken in
 * Debian's chromium against an all-in-one deployment (SQLite, `--env=development`) with a few users,
 * audit rows, a webhook to a local receiver, organizations, a trusted issuer and invitations. Every screen is also checked with axe-core; the script fails when one
 * has a serious or critical violation or the CSP reports one.
 *
 *     npm run screenshots        (this script and the login page's)
 *     npx node test/e2e/dashboard-screenshots.ts
 */
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startDeployment } from '@gatehouse/testing';
import { launchChromium } from './passkey-browser.ts';
import { post, signup } from './email-support.ts';
import { LoginPageDriver, reportScreens } from './login-page-support.ts';
import { CONSOLE, CONSOLE_VIEWPORT, consoleSignIn, openSection, startWebhookReceiver } from './dashboard-support.ts';

const OUT = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'docs', 'dashboard');

mkdirSync(OUT, { recursive: true });
const [browser, hooks] = await Promise.all([launchChromium(), startWebhookReceiver()]);
// development without SMTP: the invitations are kept by the development outbox, whose page is shown too
const d = await startDeployment('all', { urlHost: 'localhost', flags: ['--allow-private-webhook-targets', '--roles=user,editor', '--default-roles=user', '--env=development'] });
const admin = { 'x-service-admin-secret': d.adminSecret };
let failed = false;
try {
  const names = ['ada.lovelace', 'grace.hopper', 'alan.turing', 'edsger.dijkstra', 'barbara.liskov', 'donald.knuth'];
  for (const n of names) {
    const { body } = await signup(d.url, `${n}@example.com`);
    const [given, family] = n.split('.');
    const cap = (s: string | undefined): string => (s ? s[0]!.toUpperCase() + s.slice(1) : '');
    await post(d.url, '/v1/admin/update_user', { id: (body as { user: { id: string } }).user.id, given_name: cap(given), family_name: cap(family) }, admin);
  }
  await post(d.url, '/v1/admin/create_client', { name: 'reports worker', description: 'nightly exports', allowed_scopes: ['read:reports'], grant_types: ['client_credentials'] }, admin);
  await post(d.url, '/v1/admin/add_webhook', { event_name: 'user.created', endpoint: hooks.url, event_description: 'new users to the CRM' }, admin);
  await signup(d.url, 'katherine.johnson@example.com');

  const drv = await LoginPageDriver.open(browser, d.url, OUT, CONSOLE_VIEWPORT);
  await drv.goto('/dashboard');
  await drv.screen(CONSOLE.signIn);
  await drv.fill('Admin secret', 'not-the-secret');
  await drv.click('Sign in');
  await drv.alert();
  await drv.screen(CONSOLE.signIn, 'sign-in-error');
  await consoleSignIn(drv, d.adminSecret);
  await drv.screen(CONSOLE.overview, 'overview');
  await openSection(drv, 'Users', 'users');
  await drv.follow('ada.lovelace@example.com');
  await drv.screen('ada.lovelace@example.com', 'user');
  await drv.click('Delete user');
  await drv.screen('ada.lovelace@example.com', 'user-delete-confirm');
  await drv.click('Cancel');
  await openSection(drv, 'Audit log');
  await drv.page.getByRole('button', { name: /^Show metadata/ }).first().click();
  await drv.screen(CONSOLE.audit, 'audit-log');
  await openSection(drv, 'Webhooks', 'webhooks');
  await drv.page.getByRole('button', { name: `Rotate signing secret ${hooks.url}` }).click();
  await drv.page.getByTestId('secret').waitFor();
  await drv.screen(CONSOLE.webhooks, 'webhook-secret');
  await drv.click('I have copied the secret');
  await drv.page.getByRole('button', { name: `Show deliveries ${hooks.url}` }).click();
  await drv.page.getByRole('heading', { name: `Deliveries to ${hooks.url}` }).waitFor();
  await drv.screen(CONSOLE.webhooks, 'webhook-deliveries');
  await openSection(drv, 'Clients', 'clients');
  await drv.page.getByRole('button', { name: 'Rotate secret reports worker' }).click();
  await drv.page.getByTestId('secret').waitFor();
  await drv.screen(CONSOLE.clients, 'client-secret');
  await drv.click('I have copied the secret');
  const model = 'model\n  schema 1.1\ntype user\ntype document\n  relations\n    define editor: [user]\n    define viewer: [user] or editor\n';
  await post(d.url, '/v1/admin/fga/model', { dsl: model }, admin);
  await post(d.url, '/v1/admin/fga/tuples', { tuples: [{ user: 'user:ada', relation: 'editor', object: 'document:roadmap' }, { user: 'user:grace', relation: 'viewer', object: 'document:roadmap' }] }, admin);
  await openSection(drv, 'Authorization');
  await drv.page.getByRole('table', { name: 'Tuples' }).getByRole('cell', { name: 'user:grace', exact: true }).waitFor();
  await drv.fill('Relation to test', 'viewer');
  await drv.fill('Object to test', 'document:roadmap');
  await drv.fill('Contextual tuples for the access test (optional)', 'user:alan viewer document:roadmap');
  await drv.click('Test');
  await drv.page.getByTestId('list-users').getByText('user:alan', { exact: true }).waitFor();
  await drv.page.getByTestId('expand-tree').waitFor();
  await drv.screen(CONSOLE.authz, 'authorization');
  await drv.fill('Model (OpenFGA DSL)', model.replace('define editor: [user]', 'define editor: [user'));
  await drv.click('Save model');
  await drv.page.getByText(/^The error is at line/).waitFor();
  await drv.page.getByRole('heading', { name: 'Authorization model' }).scrollIntoViewIfNeeded();
  await drv.screen(CONSOLE.authz, 'authorization-model-error');
  await drv.fill('Model (OpenFGA DSL)', model);
  await drv.click('Save model');
  await drv.fill('User to test', 'user:ada');
  await drv.fill('Object type (for a list)', 'document');
  await drv.click('List permissions');
  await drv.page.getByTestId('permissions').waitFor();
  await drv.page.getByRole('heading', { name: 'Model versions' }).scrollIntoViewIfNeeded();
  await drv.screen(CONSOLE.authz, 'authorization-versions');

  // organizations: one with a member, a domain, an OIDC connection, SCIM and a SAML service provider
  const org = (await post(d.url, '/v1/admin/create_organization', { name: 'acme', display_name: 'Acme Corporation' }, admin)).body as { id: string };
  const grace = (await post(d.url, '/v1/admin/user', { email: 'grace.hopper@example.com' }, admin)).body as { id: string };
  await post(d.url, '/v1/admin/add_org_member', { org_id: org.id, user_id: grace.id, roles: ['service:org_admin'] }, admin);
  await post(d.url, '/v1/admin/add_verified_org_domain', { org_id: org.id, domain: 'acme.example.com' }, admin);
  await post(d.url, '/v1/admin/create_org_oidc_connection', { org_id: org.id, name: 'Okta', issuer_url: 'https://acme.okta.example.com', client_id: 'gatehouse', client_secret: 'secret' }, admin);
  await post(d.url, '/v1/admin/create_saml_service_provider', { org_id: org.id, name: 'Wiki', entity_id: 'https://wiki.example.com/saml', acs_url: 'https://wiki.example.com/saml/acs' }, admin);
  await post(d.url, '/v1/admin/create_organization', { name: 'globex', display_name: 'Globex' }, admin);
  await openSection(drv, 'Organizations', 'organizations');
  await drv.follow('acme');
  await drv.screen('Acme Corporation', 'organization');
  await drv.click('Create SCIM endpoint');
  await drv.page.getByTestId('secret').waitFor();
  await drv.screen('Acme Corporation', 'organization-scim-token');
  await drv.click('I have copied the secret');
  await post(d.url, '/v1/admin/add_trusted_issuer', {
    service_account_id: ((await post(d.url, '/v1/admin/clients', { pagination: { page: 1, limit: 10 } }, admin)).body as { clients: Array<{ id: string; name: string }> }).clients.find((c) => c.name === 'reports worker')!.id,
    name: 'production cluster', issuer_url: 'https://kubernetes.example.com', key_source_type: 'static_jwks_url', jwks_url: 'https://kubernetes.example.com/openid/v1/jwks',
    expected_aud: 'gatehouse', issuer_type: 'kubernetes_sa', allowed_subjects: 'system:serviceaccount:reports:worker',
  }, admin);
  await openSection(drv, 'Trusted issuers', 'trusted-issuers');
  await openSection(drv, 'Email templates');
  await drv.page.getByLabel('Event', { exact: true }).selectOption('basic_auth_signup');
  await drv.fill('Subject', 'Welcome to {{.organization.name}}');
  await drv.fill('Body (HTML)', '<h2>Hello {{.user.given_name}}</h2>\n<p>Please confirm your address: <a href="{{.verification_url}}">verify my email</a>.</p>');
  await drv.fill('Design (JSON, optional)', '{"body": {"rows": [{"cells": [1]}]}}');
  await drv.screen(CONSOLE.templates, 'email-templates');
  await openSection(drv, 'Invitations');
  await drv.fill('Email addresses', 'margaret.hamilton@example.com, radia.perlman@example.com');
  await drv.click('Send invitations');
  await drv.page.getByTestId('invited').waitFor();
  await drv.screen(CONSOLE.invitations, 'invitations');
  await openSection(drv, 'Development outbox');
  // the invitation mails go out through the outbox after the answer: refresh until the first is kept
  const mail = drv.page.getByRole('article');
  for (let i = 0; i < 40 && (await mail.count()) === 0; i++) {
    await new Promise((r) => setTimeout(r, 300));
    await drv.click('Refresh');
  }
  await mail.first().waitFor();
  await drv.screen(CONSOLE.outbox, 'dev-outbox');

  failed = await reportScreens(drv, OUT);
} finally {
  await browser.close();
  await d.stop();
  await hooks.close();
}
if (failed) process.exit(1);
