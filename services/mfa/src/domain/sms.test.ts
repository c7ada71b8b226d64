/**
 * @module sms.test: one-time codes on the SMS channel (issue 16): the `sms.send` job, phone signup's
 * 600 s, the `password_reset` purpose, decoys for unknown phones, resend on SMS and its 30 s rule,
 * and `SMS service not enabled` without Twilio (behaviour.md §3.2, §3.4, §4.2–§4.4), on the memory store.
 */
import { describe, expect, it } from '@jest/globals';
import { sha256Hex } from '@gatehouse/crypto';
import { loginChallenge, makeMfa, openSmsOtp, T0, user } from '../fixture.ts';
import type { MfaOptions } from './options.ts';
import { openOtpChallenge } from './challenge.ts';
import { OTP_ALPHABET } from './otp.ts';
import { resendOtp } from './resend-otp.ts';
import { verifyOtpChallenge } from './verify-otp.ts';

const TWILIO: Partial<MfaOptions> = { twilioAccountSid: 'AC1', twilioApiKey: 'SK1', twilioApiSecret: 'secret', twilioSender: '+15550000000' };
const CODE = new RegExp(`^[${OTP_ALPHABET}]{6}$`);
const PHONE = '+15550100';

interface SmsJob { to: string; otp: string; user_id: string }

function sms(over: Partial<MfaOptions> = {}) {
  const m = makeMfa({ ...TWILIO, ...over });
  // the worker's view: the sealed code opened (issue 23)
  const texts = (): SmsJob[] => m.store.published.filter((e) => e.name === 'sms.send').map((e) => {
    const { to, user_id: userId } = e.data as SmsJob;
    return { to, otp: openSmsOtp(m.c.jobKey, e.data), user_id: userId };
  });
  return { ...m, texts, lastText: (): string => texts().at(-1)!.otp };
}

const smsLogin = (over = {}) => loginChallenge(user(), { channel: 'sms', loginMethod: 'mobile_basic_auth', ...over });

describe('SMS challenges (behaviour.md §3.3 step 8, §4.4)', () => {
  it('texts a 6-character code to the user\'s phone as one sms.send job, and nothing by email', async () => {
    const m = sms();
    const armed = await openOtpChallenge(m.c, smsLogin());
    expect(armed).toMatchObject({ expiresAt: T0 + 300, codeSent: true });
    expect(m.store.published.map((e) => e.name)).toEqual(['sms.send']);
    expect(m.texts()).toEqual([{ to: PHONE, otp: expect.stringMatching(CODE), user_id: 'u-ada' }]);
    expect(await m.store.findSessionByHandleHash(sha256Hex(armed.handle))).toMatchObject({ channel: 'sms', contact: PHONE, purpose: 'login' });
    const verdict = await verifyOtpChallenge(m.c, armed.handle, { otp: m.lastText().toLowerCase(), isTotp: false, phoneNumber: ` ${PHONE} ` });
    expect(verdict).toMatchObject({ userId: 'u-ada', verifiedChannel: 'sms', verifiedContact: PHONE, loginMethod: 'mobile_basic_auth' });
  });

  it('phone signup verification: the session and the code live 600 s', async () => {
    const m = sms();
    const armed = await openOtpChallenge(m.c, smsLogin({ signupVerification: true }));
    expect(armed.expiresAt).toBe(T0 + 600);
    expect(await m.store.findOtp('u-ada', 'sms')).toMatchObject({ expiresAt: T0 + 600 });
    m.advance(599);
    await expect(verifyOtpChallenge(m.c, armed.handle, { otp: m.lastText(), isTotp: false })).resolves.toMatchObject({ verifiedChannel: 'sms' });
  });

  it('a 300 s login code has expired after 300 s', async () => {
    const m = sms();
    const armed = await openOtpChallenge(m.c, smsLogin());
    m.advance(300);
    await expect(verifyOtpChallenge(m.c, armed.handle, { otp: m.lastText(), isTotp: false })).rejects.toMatchObject({ code: 'unauthenticated', message: 'invalid session' });
  });

  it.each(['twilioAccountSid', 'twilioApiKey', 'twilioApiSecret', 'twilioSender'] as const)('without %s: SMS service not enabled, nothing stored', async (flag) => {
    const m = sms({ [flag]: undefined });
    await expect(openOtpChallenge(m.c, smsLogin())).rejects.toMatchObject({ code: 'failed_precondition', message: 'SMS service not enabled' });
    expect(m.store.published).toEqual([]);
    expect(await m.store.findOtp('u-ada', 'sms')).toBeNull();
  });

  it('refuses a user without a phone number', async () => {
    const m = sms();
    await expect(openOtpChallenge(m.c, loginChallenge(user('u-ada', { phone_number: null }), { channel: 'sms' })))
      .rejects.toMatchObject({ code: 'invalid_argument', message: 'the user needs an id and a phone number' });
  });
});

describe('password_reset sessions and decoys (behaviour.md §3.4)', () => {
  it('a password_reset session is completed only with purpose password_reset', async () => {
    const m = sms();
    const armed = await openOtpChallenge(m.c, smsLogin({ purpose: 'password_reset' }));
    const code = m.lastText();
    await expect(verifyOtpChallenge(m.c, armed.handle, { otp: code, isTotp: false })).rejects.toMatchObject({ code: 'unauthenticated', message: 'invalid session' });
    await expect(verifyOtpChallenge(m.c, armed.handle, { otp: code, isTotp: false, phoneNumber: '+15559999999', purpose: 'password_reset' }))
      .rejects.toMatchObject({ code: 'unauthenticated', message: 'invalid session' });
    await expect(verifyOtpChallenge(m.c, armed.handle, { otp: code, isTotp: false, phoneNumber: PHONE, purpose: 'password_reset' }))
      .resolves.toMatchObject({ userId: 'u-ada', verifiedChannel: 'sms', verifiedContact: PHONE });
  });

  it('a decoy sends nothing, and no code satisfies it: every guess is invalid otp, then 429 like a real session', async () => {
    const m = sms();
    const stranger = user('u-decoy', { email: null, phone_number: '+15557777777' });
    const armed = await openOtpChallenge(m.c, loginChallenge(stranger, { channel: 'sms', purpose: 'password_reset', decoy: true }));
    expect(armed.expiresAt).toBe(T0 + 300);
    expect(m.store.published).toEqual([]);
    for (let i = 0; i < 5; i++) {
      await expect(verifyOtpChallenge(m.c, armed.handle, { otp: 'ABCDEF', isTotp: false, purpose: 'password_reset' })).rejects.toMatchObject({ code: 'invalid_argument', message: 'invalid otp' });
    }
    await expect(verifyOtpChallenge(m.c, armed.handle, { otp: 'ABCDEF', isTotp: false, purpose: 'password_reset' })).rejects.toMatchObject({ code: 'resource_exhausted' });
  });

  it('resend on a decoy keeps the 30 s rule and answers alike, but texts nothing and audits nothing', async () => {
    const m = sms();
    const stranger = user('u-decoy', { email: null, phone_number: '+15557777777' });
    const { handle } = await openOtpChallenge(m.c, loginChallenge(stranger, { channel: 'sms', purpose: 'password_reset', decoy: true }));
    const audit = () => ({ action: 'x' }) as never;
    await expect(resendOtp(m.c, handle, {}, audit)).rejects.toMatchObject({ code: 'resource_exhausted', message: 'please wait before requesting another OTP' });
    m.advance(30);
    await expect(resendOtp(m.c, handle, {}, audit)).resolves.toMatchObject({ expiresAt: T0 + 330 });
    expect(m.store.published).toEqual([]);
  });
});

describe('resend_otp on the SMS channel (behaviour.md §4.3, §4.4)', () => {
  it('texts a new code after 30 s, the old one stops working, and audits user.otp_resent', async () => {
    const m = sms();
    const { handle } = await openOtpChallenge(m.c, smsLogin());
    const first = m.lastText();
    m.advance(29);
    await expect(resendOtp(m.c, handle, {})).rejects.toMatchObject({ code: 'resource_exhausted', headers: { 'Retry-After': '1' } });
    m.advance(1);
    const audits: Array<[string, unknown]> = [];
    await resendOtp(m.c, handle, { phoneNumber: PHONE }, (action, o) => {
      audits.push([action, o]);
      return { action, actor_type: o.actor.type, ip_address: '', user_agent: '', metadata: '{}', created_at: 0 };
    });
    expect(m.texts()).toHaveLength(2);
    expect(audits).toEqual([['user.otp_resent', expect.objectContaining({ resourceType: 'user', resourceId: 'u-ada', details: { channel: 'sms' } })]]);
    expect(m.store.published.map((e) => e.name)).toEqual(['sms.send', 'sms.send', 'audit.recorded']);
    await expect(verifyOtpChallenge(m.c, handle, { otp: first, isTotp: false })).rejects.toMatchObject({ message: 'invalid otp' });
    await expect(verifyOtpChallenge(m.c, handle, { otp: m.lastText(), isTotp: false })).resolves.toMatchObject({ verifiedChannel: 'sms' });
  });

  it('without Twilio: SMS service not enabled', async () => {
    const m = sms();
    const { handle } = await openOtpChallenge(m.c, smsLogin());
    const off = makeMfa({ twilioSender: undefined });
    await off.store.transaction(async (tx) => {
      const s = await m.store.findSessionByHandleHash(sha256Hex(handle));
      await tx.sessions.create(s!);
    });
    off.advance(60);
    await expect(resendOtp(off.c, handle, {})).rejects.toMatchObject({ code: 'failed_precondition', message: 'SMS service not enabled' });
  });
});
