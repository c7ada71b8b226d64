import { describe, it, expect } from '@jest/globals';
import { decodeJwt } from 'jose';
import { PASSWORD, T0, URL_ } from '../fixture.ts';
import { makeEmailAuthn } from './email-fixture.ts';

const SENT = "If an account exists for this email, a magic link has been sent. Please check your inbox. If you don't receive it within a few minutes, double-check the email address for typos.";
const RESENT = "If a verification is pending for this email, a new link has been sent. Please check your inbox. If you don't receive it within a few minutes, double-check the email address for typos.";

describe('magic_link_login (behaviour.md §3.4)', () => {
  it('creates the user on first use, mails a link with state, scope and roles, and logs in through it', async () => {
    const a = makeEmailAuthn();
    const { res } = await a.call('MagicLinkLogin', { email: 'Ada@Example.com', state: 'st', scope: ['openid', 'offline_access'], roles: ['editor'], redirect_uri: `${URL_}/cb` });
    expect(res).toEqual({ message: SENT });
    expect(a.storage.published.filter((e) => e.name !== 'audit.recorded').map((e) => e.name)).toEqual(['user.created', 'user.signup', 'email.send']);
    expect(a.storage.published[0]!.data).toMatchObject({ signup_method: 'magic_link_login', user: { email: 'ada@example.com', roles: ['editor'], email_verified: false } });
    const link = new URL(a.mails()[0]!.variables.verification_url);
    expect(`${link.origin}${link.pathname}`).toBe(`${URL_}/verify_email`);
    expect(Object.fromEntries(link.searchParams)).toMatchObject({ redirect_uri: `${URL_}/cb`, state: 'st', scope: 'openid offline_access', roles: 'editor' });
    const v = await a.call('VerifyEmail', { token: a.lastToken() });
    expect(v.res.user).toMatchObject({ email_verified: true, signup_methods: 'magic_link_login' });
    expect(decodeJwt(v.res.access_token)).toMatchObject({ login_method: 'magic_link_login', roles: ['editor'], scope: ['openid', 'offline_access'] });
    expect(v.res.refresh_token).toEqual(expect.any(String));
    expect(a.storage.published.filter((e) => e.name !== 'audit.recorded').at(-1)).toMatchObject({ name: 'user.login', data: { login_method: 'magic_link_login' } });
  });

  it('adds requested non-protected roles to an existing user at verification', async () => {
    const a = makeEmailAuthn({ enableEmailVerification: false });
    await a.signup('ada@example.com');
    await a.call('MagicLinkLogin', { email: 'ada@example.com', roles: ['editor'] });
    const v = await a.call('VerifyEmail', { token: a.lastToken() });
    expect(v.res.user).toMatchObject({ roles: ['user', 'editor'], signup_methods: 'basic_auth,magic_link_login' });
    await expect(a.call('MagicLinkLogin', { email: 'ada@example.com', roles: ['admin'] })).rejects.toMatchObject({ message: 'invalid roles' });
  });

  it('sends nothing for a revoked user or, with signup disabled, an unknown address; one mail per 60 s', async () => {
    const a = makeEmailAuthn({ enableSignup: false });
    expect((await a.call('MagicLinkLogin', { email: 'nobody@example.com' })).res.message).toBe(SENT);
    expect(await a.storage.users.findByEmail('nobody@example.com')).toBeNull();
    a.options.enableSignup = true;
    await a.call('MagicLinkLogin', { email: 'ada@example.com' });
    await a.call('MagicLinkLogin', { email: 'ada@example.com' });
    expect(a.mails()).toHaveLength(1);
    const u = (await a.storage.users.findByEmail('ada@example.com'))!;
    await a.storage.users.transaction((tx) => tx.users.update({ ...u, revokedTimestamp: T0 }));
    a.advance(61);
    expect((await a.call('MagicLinkLogin', { email: 'ada@example.com' })).res.message).toBe(SENT);
    expect(a.mails()).toHaveLength(1);
  });

  it('is refused when disabled, and for bad input, with nothing queued', async () => {
    const a = makeEmailAuthn({ enableMagicLinkLogin: false });
    await expect(a.call('MagicLinkLogin', { email: 'ada@example.com' })).rejects.toMatchObject({ code: 'failed_precondition', message: 'magic link login is disabled for this instance' });
    a.options.enableMagicLinkLogin = true;
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ email: 'bad' }, 'invalid email address'],
      [{}, 'invalid email address'],
      [{ email: ['a@b.co'] }, 'invalid value for field "email": expected string'],
      [{ email: 'ada@example.com', state: 's'.repeat(3000) }, 'state must be at most 2048 characters'],
      [{ email: 'ada@example.com', redirect_uri: 'javascript:alert(1)' }, 'invalid redirect URI'],
    ];
    for (const [req, message] of cases) await expect(a.call('MagicLinkLogin', req)).rejects.toMatchObject({ code: 'invalid_argument', message });
    expect(a.storage.published).toEqual([]);
  });
});

describe('resend_verify_email (behaviour.md §3.4)', () => {
  it('re-sends a pending link after 60 s and invalidates the previous one', async () => {
    const a = makeEmailAuthn();
    await a.call('Signup', { email: 'ada@example.com', password: PASSWORD, confirm_password: PASSWORD, redirect_uri: `${URL_}/x` });
    const first = a.lastToken();
    expect((await a.call('ResendVerifyEmail', { email: 'ada@example.com', identifier: 'basic_auth_signup' })).res).toEqual({ message: RESENT });
    expect(a.mails()).toHaveLength(1);
    a.advance(60);
    await a.call('ResendVerifyEmail', { email: 'ADA@example.com', identifier: 'basic_auth_signup' });
    expect(a.mails()).toHaveLength(2);
    expect(new URL(a.mails()[1]!.variables.verification_url).searchParams.get('redirect_uri')).toBe(`${URL_}/x`);
    await expect(a.call('VerifyEmail', { token: first })).rejects.toMatchObject({ message: 'invalid verification token' });
    await a.call('VerifyEmail', { token: a.lastToken() });
    a.advance(60);
    await a.call('ResendVerifyEmail', { email: 'ada@example.com', identifier: 'basic_auth_signup' });
    expect(a.mails()).toHaveLength(2);
  });

  it('re-sends a forgot_password link to the same reset target', async () => {
    const a = makeEmailAuthn({ enableEmailVerification: false });
    await a.signup('ada@example.com');
    await a.call('ForgotPassword', { email: 'ada@example.com' });
    a.advance(60);
    await a.call('ResendVerifyEmail', { email: 'ada@example.com', identifier: 'forgot_password' });
    expect(a.mails().map((m) => m.event_name)).toEqual(['forgot_password', 'forgot_password']);
    expect(a.mails()[1]!.variables.verification_url).toMatch(new RegExp(`^${URL_}/app/reset-password\\?token=`));
  });

  it('answers the same when nothing is pending, and refuses a bad identifier or email', async () => {
    const a = makeEmailAuthn();
    expect((await a.call('ResendVerifyEmail', { email: 'nobody@example.com', identifier: 'update_email' })).res).toEqual({ message: RESENT });
    await expect(a.call('ResendVerifyEmail', { email: 'ada@example.com', identifier: 'magic_link_login' })).rejects.toMatchObject({ code: 'invalid_argument', message: 'invalid identifier' });
    await expect(a.call('ResendVerifyEmail', { email: 'ada@example.com' })).rejects.toMatchObject({ message: 'invalid identifier' });
    await expect(a.call('ResendVerifyEmail', { email: 'bad', identifier: 'basic_auth_signup' })).rejects.toMatchObject({ code: 'invalid_argument', message: 'invalid email address' });
    expect(a.mails()).toEqual([]);
  });
});
