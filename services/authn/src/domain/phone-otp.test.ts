/**
 * @module phone-otp.test: authn's SMS legs through its handlers, with mfa's internal API recorded
 * (issue 16; behaviour.md §3.2 phone signup, §3.3 step 8, §3.4 forgot/reset password by phone). The real
 * mfa service and Twilio stand-in run end to end in test/e2e/sms-otp.e2e.test.ts.
 */
import { describe, expect, it } from '@jest/globals';
import { decodeJwt } from 'jose';
import type { mfa } from '@gatehouse/contracts';
import { AppError } from '@gatehouse/errors';
import { makeAuthn, PASSWORD } from '../fixture.ts';
import { recordingMfa } from '../mfa-fixture.ts';
import type { AuthnOptions } from './options.ts';

const TWILIO: Partial<AuthnOptions> = { twilioAccountSid: 'AC1', twilioApiKey: 'SK1', twilioApiSecret: 'secret', twilioSender: '+15550000000' };
const PHONE = '+15551234567';
const NEW_PASSWORD = 'N3w!passw0rd';

function phoneAuthn(over: Partial<AuthnOptions> = {}) {
  const m = recordingMfa();
  const a = makeAuthn({ ...TWILIO, enablePhoneVerification: true, ...over }, { mfa: m.client });
  const audits = () => a.storage.published.filter((e) => e.name === 'audit.recorded').map((e) => e.data as { action: string; resource_id?: string; metadata: string });
  return { a, m, audits };
}
const smsVerdict = (userId: string, over: Partial<mfa.MfaVerdict> = {}): mfa.MfaVerdict => ({
  user_id: userId, verified_channel: 'sms', verified_contact: PHONE, login_method: 'mobile_basic_auth',
  roles: ['user'], scope: ['openid'], state: 'st-1', auth_time: 0, amr: ['sms'], enrolled_method: '', ...over,
});

describe('phone-only signup with phone verification (behaviour.md §3.2)', () => {
  it('creates the user with the phone unverified, asks mfa for a 600 s SMS challenge and answers the mobile OTP screen', async () => {
    const { a, m, audits } = phoneAuthn();
    const { res, cookies } = await a.call('Signup', { phone_number: ` ${PHONE} `, password: PASSWORD, confirm_password: PASSWORD, state: 'st-1', roles: ['editor'] });
    expect(res).toMatchObject({
      message: 'Please check the OTP in your inbox', should_show_mobile_otp_screen: true, should_show_email_otp_screen: false,
      access_token: null, refresh_token: null, user: null,
    });
    expect(cookies).toEqual(['mfa=handle; Path=/; Max-Age=300; HttpOnly']);
    const u = (await a.storage.users.findByPhone(PHONE))!;
    expect(u).toMatchObject({ phoneNumberVerifiedAt: null, signupMethods: 'mobile_basic_auth', roles: ['editor'] });
    expect(m.opened).toEqual([expect.objectContaining({
      channel: 'sms', purpose: 'login', signup_verification: true, decoy: false, login_method: 'mobile_basic_auth', roles: ['editor'], state: 'st-1',
      user: expect.objectContaining({ id: u.id, phone_number: PHONE, phone_number_verified: false }),
    })]);
    expect(a.storage.published.map((e) => e.name)).toEqual(['user.created', 'user.signup', 'audit.recorded']);
    expect(audits().map((x) => [x.action, x.resource_id])).toEqual([['user.signup', u.id]]);
  });

  it('verify_otp with mfa\'s SMS verdict verifies the phone, issues tokens and audits user.phone_verified', async () => {
    const { a, m, audits } = phoneAuthn();
    await a.call('Signup', { phone_number: PHONE, password: PASSWORD, confirm_password: PASSWORD });
    const u = (await a.storage.users.findByPhone(PHONE))!;
    m.decide(smsVerdict(u.id));
    const { res } = await a.call('VerifyOtp', { otp: 'ABC123', phone_number: PHONE }, { cookie: 'mfa=handle' });
    expect(res).toMatchObject({ message: 'OTP verified successfully.', user: { phone_number_verified: true } });
    expect(decodeJwt(res.access_token)).toMatchObject({ login_method: 'mobile_basic_auth' });
    expect(m.verified).toEqual([expect.objectContaining({ otp: 'ABC123', phone_number: PHONE, purpose: 'login' })]);
    expect(audits()).toEqual([
      expect.objectContaining({ action: 'user.signup', resource_id: u.id }),
      expect.objectContaining({ action: 'user.phone_verified', resource_id: u.id, metadata: '{"via":"otp","protocol":"rest"}' }),
      expect.objectContaining({ action: 'user.login_success', actor_id: u.id, metadata: '{"method":"otp","protocol":"rest"}' }),
    ]);
  });

  it('without the mfa service: unavailable, and nothing is created', async () => {
    const a = makeAuthn({ ...TWILIO, enablePhoneVerification: true });
    await expect(a.call('Signup', { phone_number: PHONE, password: PASSWORD, confirm_password: PASSWORD })).rejects.toMatchObject({ code: 'unavailable' });
    expect(await a.storage.users.findByPhone(PHONE)).toBeNull();
  });

  it('an email signup with a phone is not the phone path: tokens, the phone stored unverified', async () => {
    const { a, m } = phoneAuthn();
    const { res } = await a.call('Signup', { email: 'ada@example.com', phone_number: PHONE, password: PASSWORD, confirm_password: PASSWORD });
    expect(res.message).toBe('Signed up successfully.');
    expect(m.opened).toEqual([]);
  });
});

describe('login step 8 of an unverified phone (behaviour.md §3.3)', () => {
  const unverified = async (over: Partial<AuthnOptions> = {}) => {
    const ctx = phoneAuthn(over);
    await ctx.a.call('Signup', { phone_number: PHONE, password: PASSWORD, confirm_password: PASSWORD });
    ctx.m.opened.length = 0;
    return ctx;
  };

  it('with SMS configured: a texted code, Please check text message for the OTP, the mobile OTP screen', async () => {
    const { a, m } = await unverified();
    const { res, cookies } = await a.call('Login', { phone_number: PHONE, password: PASSWORD, state: 'st-2' });
    expect(res).toMatchObject({ message: 'Please check text message for the OTP', should_show_mobile_otp_screen: true, access_token: null, user: null });
    expect(cookies).toEqual(['mfa=handle; Path=/; Max-Age=300; HttpOnly']);
    expect(m.opened).toEqual([expect.objectContaining({ channel: 'sms', purpose: 'login', signup_verification: false, state: 'st-2' })]);
  });

  it('without SMS configured: 400 phone number is not verified, checked after the password', async () => {
    const { a, m } = await unverified();
    const b = makeAuthn({ enablePhoneVerification: false }, { mfa: m.client, storage: () => ({ users: a.storage.users, lockout: a.storage.lockout, sessions: a.sessions }) });
    await expect(b.call('Login', { phone_number: PHONE, password: 'Wr0ng!pass' })).rejects.toMatchObject({ code: 'unauthenticated', message: 'invalid credentials' });
    await expect(b.call('Login', { phone_number: PHONE, password: PASSWORD })).rejects.toMatchObject({ code: 'failed_precondition', message: 'phone number is not verified' });
    expect(m.opened).toEqual([]);
  });
});

describe('forgot_password by phone (behaviour.md §3.4)', () => {
  it('a known number: a password_reset SMS challenge, the phone answer, audit user.forgot_password_requested', async () => {
    const { a, m, audits } = phoneAuthn({ enablePhoneVerification: false });
    await a.call('Signup', { phone_number: PHONE, password: PASSWORD, confirm_password: PASSWORD });
    const u = (await a.storage.users.findByPhone(PHONE))!;
    const { res, cookies } = await a.call('ForgotPassword', { phone_number: PHONE });
    expect(res).toEqual({ message: 'Please enter the OTP sent to your phone number and change your password.', should_show_mobile_otp_screen: true });
    expect(cookies).toEqual(['mfa=handle; Path=/; Max-Age=300; HttpOnly']);
    expect(m.opened).toEqual([expect.objectContaining({ channel: 'sms', purpose: 'password_reset', decoy: false, user: expect.objectContaining({ id: u.id }) })]);
    expect(audits().map((x) => [x.action, x.resource_id])).toEqual([['user.signup', u.id], ['user.forgot_password_requested', u.id]]);
  });

  it('an unknown or revoked number: the same answer and cookie through a decoy challenge, no audit', async () => {
    const { a, m, audits } = phoneAuthn({ enablePhoneVerification: false });
    await a.call('Signup', { phone_number: PHONE, password: PASSWORD, confirm_password: PASSWORD });
    const u = (await a.storage.users.findByPhone(PHONE))!;
    await a.storage.users.transaction((tx) => tx.users.update({ ...u, revokedTimestamp: a.now() }));
    for (const number of ['+15559999999', PHONE]) {
      const { res, cookies } = await a.call('ForgotPassword', { phone_number: number });
      expect(res).toEqual({ message: 'Please enter the OTP sent to your phone number and change your password.', should_show_mobile_otp_screen: true });
      expect(cookies).toEqual(['mfa=handle; Path=/; Max-Age=300; HttpOnly']);
    }
    expect(m.opened).toEqual([
      expect.objectContaining({ decoy: true, purpose: 'password_reset', user: expect.objectContaining({ phone_number: '+15559999999', email: null }) }),
      expect.objectContaining({ decoy: true, purpose: 'password_reset', user: expect.objectContaining({ phone_number: PHONE }) }),
    ]);
    expect((m.opened[1]!['user'] as { id: string }).id).not.toBe(u.id);
    // the signup's row only: nothing for the two requests
    expect(audits().map((x) => x.action)).toEqual(['user.signup']);
  });

  it('refusals: SMS service not enabled without Twilio; mobile basic auth off; a malformed number', async () => {
    const off = makeAuthn({}, { mfa: recordingMfa().client });
    await expect(off.call('ForgotPassword', { phone_number: PHONE })).rejects.toMatchObject({ code: 'failed_precondition', message: 'SMS service not enabled' });
    const { a } = phoneAuthn({ enableMobileBasicAuthentication: false });
    await expect(a.call('ForgotPassword', { phone_number: PHONE })).rejects.toMatchObject({ code: 'failed_precondition', message: 'mobile basic authentication is disabled for this instance' });
    const { a: b, m } = phoneAuthn();
    await expect(b.call('ForgotPassword', { phone_number: '12ab' })).rejects.toMatchObject({ code: 'invalid_argument', message: 'invalid phone number' });
    expect(m.opened).toEqual([]);
  });
});

describe('reset_password with otp + phone_number (behaviour.md §3.4)', () => {
  const setup = async () => {
    const ctx = phoneAuthn({ enablePhoneVerification: true });
    await ctx.a.call('Signup', { phone_number: PHONE, password: PASSWORD, confirm_password: PASSWORD });
    const u = (await ctx.a.storage.users.findByPhone(PHONE))!;
    ctx.m.decide(smsVerdict(u.id));
    return { ...ctx, u };
  };
  const reset = (over: Record<string, unknown> = {}) => ({ otp: 'ABC123', phone_number: PHONE, password: NEW_PASSWORD, confirm_password: NEW_PASSWORD, ...over });

  it('sets the password, verifies the phone, deletes sessions, asks for a password_reset verdict, audits user.password_reset', async () => {
    const { a, m, u, audits } = await setup();
    const { res, cookies } = await a.call('ResetPassword', reset(), { cookie: 'mfa=handle' });
    expect(res).toEqual({ message: 'Password updated successfully.' });
    expect(cookies).toEqual(['mfa=; Path=/; Max-Age=0; HttpOnly']);
    expect(m.verified).toEqual([expect.objectContaining({ otp: 'ABC123', phone_number: PHONE, purpose: 'password_reset' })]);
    expect((await a.storage.users.findById(u.id))!.phoneNumberVerifiedAt).toBe(a.now());
    expect(audits().map((x) => [x.action, x.metadata])).toEqual([['user.signup', '{"protocol":"rest"}'], ['user.password_reset', '{"via":"otp","protocol":"rest"}']]);
    await expect(a.call('Login', { phone_number: PHONE, password: NEW_PASSWORD })).resolves.toMatchObject({ res: { message: 'Logged in successfully' } });
  });

  it('checks in order: token or otp, phone number, the mfa cookie, the passwords, then mfa\'s verdict; nothing changes on a refusal', async () => {
    const { a, m, u } = await setup();
    const refuse = (body: Record<string, unknown>, cookie: Record<string, string>, code: string, message: string) =>
      expect(a.call('ResetPassword', body, cookie)).rejects.toMatchObject({ code, message });
    const mfaCookie = { cookie: 'mfa=handle' };
    await refuse({ password: NEW_PASSWORD, confirm_password: NEW_PASSWORD }, mfaCookie, 'invalid_argument', 'token or otp is required');
    await refuse(reset({ phone_number: '' }), mfaCookie, 'invalid_argument', 'phone number is required');
    await refuse(reset({ confirm_password: 'x' }), {}, 'unauthenticated', 'invalid session');
    await refuse(reset({ confirm_password: 'x' }), mfaCookie, 'invalid_argument', "passwords don't match");
    await refuse(reset({ password: 'short', confirm_password: 'short' }), mfaCookie, 'invalid_argument', 'password must be between 8 and 128 characters');
    await refuse(reset({ otp: 'A'.repeat(17) }), mfaCookie, 'invalid_argument', 'otp must be at most 16 characters');
    expect(m.verified).toEqual([]);
    m.decide(new AppError('resource_exhausted', 'too many failed attempts, please try again later'));
    await refuse(reset(), mfaCookie, 'resource_exhausted', 'too many failed attempts, please try again later');
    m.decide(smsVerdict(u.id, { verified_contact: '+15550000001' }));
    await refuse(reset(), mfaCookie, 'unauthenticated', 'invalid session');
    m.decide(smsVerdict(u.id));
    await a.storage.users.transaction((tx) => tx.users.update({ ...u, revokedTimestamp: a.now() }));
    await refuse(reset(), mfaCookie, 'failed_precondition', 'user access has been revoked');
    const after = (await a.storage.users.findById(u.id))!;
    expect([after.passwordHash, after.phoneNumberVerifiedAt]).toEqual([u.passwordHash, null]);
  });
});
