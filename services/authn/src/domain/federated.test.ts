/**
 * The identity-linking rules of federated login (issue 20, domain/federated.ts), through
 * AuthnInternal.CompleteFederatedLogin as the orgs service and the social callbacks reach it.
 */
import { describe, it, expect } from '@jest/globals';
import { decodeJwt } from 'jose';
import { PASSWORD, URL_, makeAuthn } from '../fixture.ts';
import { recordingMfa } from '../mfa-fixture.ts';
import type { MfaInternalClient } from '../rpc/deps.ts';
import { UNVERIFIED_EMAIL_IN_USE } from './federated.ts';

const google = (over: Record<string, unknown> = {}) => ({
  method: 'google', issuer: 'https://accounts.google.example', subject: '1001', email: 'Ada@Example.com', email_verified: true,
  given_name: 'Ada', family_name: 'Lovelace', picture: 'https://img.example/ada.png', ...over,
});

const names = (a: ReturnType<typeof makeAuthn>) => a.storage.published.map((e) => e.name);
const audits = (a: ReturnType<typeof makeAuthn>) =>
  a.storage.published.filter((e) => e.name === 'audit.recorded').map((e) => (e.data as { action: string }).action);
const query = (url: string) => Object.fromEntries(new URL(url).searchParams);

describe('CompleteFederatedLogin (issue 20)', () => {
  it('first sight creates the user (user.created, user.signup, user.login) and a returning subject resolves even with a new email', async () => {
    const a = makeAuthn();
    const first = await a.call('CompleteFederatedLogin', google({ state: 's1', redirect_uri: `${URL_}/done` }));
    expect(first.res).toMatchObject({ created: true, user_id: expect.any(String) });
    const url = new URL(first.res.redirect_url);
    expect(`${url.origin}${url.pathname}`).toBe(`${URL_}/done`);
    const q = query(first.res.redirect_url);
    expect(q).toMatchObject({ token_type: 'bearer', state: 's1' });
    expect(decodeJwt(q.access_token!)).toMatchObject({ sub: first.res.user_id, login_method: 'google' });
    expect(decodeJwt(q.id_token!)).toMatchObject({ email: 'ada@example.com', email_verified: true, amr: ['fed'] });
    expect(first.cookies.map((c) => c.split('=')[0])).toEqual(['cookie_session', 'cookie_session_domain']);
    const user = (await a.storage.users.findById(first.res.user_id))!;
    expect(user).toMatchObject({ email: 'ada@example.com', signupMethods: 'google', givenName: 'Ada', roles: ['user'], passwordHash: null });
    expect(user.emailVerifiedAt).not.toBeNull();
    expect(names(a).filter((n) => n !== 'audit.recorded')).toEqual(['user.created', 'user.signup', 'user.login']);
    expect(audits(a)).toEqual(['oauth.callback_success']);

    const again = await a.call('CompleteFederatedLogin', google({ email: 'ada.new@example.com' }));
    expect(again.res).toMatchObject({ created: false, user_id: first.res.user_id });
    expect(names(a).filter((n) => n !== 'audit.recorded')).toEqual(['user.created', 'user.signup', 'user.login', 'user.login']);
    expect(a.storage.identityLinks()).toHaveLength(1);
  });

  it('links an existing account only on a verified upstream email, adding the method to signup_methods', async () => {
    const a = makeAuthn();
    const { res } = await a.signup('ada@example.com');
    const linked = await a.call('CompleteFederatedLogin', google());
    expect(linked.res).toMatchObject({ created: false, user_id: res.user.id });
    expect((await a.storage.users.findById(res.user.id))!.signupMethods).toBe('basic_auth,google');
    // the account's own (verified) password still works
    await expect(a.call('Login', { email: 'ada@example.com', password: PASSWORD })).resolves.toBeDefined();
    expect(a.storage.identityLinks()).toEqual([expect.objectContaining({ issuer: 'https://accounts.google.example', subject: '1001', userId: res.user.id })]);
  });

  it('refuses an unverified upstream email that an account holds, and links nothing', async () => {
    const a = makeAuthn();
    const { res } = await a.signup('ada@example.com');
    const before = a.storage.published.length;
    const refused = await a.call('CompleteFederatedLogin', google({ email_verified: false, redirect_uri: `${URL_}/done` }));
    expect(refused.res).toMatchObject({ created: false, error: 'failed_precondition' });
    expect(refused.res.user_id ?? null).toBeNull();
    expect(query(refused.res.redirect_url)).toEqual({ error: 'failed_precondition', error_description: UNVERIFIED_EMAIL_IN_USE });
    expect(refused.cookies).toEqual([]);
    expect(a.storage.identityLinks()).toEqual([]);
    expect((await a.storage.users.findById(res.user.id))!.signupMethods).toBe('basic_auth');
    expect(a.storage.published.slice(before).map((e) => (e.data as { action?: string }).action)).toEqual(['oauth.callback_failed']);
  });

  it('an unverified upstream email nobody holds creates the user with the email unverified', async () => {
    const a = makeAuthn();
    const { res } = await a.call('CompleteFederatedLogin', google({ email_verified: false }));
    expect(res.created).toBe(true);
    expect((await a.storage.users.findById(res.user_id))!.emailVerifiedAt).toBeNull();
  });

  it('linking to an account whose email was never verified removes its password (pre-hijacking)', async () => {
    const a = makeAuthn({ enableEmailVerification: true });
    // an attacker registered the address without proving it
    await a.call('Signup', { email: 'ada@example.com', password: PASSWORD, confirm_password: PASSWORD });
    const squatter = (await a.storage.users.findByEmail('ada@example.com'))!;
    expect(squatter.emailVerifiedAt).toBeNull();
    const { res } = await a.call('CompleteFederatedLogin', google());
    expect(res.user_id).toBe(squatter.id);
    const after = (await a.storage.users.findById(squatter.id))!;
    expect(after.passwordHash).toBeNull();
    expect(after.emailVerifiedAt).not.toBeNull();
    await expect(a.call('Login', { email: 'ada@example.com', password: PASSWORD })).rejects.toMatchObject({ code: 'unauthenticated' });
  });

  it('sso emits user.created without user.signup and records no oauth.* audit row', async () => {
    const a = makeAuthn();
    const { res } = await a.call('CompleteFederatedLogin', google({ method: 'sso', issuer: 'https://idp.acme.example', org_id: 'org-1' }));
    expect(res.created).toBe(true);
    expect(names(a)).toEqual(['user.created', 'user.login']);
    expect((await a.storage.users.findById(res.user_id))!.signupMethods).toBe('sso');
  });

  it('refuses revoked users, protected or unknown roles, unknown methods and a blank subject; an upstream error touches nothing', async () => {
    const a = makeAuthn();
    const first = await a.call('CompleteFederatedLogin', google());
    const u = (await a.storage.users.findById(first.res.user_id))!;
    await a.storage.users.transaction(async (tx) => tx.users.update({ ...u, revokedTimestamp: a.now() }));
    expect(query((await a.call('CompleteFederatedLogin', google())).res.redirect_url)).toEqual({ error: 'failed_precondition', error_description: 'user access has been revoked' });

    const b = makeAuthn();
    expect(query((await b.call('CompleteFederatedLogin', google({ roles: ['admin'] }))).res.redirect_url)).toMatchObject({ error: 'invalid_argument', error_description: 'invalid roles' });
    expect(query((await b.call('CompleteFederatedLogin', google({ method: 'myspace' }))).res.redirect_url)).toMatchObject({ error: 'invalid_argument' });
    expect(query((await b.call('CompleteFederatedLogin', google({ subject: ' ' }))).res.redirect_url)).toMatchObject({ error: 'invalid_argument' });
    const denied = await b.call('CompleteFederatedLogin', google({ error: 'access_denied', error_description: 'the user cancelled', state: 'st' }));
    expect(query(denied.res.redirect_url)).toEqual({ error: 'unauthenticated', error_description: 'the user cancelled', state: 'st' });
    // an unusable redirect_uri falls back to <url>/app
    const evil = new URL((await b.call('CompleteFederatedLogin', google({ redirect_uri: 'https://evil.example.net/' }))).res.redirect_url);
    expect(`${evil.origin}${evil.pathname}`).toBe(`${URL_}/app`);
    expect(evil.searchParams.get('error_description')).toBe('invalid redirect URI');
    expect(await b.storage.users.findByEmail('ada@example.com')).toBeNull();
    expect(b.storage.identityLinks()).toEqual([]);
  });

  it('requested non-protected roles are granted to a new user and added to a returning one', async () => {
    const a = makeAuthn();
    const first = await a.call('CompleteFederatedLogin', google({ roles: ['editor'] }));
    expect((await a.storage.users.findById(first.res.user_id))!.roles).toEqual(['editor']);
    const again = await a.call('CompleteFederatedLogin', google({ roles: ['user'] }));
    expect((await a.storage.users.findById(again.res.user_id))!.roles).toEqual(['editor', 'user']);
    expect(decodeJwt(query(again.res.redirect_url).access_token!)).toMatchObject({ roles: ['user'], allowed_roles: ['editor', 'user'] });
  });

  it('the MFA gate: a gated user gets the gate parameters and the mfa cookie instead of tokens', async () => {
    const m = recordingMfa();
    const client: MfaInternalClient = { ...m.client, async EvaluateGate(_req, ctx) {
      ctx.setCookies.push('mfa=h; Path=/; Max-Age=300; HttpOnly');
      return {
        outcome: 'verify',
        response: {
          message: 'Proceed to mfa verification', access_token: null, id_token: null, refresh_token: null, expires_in: null, user: null,
          should_show_email_otp_screen: false, should_show_mobile_otp_screen: false, should_show_totp_screen: true,
          should_offer_webauthn_mfa_verify: false, should_offer_webauthn_mfa_setup: false, should_offer_email_otp_mfa_setup: false,
          should_offer_sms_otp_mfa_setup: false, should_offer_mfa_setup: false,
          authenticator_scanner_image: null, authenticator_secret: null, authenticator_recovery_codes: [],
        },
      };
    } };
    const a = makeAuthn({}, { mfa: client });
    const { res, cookies } = await a.call('CompleteFederatedLogin', google({ state: 'st' }));
    expect(query(res.redirect_url)).toEqual({ mfa_required: '1', mfa_methods: 'totp', mfa_gate: 'verify', state: 'st' });
    expect(cookies).toEqual(['mfa=h; Path=/; Max-Age=300; HttpOnly']);
    expect(names(a)).not.toContain('user.login');
  });
});
