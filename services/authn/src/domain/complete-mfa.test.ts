import { describe, it, expect } from '@jest/globals';
import { decodeJwt } from 'jose';
import { PASSWORD, makeAuthn } from '../fixture.ts';
import type { mfa } from '@gatehouse/contracts';
import { AppError } from '@gatehouse/errors';
import type { MfaInternalClient } from '../rpc/deps.ts';
import { SMTP } from './email-fixture.ts';
import { recordingMfa } from '../mfa-fixture.ts';


/** An authn with SMTP and email verification on (and `mfa`, when given), and ada signed up, unverified. */
const unverifiedUser = async (mfa?: MfaInternalClient, over = {}) => {
  const a = makeAuthn({ ...SMTP, enableEmailVerification: true, ...over }, mfa ? { mfa } : {});
  await a.call('Signup', { email: 'ada@example.com', password: PASSWORD, confirm_password: PASSWORD });
  return a;
};

describe('login of an unverified email with SMTP configured (behaviour.md §3.3 step 8)', () => {
  it('opens an MFA session at the mfa service with the login grant and answers the OTP screen without tokens', async () => {
    const mfa = recordingMfa();
    const a = await unverifiedUser(mfa.client);
    const { res, cookies } = await a.call('Login', { email: 'Ada@example.com', password: PASSWORD, roles: ['user'], scope: ['openid', 'email'], state: 'st-1' });
    expect(res).toMatchObject({
      message: 'Please check email inbox for the OTP', should_show_email_otp_screen: true,
      access_token: null, id_token: null, refresh_token: null, expires_in: null, user: null,
    });
    expect(cookies).toEqual(['mfa=handle; Path=/; Max-Age=300; HttpOnly']);
    expect(mfa.opened).toEqual([{
      signup_verification: false, decoy: false,
      user: expect.objectContaining({ email: 'ada@example.com', email_verified: false }),
      channel: 'email', purpose: 'login', login_method: 'basic_auth', roles: ['user'], scope: ['openid', 'email'], state: 'st-1', auth_time: a.now(),
    }]);
    // no session was opened and no login was announced
    expect(a.storage.published.map((e) => e.name)).not.toContain('user.login');
  });

  it('is no oracle: a wrong password is invalid credentials and opens nothing', async () => {
    const mfa = recordingMfa();
    const a = await unverifiedUser(mfa.client);
    await expect(a.call('Login', { email: 'ada@example.com', password: 'Wrong!pass1' })).rejects.toMatchObject({ code: 'unauthenticated', message: 'invalid credentials' });
    expect(mfa.opened).toEqual([]);
  });

  it('without SMTP, or without the mfa service, refuses with email address is not verified', async () => {
    const mfa = recordingMfa();
    const noSmtp = await unverifiedUser(mfa.client, { smtpHost: undefined });
    await expect(noSmtp.call('Login', { email: 'ada@example.com', password: PASSWORD })).rejects.toMatchObject({ code: 'failed_precondition', message: 'email address is not verified' });
    const noMfa = await unverifiedUser();
    await expect(noMfa.call('Login', { email: 'ada@example.com', password: PASSWORD })).rejects.toMatchObject({ code: 'failed_precondition', message: 'email address is not verified' });
    expect(mfa.opened).toEqual([]);
  });
});

describe('verify_otp: authn issues the tokens on mfa\'s verdict (behaviour.md §4.1, §4.3; issue 14 §5)', () => {
  const verdict = (userId: string, over: Partial<mfa.MfaVerdict> = {}): mfa.MfaVerdict => ({
    user_id: userId, verified_channel: 'email', verified_contact: 'ada@example.com', login_method: 'basic_auth',
    roles: ['user'], scope: ['openid', 'offline_access'], state: null, auth_time: 0, amr: [], enrolled_method: '', ...over,
  });
  /** an authn whose mfa has proven `v` for the caller's session */
  const provenBy = async (v: (userId: string) => mfa.MfaVerdict | Error) => {
    const m = recordingMfa();
    const a = await unverifiedUser(m.client);
    const u = (await a.storage.users.findByEmail('ada@example.com'))!;
    m.decide(v(u.id));
    return { a, u, m };
  };

  it('marks the email verified, issues tokens with the stored grant, sets session cookies and emits user.login', async () => {
    const { a, u: { id } } = await provenBy((userId) => verdict(userId));
    const { res, cookies } = await a.call('VerifyOtp', { otp: 'ABC123' }, { cookie: 'mfa=handle' });
    expect(res.message).toBe('OTP verified successfully.');
    expect(res.user).toMatchObject({ id, email_verified: true });
    expect(decodeJwt(res.access_token)).toMatchObject({ sub: id, login_method: 'basic_auth', scope: ['openid', 'offline_access'] });
    expect(res.refresh_token).toEqual(expect.any(String));
    // mfa cleared its cookie, authn set the session cookies
    expect(cookies.map((c: string) => c.split('=')[0])).toEqual(['mfa', 'cookie_session', 'cookie_session_domain']);
    expect((await a.storage.users.findById(id))!.emailVerifiedAt).toBe(a.now());
    expect(a.storage.published.filter((e: { name: string }) => e.name === 'user.login').at(-1)).toMatchObject({ name: 'user.login', data: { login_method: 'basic_auth', user: { id, email_verified: true } } });
    expect(a.storage.published.at(-1)).toMatchObject({ name: 'audit.recorded', data: { action: 'user.login_success', actor_id: id } });
    // the user now logs in with the password alone
    await expect(a.call('Login', { email: 'ada@example.com', password: PASSWORD })).resolves.toMatchObject({ res: { message: 'Logged in successfully' } });
  });

  it('refuses a revoked user, a changed address, an unknown user and mfa\'s own refusal; issues nothing', async () => {
    const { a, u, m } = await provenBy((userId) => verdict(userId, { verified_contact: 'old@example.com' }));
    const verifyOtp = () => a.call('VerifyOtp', { otp: 'ABC123' }, { cookie: 'mfa=handle' });
    await expect(verifyOtp()).rejects.toMatchObject({ code: 'failed_precondition', message: "the email address the code was sent to is no longer the account's" });
    m.decide(verdict('no-such-user'));
    await expect(verifyOtp()).rejects.toMatchObject({ code: 'not_found', message: 'user not found' });
    m.decide(new AppError('invalid_argument', 'invalid otp'));
    await expect(verifyOtp()).rejects.toMatchObject({ code: 'invalid_argument', message: 'invalid otp' });
    m.decide(verdict(u.id));
    await a.storage.users.transaction((tx) => tx.users.update({ ...u, revokedTimestamp: a.now() }));
    await expect(verifyOtp()).rejects.toMatchObject({ code: 'failed_precondition', message: 'user access has been revoked' });
    expect((await a.storage.users.findById(u.id))!.emailVerifiedAt).toBeNull();
    expect(a.storage.published.map((e) => e.name)).not.toContain('user.login');
  });

  it('without the mfa service answers failed_precondition', async () => {
    const a = await unverifiedUser();
    await expect(a.call('VerifyOtp', { otp: 'ABC123' }, { cookie: 'mfa=handle' })).rejects.toMatchObject({ code: 'failed_precondition', message: 'MFA is not available' });
    // without the mfa cookie the auth class (mfa) refuses first
    await expect(a.call('VerifyOtp', { otp: 'ABC123' })).rejects.toMatchObject({ code: 'unauthenticated', message: 'invalid session' });
  });

  it('GetUser answers the User record by id (the federated entity), not_found otherwise', async () => {
    const a = await unverifiedUser(recordingMfa().client);
    const id = (await a.storage.users.findByEmail('ada@example.com'))!.id;
    await expect(a.call('GetUser', { user_id: id })).resolves.toMatchObject({ res: { id, email: 'ada@example.com', email_verified: false } });
    await expect(a.call('GetUser', { user_id: 'nope' })).rejects.toMatchObject({ code: 'not_found' });
  });
});
