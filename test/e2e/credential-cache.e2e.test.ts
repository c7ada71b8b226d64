/**
 * @module test/e2e/credential-cache
 * All-in-one on SQLite caches sessions and user activity in process (libs/auth README "Credential
 * caches"). Each credential is used a few times first so the caches hold it; then every way it can
 * end must refuse the very next request, on authn (profile, validate_jwt_token) and on authz
 * (check_permissions), which shares the authenticator (behaviour.md §2.1, §2.2).
 */
import { describe, it, expect, beforeAll, afterAll, jest } from '@jest/globals';
import { startDeployment, type Deployment } from '@gatehouse/testing';
import { rest, type Credentials } from '../support/surfaces.ts';
import { PASSWORD, expectError, expectOk, freshEmail, sessionCookie } from '../support/scenario.ts';
import { postJson } from '../support/http.ts';
import { DOCS_MODEL } from '../support/authz-fixtures.ts';
import { authzRest, okBody } from '../support/authz-surfaces.ts';

jest.setTimeout(60_000);

describe('credential caches in all-in-one (SQLite)', () => {
  let d: Deployment;
  beforeAll(async () => {
    d = await startDeployment('all', { readyTimeoutMs: 60_000 });
    okBody(await authzRest(d, { op: '_fga_write_model', args: { dsl: DOCS_MODEL }, creds: { adminSecret: d.adminSecret } }));
  }, 120_000);
  afterAll(async () => { await d?.stop(); });

  const check = (bearer: string) => postJson(`${d.url}/v1/check_permissions`, { checks: [{ relation: 'viewer', object: 'doc:a1' }] }, { authorization: `Bearer ${bearer}`, origin: d.url });

  async function login(email: string): Promise<{ token: string; cookie: string }> {
    const r = await rest(d, { op: 'login', args: { email, password: PASSWORD } });
    return { token: expectOk(r).access_token as string, cookie: sessionCookie(r) };
  }

  async function signup(label: string): Promise<{ email: string; token: string; cookie: string }> {
    const email = freshEmail(label);
    expectOk(await rest(d, { op: 'signup', args: { email, password: PASSWORD, confirm_password: PASSWORD } }));
    return { email, ...(await login(email)) };
  }

  /** Uses the credential three times on every path, so it is cached. */
  async function warm(c: { token: string; cookie: string }): Promise<void> {
    for (let i = 0; i < 3; i++) {
      expectOk(await rest(d, { op: 'profile', creds: { bearer: c.token } }));
      expectOk(await rest(d, { op: 'profile', creds: { cookie: c.cookie } }));
      expectOk(await rest(d, { op: 'validate_jwt_token', args: { token_type: 'access_token', token: c.token } }));
      expect((await check(c.token)).body).toEqual({ results: [{ object: 'doc:a1', relation: 'viewer', allowed: false }] });
    }
  }

  async function expectRefused(c: { token: string; cookie: string }): Promise<void> {
    for (const creds of [{ bearer: c.token }, { cookie: c.cookie }] as Credentials[]) {
      expectError(await rest(d, { op: 'profile', creds }), 'unauthenticated', 'unauthorized');
    }
    expectError(await rest(d, { op: 'validate_jwt_token', args: { token_type: 'access_token', token: c.token } }), 'unauthenticated', 'invalid token');
    const denied = await check(c.token);
    expect(denied.status).toBe(401);
    expect(denied.body).toMatchObject({ code: 'unauthenticated' });
  }

  it('logout refuses the old token and cookie at once', async () => {
    const u = await signup('cache-logout');
    await warm(u);
    expectOk(await rest(d, { op: 'logout', creds: { cookie: u.cookie } }));
    await expectRefused(u);
  });

  it('deactivate_account refuses every session of the user at once', async () => {
    const u = await signup('cache-deactivate');
    const other = await login(u.email);
    await warm(u);
    await warm(other);
    expectOk(await rest(d, { op: 'deactivate_account', creds: { bearer: u.token } }));
    await expectRefused(u);
    await expectRefused(other);
  });

  it('session rotation refuses the old cookie and token, the new ones work', async () => {
    const u = await signup('cache-rotate');
    await warm(u);
    const r = await rest(d, { op: 'session', creds: { cookie: u.cookie } });
    const next = { token: expectOk(r).access_token as string, cookie: sessionCookie(r) };
    await expectRefused(u);
    await warm(next);
  });

  it('a password change through update_profile refuses the other sessions, keeps the caller\'s', async () => {
    const u = await signup('cache-password');
    const other = await login(u.email);
    await warm(u);
    await warm(other);
    const NEW = 'Correct-Horse-10';
    expectOk(await rest(d, { op: 'update_profile', args: { old_password: PASSWORD, new_password: NEW, confirm_new_password: NEW }, creds: { bearer: u.token } }));
    await expectRefused(other);
    await warm(u);
  });
});
