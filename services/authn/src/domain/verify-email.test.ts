import { describe, it, expect } from '@jest/globals';
import { decodeJwt } from 'jose';
import { PASSWORD, T0, URL_, cookieHeader } from '../fixture.ts';
import { makeEmailAuthn } from './email-fixture.ts';

const signupBody = (email = 'ada@example.com', over: Record<string, unknown> = {}) => ({ email, password: PASSWORD, confirm_password: PASSWORD, ...over });

describe('signup with email verification and verify_email (behaviour.md §3.2, §3.4)', () => {
  it('creates an unverified user, mails a basic_auth_signup link built from --url and issues nothing', async () => {
    const a = makeEmailAuthn();
    const { res, cookies } = await a.call('Signup', signupBody('Ada@Example.com', { redirect_uri: `${URL_}/welcome` }));
    expect(res).toMatchObject({ message: 'Verification email has been sent. Please check your inbox', access_token: null, id_token: null, user: null });
    expect(cookies).toEqual([]);
    expect((await a.storage.users.findByEmail('ada@example.com'))!.emailVerifiedAt).toBeNull();
    const [job] = a.mails();
    expect(job).toMatchObject({ event_name: 'basic_auth_signup', to: 'ada@example.com', user: { email: 'ada@example.com', email_verified: false } });
    const link = new URL(job!.variables.verification_url);
    expect(`${link.origin}${link.pathname}`).toBe(`${URL_}/verify_email`);
    expect(link.searchParams.get('token')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(link.searchParams.get('redirect_uri')).toBe(`${URL_}/welcome`);
    const [stored] = a.storage.verificationRequests();
    expect(stored).toMatchObject({ identifier: 'basic_auth_signup', email: 'ada@example.com', expiresAt: T0 + 1800, consumedAt: null });
    expect(JSON.stringify(stored)).not.toContain(link.searchParams.get('token'));
    await expect(a.call('Login', { email: 'ada@example.com', password: PASSWORD })).rejects.toMatchObject({ code: 'failed_precondition', message: 'email address is not verified' });
  });

  it('verifies, logs in with cookies, emits user.login and refuses the token a second time', async () => {
    const a = makeEmailAuthn();
    await a.call('Signup', signupBody());
    const token = a.lastToken();
    const { res, cookies } = await a.call('VerifyEmail', { token });
    expect(res).toMatchObject({ message: 'Email verified successfully.', user: { email_verified: true }, expires_in: 1800 });
    expect(decodeJwt(res.access_token)).toMatchObject({ login_method: 'basic_auth', iss: URL_ });
    expect(cookies.map((c) => c.split('=')[0])).toEqual(['cookie_session', 'cookie_session_domain']);
    expect((await a.call('Profile', {}, cookieHeader(cookies))).res.email).toBe('ada@example.com');
    expect(a.storage.published.filter((e) => e.name !== 'audit.recorded').map((e) => e.name)).toEqual(['user.created', 'user.signup', 'email.send', 'user.login']);
    await expect(a.call('VerifyEmail', { token })).rejects.toMatchObject({ code: 'invalid_argument', message: 'invalid verification token' });
    await expect(a.call('Login', { email: 'ada@example.com', password: PASSWORD })).resolves.toBeDefined();
  });

  it('refuses unknown, blank, expired and superseded tokens, and tokens of other purposes', async () => {
    const a = makeEmailAuthn();
    await a.call('Signup', signupBody());
    const first = a.lastToken();
    const refused = { code: 'invalid_argument', message: 'invalid verification token' };
    for (const token of ['nope', '', undefined]) await expect(a.call('VerifyEmail', { token })).rejects.toMatchObject(refused);
    a.advance(61);
    await a.call('ResendVerifyEmail', { email: 'ada@example.com', identifier: 'basic_auth_signup' });
    const second = a.lastToken();
    expect(second).not.toBe(first);
    await expect(a.call('VerifyEmail', { token: first })).rejects.toMatchObject(refused);
    a.advance(1800);
    await expect(a.call('VerifyEmail', { token: second })).rejects.toMatchObject(refused);
    const b = makeEmailAuthn();
    await b.signup('bob@example.com').catch(() => undefined);
    await b.call('VerifyEmail', { token: b.lastToken() });
    await b.call('ForgotPassword', { email: 'bob@example.com' });
    await expect(b.call('VerifyEmail', { token: b.lastToken() })).rejects.toMatchObject(refused);
  });

  it('accepts a token just before 30 minutes and refuses it at 30 minutes (fake clock)', async () => {
    const a = makeEmailAuthn();
    await a.call('Signup', signupBody());
    const token = a.lastToken();
    a.advance(1799);
    await expect(a.call('VerifyEmail', { token })).resolves.toBeDefined();
    const b = makeEmailAuthn();
    await b.call('Signup', signupBody());
    b.advance(1800);
    await expect(b.call('VerifyEmail', { token: b.lastToken() })).rejects.toMatchObject({ message: 'invalid verification token' });
  });

  it('refuses a revoked user with failed_precondition and keeps the token', async () => {
    const a = makeEmailAuthn();
    await a.call('Signup', signupBody());
    const u = (await a.storage.users.findByEmail('ada@example.com'))!;
    await a.storage.users.transaction((tx) => tx.users.update({ ...u, revokedTimestamp: T0 }));
    await expect(a.call('VerifyEmail', { token: a.lastToken() })).rejects.toMatchObject({ code: 'failed_precondition', message: 'user access has been revoked' });
    expect(a.storage.verificationRequests()[0]!.consumedAt).toBeNull();
  });

  it('answers a duplicate signup like a fresh one and sends nothing', async () => {
    const a = makeEmailAuthn();
    const fresh = await a.call('Signup', signupBody());
    const dup = await a.call('Signup', signupBody('ADA@example.com '));
    expect(dup).toEqual(fresh);
    expect(a.mails()).toHaveLength(1);
  });

  it('the link target redirects with tokens, state and cookies, or with error and error_description', async () => {
    const a = makeEmailAuthn();
    await a.call('Signup', signupBody('ada@example.com', { scope: ['openid', 'offline_access'] }));
    const token = a.lastToken();
    const ok = await a.call('VerifyEmailLink', { token, redirect_uri: `${URL_}/done`, state: 'xyz' });
    const u = new URL(ok.res.redirect_url);
    expect(`${u.origin}${u.pathname}`).toBe(`${URL_}/done`);
    expect(Object.fromEntries(u.searchParams)).toMatchObject({ token_type: 'bearer', expires_in: '1800', state: 'xyz' });
    expect(decodeJwt(u.searchParams.get('access_token')!).token_type).toBe('access_token');
    expect(decodeJwt(u.searchParams.get('id_token')!).token_type).toBe('id_token');
    expect(u.searchParams.get('refresh_token')).toEqual(expect.any(String));
    expect(ok.cookies).toHaveLength(2);
    const again = new URL((await a.call('VerifyEmailLink', { token })).res.redirect_url);
    expect(`${again.origin}${again.pathname}`).toBe(`${URL_}/app`);
    expect(Object.fromEntries(again.searchParams)).toEqual({ error: 'invalid_argument', error_description: 'invalid verification token' });
    const evil = new URL((await a.call('VerifyEmailLink', { token: 'x', redirect_uri: 'https://evil.example.net/' })).res.redirect_url);
    expect(evil.origin).toBe(URL_);
    expect(evil.searchParams.get('error_description')).toBe('invalid redirect URI');
  });
});

describe('verify_email link grants (behaviour.md §2.1 granted roles)', () => {
  it('refuses roles the user does not hold without consuming the token; scope from the link applies', async () => {
    const a = makeEmailAuthn();
    await a.call('Signup', signupBody());
    const token = a.lastToken();
    const refused = new URL((await a.call('VerifyEmailLink', { token, roles: 'admin' })).res.redirect_url);
    expect(Object.fromEntries(refused.searchParams)).toEqual({ error: 'invalid_argument', error_description: 'invalid roles' });
    expect(a.storage.verificationRequests()[0]!.consumedAt).toBeNull();
    const ok = new URL((await a.call('VerifyEmailLink', { token, roles: 'user', scope: 'openid email' })).res.redirect_url);
    expect(decodeJwt(ok.searchParams.get('access_token')!)).toMatchObject({ roles: ['user'], scope: ['openid', 'email'] });
  });
});

describe('update_profile email change with verification on (behaviour.md §3.5)', () => {
  it('marks the new address unverified, mails an update_email link and verifies it through verify_email', async () => {
    const a = makeEmailAuthn({ enableEmailVerification: false });
    const s = await a.signup('ada@example.com');
    a.options.enableEmailVerification = true;
    const { res } = await a.call('UpdateProfile', { email: 'ada.new@example.com' }, s.bearer);
    expect(res.message).toBe('Profile details updated successfully. For the email change we have sent new verification email, please verify and continue');
    expect(await a.storage.users.findByEmail('ada.new@example.com')).toMatchObject({ emailVerifiedAt: null });
    expect(a.mails().at(-1)).toMatchObject({ event_name: 'update_email', to: 'ada.new@example.com' });
    const verified = await a.call('VerifyEmail', { token: a.lastToken('ada.new@example.com') });
    expect(verified.res.user).toMatchObject({ email: 'ada.new@example.com', email_verified: true });
  });
});
