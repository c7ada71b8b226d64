/**
 * @module test/e2e/passkeys
 * Passkeys in a real browser (issue 16 point 4; behaviour.md §4.3, §4.6), both modes: Debian's
 * chromium with the CDP virtual authenticator registers a passkey as a signed-in user, logs in
 * usernameless with it after logging out, lists and deletes it, and a clone of it with a lower sign
 * count is refused. The page calls the `/v1` routes with @simplewebauthn/browser.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { decodeJwt } from 'jose';
import type { Browser } from 'playwright-core';
import { startDeployment, type Deployment, type Mode } from '@gatehouse/testing';
import { launchChromium, openPasskeyPage, type PasskeyPage } from './passkey-browser.ts';
import { address, PASSWORD } from './email-support.ts';
import { waitForAudits } from './audit-support.ts';

const INVALID_PASSKEY = { code: 'unauthenticated', message: 'invalid passkey' };

describe.each(['all', 'split'] as Mode[])('passkeys in Chromium (%s)', (mode) => {
  let d: Deployment;
  let browser: Browser;
  beforeAll(async () => {
    [d, browser] = await Promise.all([
      startDeployment(mode, { urlHost: 'localhost', flags: ['--organization-name=Gatehouse E2E'] }),
      launchChromium(),
    ]);
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await d?.stop();
  });

  /** a page with a fresh authenticator and a user signed up (and signed in) from it */
  const signedUp = async (tag: string): Promise<{ p: PasskeyPage; email: string; userId: string }> => {
    const p = await openPasskeyPage(browser, d.url);
    const email = address(tag);
    const res = await p.post('/v1/signup', { email, password: PASSWORD, confirm_password: PASSWORD });
    expect(res).toMatchObject({ status: 200, body: { message: 'Signed up successfully.' } });
    return { p, email, userId: res.body.user.id };
  };

  it('registers a passkey as a signed-in user, logs out, and logs in usernameless with it', async () => {
    const { p, email, userId } = await signedUp('passkey');
    const { options, verify } = await p.register({ name: 'My laptop' });
    expect(options.status).toBe(200);
    const creation = JSON.parse(options.body.options);
    expect(creation).toMatchObject({
      rp: { id: 'localhost', name: 'Gatehouse E2E' },
      // a cookie caller: mfa knows the user id only (a bearer caller's email claim names the account)
      user: { id: Buffer.from(userId).toString('base64url'), name: userId },
      pubKeyCredParams: [{ alg: -7, type: 'public-key' }, { alg: -8, type: 'public-key' }, { alg: -257, type: 'public-key' }],
      timeout: 300000, attestation: 'none', excludeCredentials: [],
      authenticatorSelection: { residentKey: 'required', userVerification: 'required' },
    });
    expect(Buffer.from(creation.challenge, 'base64url')).toHaveLength(32);
    expect(verify).toEqual({
      status: 200,
      body: expect.objectContaining({ message: 'Passkey registered successfully.', access_token: null, refresh_token: null, expires_in: null, user: expect.objectContaining({ id: userId, email }) }),
    });

    const list = await p.post('/v1/webauthn_credentials');
    expect(list).toEqual({ status: 200, body: { webauthn_credentials: [expect.objectContaining({ name: 'My laptop', transports: expect.any(Array), last_used_at: null })] } });
    expect(list.body.webauthn_credentials[0].created_at).toBeGreaterThan(1_700_000_000);

    expect(await p.post('/v1/logout')).toMatchObject({ status: 200 });
    expect((await p.get('/v1/profile')).status).toBe(401);

    const { options: requestOptions, verify: login } = await p.login();
    expect(JSON.parse(requestOptions.body.options)).toMatchObject({ rpId: 'localhost', allowCredentials: [], userVerification: 'required', timeout: 300000 });
    expect(login.status).toBe(200);
    expect(login.body).toMatchObject({ message: 'Logged in successfully with passkey.', user: { id: userId, email } });
    expect(decodeJwt(login.body.access_token)).toMatchObject({ sub: userId, login_method: 'webauthn' });
    expect(decodeJwt(login.body.id_token)).toMatchObject({ sub: userId, amr: ['hwk', 'user'] });
    // the session cookie the browser got signs it in
    expect(await p.get('/v1/profile')).toMatchObject({ status: 200, body: { id: userId } });
    const used = (await p.post('/v1/webauthn_credentials')).body.webauthn_credentials[0];
    expect(used.last_used_at).toBeGreaterThanOrEqual(used.created_at);
    await p.close();
  });

  it('an assertion is accepted once: its challenge is used up (replay refused)', async () => {
    const { p } = await signedUp('replay');
    expect((await p.register()).verify.status).toBe(200);
    const { verify, credential } = await p.login();
    expect(verify.status).toBe(200);
    expect(await p.post('/v1/webauthn_login_verify', { credential })).toEqual({ status: 401, body: INVALID_PASSKEY });
    await p.close();
  });

  it('refuses a cloned credential whose sign count is lower than the stored one', async () => {
    const { p } = await signedUp('clone');
    expect((await p.register()).verify.status).toBe(200);
    // two logins: the stored sign count is the authenticator's, above zero
    for (let i = 0; i < 2; i++) expect((await p.login()).verify.status).toBe(200);
    const { credentials } = await p.cdp.send('WebAuthn.getCredentials', { authenticatorId: p.authenticatorId });
    expect(credentials).toHaveLength(1);
    const original = credentials[0]!;
    expect(original.signCount).toBeGreaterThan(1);
    // the same key in a second authenticator, its counter behind the first one's
    const cloneId = await p.newAuthenticator();
    await p.cdp.send('WebAuthn.addCredential', { authenticatorId: cloneId, credential: { ...original, signCount: 0 } });
    const cloned = await p.login();
    expect(cloned.verify).toEqual({ status: 401, body: INVALID_PASSKEY });
    await p.close();
  });

  it('lists and deletes the caller\'s own passkeys (audit events recorded); a deleted passkey no longer logs in', async () => {
    const { p, userId } = await signedUp('delete');
    expect((await p.register({ name: 'first' })).verify.status).toBe(200);
    const list = (await p.post('/v1/webauthn_credentials')).body.webauthn_credentials;
    expect(list.map((c: { name: string }) => c.name)).toEqual(['first']);
    // another user cannot delete it
    const other = await signedUp('other');
    expect(await other.p.post('/v1/webauthn_delete_credential', { id: list[0].id })).toEqual({ status: 404, body: { code: 'not_found', message: 'passkey not found' } });
    await other.p.close();
    expect(await p.post('/v1/webauthn_delete_credential', { id: list[0].id })).toEqual({ status: 200, body: { message: 'Passkey deleted successfully.' } });
    // both recorded for the audit log, from the page's REST calls
    // (mfa's passkey actions; authn's user.signup of the same actor is in the log too)
    const audits = await waitForAudits(d, (r) => r.actor_id === userId && r.action.startsWith('user.webauthn_'), ['user.webauthn_credential_added', 'user.webauthn_credential_deleted']);
    expect(audits.map(({ action, metadata }) => ({ action, metadata })).sort((a, b) => a.action.localeCompare(b.action))).toEqual([
      { action: 'user.webauthn_credential_added', metadata: { passkey_id: list[0].id, name: 'first', protocol: 'rest' } },
      { action: 'user.webauthn_credential_deleted', metadata: { passkey_id: list[0].id, protocol: 'rest' } },
    ]);
    expect(await p.post('/v1/webauthn_credentials')).toEqual({ status: 200, body: { webauthn_credentials: [] } });
    expect(await p.post('/v1/webauthn_delete_credential', { id: list[0].id })).toMatchObject({ status: 404 });
    await p.post('/v1/logout');
    expect((await p.login()).verify).toEqual({ status: 401, body: INVALID_PASSKEY });
    await p.close();
  });
});

describe.each(['all', 'split'] as Mode[])('passkeys and the MFA gate in Chromium (%s)', (mode) => {
  let d: Deployment;
  let browser: Browser;
  beforeAll(async () => {
    [d, browser] = await Promise.all([startDeployment(mode, { urlHost: 'localhost', mfa: true }), launchChromium()]);
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await d?.stop();
  });

  const cookiesOf = async (p: PasskeyPage): Promise<string[]> => (await p.page.context().cookies()).map((c) => c.name);

  it('registers a passkey in the MFA-offer state (completing the gate), then completes a password login\'s G4 challenge with it', async () => {
    const p = await openPasskeyPage(browser, d.url);
    const email = address('gate');
    // signup passes the gate: G7 offers a passkey; tokens withheld, an MFA session opened
    const signup = await p.post('/v1/signup', { email, password: PASSWORD, confirm_password: PASSWORD });
    expect(signup.body).toMatchObject({ message: 'Proceed to mfa setup', access_token: null, user: null, should_offer_webauthn_mfa_setup: true });
    expect(await cookiesOf(p)).toEqual(['mfa']);

    const { options, verify } = await p.register({ email, name: 'Gate key' });
    expect(options.status).toBe(200);
    // the MFA session's user: its email names the account
    expect(JSON.parse(options.body.options).user.name).toBe(email);
    expect(verify.status).toBe(200);
    expect(verify.body).toMatchObject({ message: 'Passkey registered and MFA setup complete.', user: { email, enrolled_mfa_methods: ['webauthn'] } });
    expect(decodeJwt(verify.body.id_token).amr).toEqual(['pwd', 'hwk', 'user', 'mfa']);
    expect((await cookiesOf(p)).sort()).toEqual(['cookie_session', 'cookie_session_domain']);
    expect(await p.get('/v1/profile')).toMatchObject({ status: 200, body: { email, enrolled_mfa_methods: ['webauthn'] } });

    // a password login now meets G4: the passkey is offered as the second factor
    await p.post('/v1/logout');
    const login = await p.post('/v1/login', { email, password: PASSWORD, scope: ['openid', 'email', 'offline_access'] });
    expect(login.body).toMatchObject({ message: 'Proceed to mfa verification', access_token: null, should_offer_webauthn_mfa_verify: true, should_show_totp_screen: false });
    // the MFA session cannot register another passkey in the verify state (from a second
    // authenticator: the first one refuses, its credential is in excludeCredentials)
    const { credentials } = await p.cdp.send('WebAuthn.getCredentials', { authenticatorId: p.authenticatorId });
    await p.newAuthenticator();
    const refused = await p.register({ email });
    expect(refused.options.status).toBe(200);
    expect(refused.verify).toEqual({ status: 400, body: { code: 'failed_precondition', message: 'cannot set up a passkey in the current state' } });
    // back to the registered passkey
    await p.newAuthenticator();
    await p.cdp.send('WebAuthn.addCredential', { authenticatorId: p.authenticatorId, credential: credentials[0]! });

    const mfaLogin = await p.login({ email });
    const request = JSON.parse(mfaLogin.options.body.options);
    expect(request.allowCredentials).toEqual([expect.objectContaining({ type: 'public-key' })]);
    expect(mfaLogin.verify.status).toBe(200);
    expect(mfaLogin.verify.body).toMatchObject({ message: 'Logged in successfully with passkey.', user: { email } });
    // the first step's grant (password, its scope) with the passkey as the second factor
    expect(decodeJwt(mfaLogin.verify.body.id_token)).toMatchObject({ login_method: 'basic_auth', amr: ['pwd', 'hwk', 'user', 'mfa'] });
    expect(mfaLogin.verify.body.refresh_token).toEqual(expect.any(String));
    expect(await cookiesOf(p)).not.toContain('mfa');
    await p.close();
  });

  it('login options with an email need that account\'s MFA session, and a passkey on it', async () => {
    const p = await openPasskeyPage(browser, d.url);
    const email = address('nokey');
    expect((await p.post('/v1/signup', { email, password: PASSWORD, confirm_password: PASSWORD })).body.message).toBe('Proceed to mfa setup');
    expect(await p.post('/v1/webauthn_login_options', { email: 'someone-else@example.com' })).toEqual({ status: 401, body: { code: 'unauthenticated', message: 'invalid session' } });
    expect(await p.post('/v1/webauthn_login_options', { email })).toEqual({ status: 404, body: { code: 'not_found', message: 'no passkey found for this account' } });
    await p.close();
  });
});
