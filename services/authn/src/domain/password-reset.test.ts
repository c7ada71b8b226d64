import { describe, it, expect } from '@jest/globals';
import { PASSWORD, T0, URL_ } from '../fixture.ts';
import { makeEmailAuthn } from './email-fixture.ts';

const NEW_PASSWORD = 'N3w!password';
const SENT = "If an account exists for this email, a password reset link has been sent. Please check your inbox. If you don't receive it within a few minutes, double-check the email address for typos.";

async function verifiedUser(email = 'ada@example.com') {
  const a = makeEmailAuthn({ enableEmailVerification: false });
  const s = await a.signup(email);
  return { a, s };
}

describe('forgot_password (behaviour.md §3.4)', () => {
  it('mails a reset link to <url>/app/reset-password, --reset-password-url or the request redirect_uri', async () => {
    const { a } = await verifiedUser();
    expect((await a.call('ForgotPassword', { email: ' ADA@example.com' })).res).toEqual({ message: SENT, should_show_mobile_otp_screen: false });
    const url = new URL(a.mails().at(-1)!.variables.verification_url);
    expect(`${url.origin}${url.pathname}`).toBe(`${URL_}/app/reset-password`);
    expect(a.mails().at(-1)).toMatchObject({ event_name: 'forgot_password', to: 'ada@example.com' });
    a.advance(60);
    a.options.resetPasswordUrl = 'https://auth.example.com/reset?lang=en';
    await a.call('ForgotPassword', { email: 'ada@example.com' });
    expect(a.mails().at(-1)!.variables.verification_url).toMatch(/^https:\/\/auth\.example\.com\/reset\?lang=en&token=[A-Za-z0-9_-]{43}$/);
    a.advance(60);
    await a.call('ForgotPassword', { email: 'ada@example.com', redirect_uri: `${URL_}/custom` });
    expect(a.mails().at(-1)!.variables.verification_url).toMatch(new RegExp(`^${URL_}/custom\\?token=`));
    await expect(a.call('ForgotPassword', { email: 'ada@example.com', redirect_uri: 'https://evil.example.net/' })).rejects.toMatchObject({ message: 'invalid redirect URI' });
  });

  it('answers an unknown or revoked address exactly like a known one and sends nothing', async () => {
    const { a } = await verifiedUser();
    const known = await a.call('ForgotPassword', { email: 'ada@example.com' });
    const unknown = await a.call('ForgotPassword', { email: 'nobody@example.com' });
    expect(unknown).toEqual(known);
    const u = (await a.storage.users.findByEmail('ada@example.com'))!;
    await a.storage.users.transaction((tx) => tx.users.update({ ...u, revokedTimestamp: T0 }));
    a.advance(61);
    expect(await a.call('ForgotPassword', { email: 'ada@example.com' })).toEqual(known);
    expect(a.mails().map((m) => m.to)).toEqual(['ada@example.com']);
  });

  it('sends at most one link per 60 s; the newest link supersedes the previous one', async () => {
    const { a } = await verifiedUser();
    await a.call('ForgotPassword', { email: 'ada@example.com' });
    const first = a.lastToken();
    await a.call('ForgotPassword', { email: 'ada@example.com' });
    expect(a.mails()).toHaveLength(1);
    a.advance(60);
    await a.call('ForgotPassword', { email: 'ada@example.com' });
    expect(a.mails()).toHaveLength(2);
    await expect(a.call('ResetPassword', { token: first, password: NEW_PASSWORD, confirm_password: NEW_PASSWORD })).rejects.toMatchObject({ code: 'invalid_argument', message: 'invalid token' });
  });

  it('refuses without SMTP, with a disabled method, bad input and the phone path without SMS', async () => {
    const { a } = await verifiedUser();
    const cases: Array<[Record<string, unknown>, string, string]> = [
      [{}, 'invalid_argument', 'email or phone number is required'],
      [{ email: 'not-an-email' }, 'invalid_argument', 'invalid email address'],
      [{ email: 'x'.repeat(321) }, 'invalid_argument', 'email must be at most 320 characters'],
      [{ email: 42 }, 'invalid_argument', 'invalid value for field "email": expected string'],
      [{ phone_number: '+12025550123' }, 'failed_precondition', 'SMS service not enabled'],
    ];
    for (const [req, code, message] of cases) await expect(a.call('ForgotPassword', req)).rejects.toMatchObject({ code, message });
    a.options.smtpHost = undefined;
    await expect(a.call('ForgotPassword', { email: 'ada@example.com' })).rejects.toMatchObject({ code: 'failed_precondition', message: 'email service not enabled' });
    a.options.enableBasicAuthentication = false;
    await expect(a.call('ForgotPassword', { email: 'ada@example.com' })).rejects.toMatchObject({ code: 'failed_precondition', message: 'basic authentication is disabled for this instance' });
    expect(a.mails()).toEqual([]);
  });
});

describe('reset_password (behaviour.md §3.4)', () => {
  it('sets the password, deletes every session, clears the lockout and consumes the token', async () => {
    const { a, s } = await verifiedUser();
    for (let i = 0; i < 4; i++) await a.call('Login', { email: 'ada@example.com', password: 'wrong' }).catch(() => undefined);
    await a.call('ForgotPassword', { email: 'ada@example.com' });
    const token = a.lastToken();
    const { res, cookies } = await a.call('ResetPassword', { token, password: NEW_PASSWORD, confirm_password: NEW_PASSWORD });
    expect(res).toEqual({ message: 'Password updated successfully.' });
    expect(cookies).toEqual([]);
    await expect(a.call('Profile', {}, s.bearer)).rejects.toMatchObject({ code: 'unauthenticated' });
    await expect(a.call('Login', { email: 'ada@example.com', password: PASSWORD })).rejects.toMatchObject({ message: 'invalid credentials' });
    for (let i = 0; i < 3; i++) await a.call('Login', { email: 'ada@example.com', password: 'wrong' }).catch(() => undefined);
    await expect(a.call('Login', { email: 'ada@example.com', password: NEW_PASSWORD })).resolves.toBeDefined();
    await expect(a.call('ResetPassword', { token, password: NEW_PASSWORD, confirm_password: NEW_PASSWORD })).rejects.toMatchObject({ message: 'invalid token' });
  });

  it('verifies the email of an unverified user', async () => {
    const a = makeEmailAuthn();
    await a.call('Signup', { email: 'ada@example.com', password: PASSWORD, confirm_password: PASSWORD });
    await a.call('ForgotPassword', { email: 'ada@example.com' });
    await a.call('ResetPassword', { token: a.lastToken(), password: NEW_PASSWORD, confirm_password: NEW_PASSWORD });
    expect((await a.call('Login', { email: 'ada@example.com', password: NEW_PASSWORD })).res.user.email_verified).toBe(true);
  });

  it('checks the request in the documented order', async () => {
    const { a } = await verifiedUser();
    await a.call('ForgotPassword', { email: 'ada@example.com' });
    const token = a.lastToken();
    const cases: Array<[Record<string, unknown>, string, string]> = [
      [{ password: NEW_PASSWORD, confirm_password: NEW_PASSWORD }, 'invalid_argument', 'token or otp is required'],
      [{ otp: '123456', password: NEW_PASSWORD, confirm_password: NEW_PASSWORD }, 'invalid_argument', 'phone number is required'],
      [{ otp: '123456', phone_number: '+12025550123', password: NEW_PASSWORD, confirm_password: NEW_PASSWORD }, 'unauthenticated', 'invalid session'],
      [{ token: 'nope', password: 'x', confirm_password: 'y' }, 'invalid_argument', 'invalid token'],
      [{ token, password: NEW_PASSWORD, confirm_password: 'Other1!pass' }, 'invalid_argument', "passwords don't match"],
      [{ token, password: 'short', confirm_password: 'short' }, 'invalid_argument', 'password must be between 8 and 128 characters'],
    ];
    for (const [req, code, message] of cases) await expect(a.call('ResetPassword', req)).rejects.toMatchObject({ code, message });
    await a.call('Signup', { email: 'eve@example.com', password: PASSWORD, confirm_password: PASSWORD });
    a.options.enableMagicLinkLogin = true;
    await a.call('MagicLinkLogin', { email: 'eve@example.com' });
    await expect(a.call('ResetPassword', { token: a.lastToken('eve@example.com'), password: NEW_PASSWORD, confirm_password: NEW_PASSWORD })).rejects.toMatchObject({ message: 'invalid token' });
    a.advance(1800);
    await expect(a.call('ResetPassword', { token, password: NEW_PASSWORD, confirm_password: NEW_PASSWORD })).rejects.toMatchObject({ message: 'invalid token' });
  });
});
