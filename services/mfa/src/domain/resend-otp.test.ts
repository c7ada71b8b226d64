/**
 * @module resend-otp.test: resend_otp (behaviour.md §4.3, §4.4 resend limit; §4.2 re-arm), on the
 * memory store.
 */
import { describe, expect, it } from '@jest/globals';
import { sha256Hex } from '@gatehouse/crypto';
import { makeMfa, T0, user, type MfaFixture } from '../fixture.ts';
import { OTP_ALPHABET } from './otp.ts';
import { resendOtp } from './resend-otp.ts';
import { verifyOtpChallenge } from './verify-otp.ts';

const INVALID_SESSION = { code: 'unauthenticated', message: 'invalid session' };
const TOO_EARLY = { code: 'resource_exhausted', message: 'please wait before requesting another OTP' };

const ada = user('u-ada');
const bob = user('u-bob', { phone_number: '+15550199' });

const verify = (m: MfaFixture, handle: string, otp: string) => verifyOtpChallenge(m.c, handle, { otp, isTotp: null });

describe('resend_otp (behaviour.md §4.3)', () => {
  it('sends a new code on the session\'s channel: an email.send job to the session\'s contact, with the user of the challenge', async () => {
    const m = makeMfa();
    const handle = await m.open(ada);
    m.advance(30);
    await resendOtp(m.c, handle, {});
    expect(m.store.published).toHaveLength(2);
    expect(m.store.published[1]).toEqual({
      id: expect.any(String), name: 'email.send', source: 'mfa', occurredAt: T0 + 30,
      data: { event_name: 'verify_otp', to: ada.email, user: ada, variables: {}, sealed_variables: expect.stringMatching(/^v2\./) },
    });
    expect(m.mails()[1]!.variables.otp).toMatch(new RegExp(`^[${OTP_ALPHABET}]{6}$`));
    expect(await m.store.findOtp(ada.id, 'email')).toMatchObject({ sentAt: T0 + 30, expiresAt: T0 + 330 });
  });

  it('the old code becomes invalid and the new one completes the session', async () => {
    const m = makeMfa();
    const handle = await m.open(ada);
    const old = m.lastCode(ada.email!);
    m.advance(30);
    await resendOtp(m.c, handle, {});
    const fresh = m.lastCode(ada.email!);
    if (fresh !== old) await expect(verify(m, handle, old)).rejects.toMatchObject({ code: 'invalid_argument', message: 'invalid otp' });
    await expect(verify(m, handle, fresh)).resolves.toMatchObject({ userId: ada.id });
  });

  it('re-arms the session for 300 s from the resend: the same handle, a new expiry', async () => {
    const m = makeMfa();
    const handle = await m.open(ada);
    m.advance(40);
    await expect(resendOtp(m.c, handle, {})).resolves.toEqual({ handle, expiresAt: T0 + 340, armedAt: T0 + 40 });
    expect(await m.store.findSessionByHandleHash(sha256Hex(handle))).toMatchObject({ expiresAt: T0 + 340 });
    // past the first send's expiry, the session and the new code still work
    m.advance(299);
    await expect(verify(m, handle, m.lastCode(ada.email!))).resolves.toMatchObject({ userId: ada.id });
  });

  it('accepts an email or phone number of the session\'s user', async () => {
    const m = makeMfa();
    const handle = await m.open(bob);
    m.advance(30);
    await expect(resendOtp(m.c, handle, { email: ' U-BOB@EXAMPLE.COM', phoneNumber: '+15550199 ' })).resolves.toMatchObject({ handle });
  });
});

describe('resend limit (behaviour.md §4.4): at most one code per user and channel every 30 s', () => {
  it('within 30 s of the last send: 429 please wait before requesting another OTP, Retry-After the seconds left; nothing is sent', async () => {
    const m = makeMfa();
    const handle = await m.open(ada);
    m.advance(10);
    await expect(resendOtp(m.c, handle, {})).rejects.toMatchObject({ ...TOO_EARLY, headers: { 'Retry-After': '20' } });
    m.advance(19);
    await expect(resendOtp(m.c, handle, {})).rejects.toMatchObject({ ...TOO_EARLY, headers: { 'Retry-After': '1' } });
    expect(m.mails()).toHaveLength(1);
    expect(await m.store.findSessionByHandleHash(sha256Hex(handle))).toMatchObject({ expiresAt: T0 + 300 });
    m.advance(1);
    await expect(resendOtp(m.c, handle, {})).resolves.toMatchObject({ handle });
  });

  it('a resend re-arms the limit: the next one is 30 s after it', async () => {
    const m = makeMfa();
    const handle = await m.open(ada);
    m.advance(30);
    await resendOtp(m.c, handle, {});
    m.advance(15);
    await expect(resendOtp(m.c, handle, {})).rejects.toMatchObject({ ...TOO_EARLY, headers: { 'Retry-After': '15' } });
  });

  it('counts from the user\'s last code on the channel, whichever of the user\'s sessions sent it', async () => {
    const m = makeMfa();
    await m.open(ada);
    m.advance(20);
    const second = await m.open(ada); // keeps the code sent at T0
    m.advance(5);
    await expect(resendOtp(m.c, second, {})).rejects.toMatchObject({ ...TOO_EARLY, headers: { 'Retry-After': '5' } });
  });
});

describe('resend_otp refusals (behaviour.md §4.2, §4.3): nothing is sent and the session is not re-armed', () => {
  it('refuses a missing, unknown or expired session with 401 invalid session', async () => {
    const m = makeMfa();
    const handle = await m.open(ada);
    m.advance(30);
    await expect(resendOtp(m.c, undefined, {})).rejects.toMatchObject(INVALID_SESSION);
    await expect(resendOtp(m.c, 'forged', {})).rejects.toMatchObject(INVALID_SESSION);
    m.advance(270);
    await expect(resendOtp(m.c, handle, {})).rejects.toMatchObject(INVALID_SESSION);
    expect(m.mails()).toHaveLength(1);
  });

  it('refuses an email or phone number of another user with 401 invalid session', async () => {
    const m = makeMfa();
    const handle = await m.open(ada);
    m.advance(30);
    await expect(resendOtp(m.c, handle, { email: bob.email })).rejects.toMatchObject(INVALID_SESSION);
    await expect(resendOtp(m.c, handle, { phoneNumber: bob.phone_number })).rejects.toMatchObject(INVALID_SESSION);
    expect(m.mails()).toHaveLength(1);
  });

  it('a session without an OTP channel: 400 failed_precondition no one-time code to resend for this session', async () => {
    const m = makeMfa();
    const handle = await m.seedSession({ channel: null, contact: null });
    await expect(resendOtp(m.c, handle, {})).rejects.toMatchObject({ code: 'failed_precondition', message: 'no one-time code to resend for this session' });
  });

  it('a session on the SMS channel, of any purpose: 400 failed_precondition SMS service not enabled', async () => {
    const m = makeMfa();
    const handle = await m.seedSession({ purpose: 'password_reset', channel: 'sms', contact: '+15550100' });
    await expect(resendOtp(m.c, handle, {})).rejects.toMatchObject({ code: 'failed_precondition', message: 'SMS service not enabled' });
  });

  it('without SMTP configured: 400 failed_precondition email service not enabled', async () => {
    const m = makeMfa({ smtpHost: undefined });
    const handle = await m.seedSession();
    await expect(resendOtp(m.c, handle, {})).rejects.toMatchObject({ code: 'failed_precondition', message: 'email service not enabled' });
    expect(m.store.published).toEqual([]);
    expect(await m.store.findSessionByHandleHash(sha256Hex(handle))).toMatchObject({ expiresAt: T0 + 300 });
  });
});
