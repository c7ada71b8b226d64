/**
 * @module challenge.test: opening an MFA session with an emailed code, for the login of an unverified
 * email with SMTP configured (behaviour.md §3.3 step 8, §4.2, §4.4), on the memory store.
 */
import { describe, expect, it } from '@jest/globals';
import { sha256Hex } from '@gatehouse/crypto';
import { loginChallenge, makeMfa, OPTIONS, T0, user } from '../fixture.ts';
import { openOtpChallenge } from './challenge.ts';
import { OTP_ALPHABET, otpDigest } from './otp.ts';
import { verifyOtpChallenge } from './verify-otp.ts';

const CODE = new RegExp(`^[${OTP_ALPHABET}]{6}$`);

describe('opening an MFA session (behaviour.md §3.3 step 8, §4.2)', () => {
  it('opens a 300 s MFA session and mails a 6-character code: one email.send job with the verify_otp template', async () => {
    const m = makeMfa();
    const ada = user();
    const armed = await openOtpChallenge(m.c, loginChallenge(ada));
    expect(armed).toEqual({ handle: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/), expiresAt: T0 + 300, armedAt: T0, codeSent: true });
    expect(m.store.published).toEqual([{
      id: expect.any(String), name: 'email.send', source: 'mfa', occurredAt: T0,
      // issue 23: the code travels sealed (AES-256-GCM under the job key), never in clear
      data: { event_name: 'verify_otp', to: ada.email, user: ada, variables: {}, sealed_variables: expect.stringMatching(/^v2\.[A-Za-z0-9_-]{11}\.[A-Za-z0-9_-]+$/) },
    }]);
    expect(m.mails()[0]!.variables.otp).toMatch(CODE);
    expect(JSON.stringify(m.store.published)).not.toContain(m.mails()[0]!.variables.otp);
  });

  it('stores the user id, purpose, OTP channel, contact, login method, roles, scope, state and expiry of the first step', async () => {
    const m = makeMfa();
    const ada = user();
    const handle = await m.open(ada, { loginMethod: 'magic_link_login', roles: ['user', 'editor'], scope: ['openid', 'offline_access'], state: 'st-9', authTime: T0 - 60 });
    expect(await m.store.findSessionByHandleHash(sha256Hex(handle))).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/), handleHash: sha256Hex(handle), userId: ada.id, purpose: 'login', channel: 'email',
      contact: ada.email, user: ada, loginMethod: 'magic_link_login', roles: ['user', 'editor'], scope: ['openid', 'offline_access'],
      state: 'st-9', authTime: T0 - 60, expiresAt: T0 + 300, createdAt: T0,
    });
  });

  it('keeps auth_time 0 as the time the session opens, and a null state as null', async () => {
    const m = makeMfa();
    const handle = await m.open(user(), { authTime: 0, state: null });
    expect(await m.store.findSessionByHandleHash(sha256Hex(handle))).toMatchObject({ authTime: T0, state: null });
  });

  it('stores only digests: the code as HMAC-SHA-256 under --encryption-key, the cookie handle as SHA-256', async () => {
    const m = makeMfa();
    const ada = user();
    const handle = await m.open(ada);
    const code = m.lastCode(ada.email!);
    const otp = await m.store.findOtp(ada.id, 'email');
    expect(otp).toEqual({ userId: ada.id, channel: 'email', digest: otpDigest(OPTIONS.encryptionKey!, ada.id, 'email', code), expiresAt: T0 + 300, sentAt: T0 });
    // neither the code nor the handle is in what the store holds (only the outbox job carries the code)
    const stored = JSON.stringify([otp, await m.store.findSessionByHandleHash(sha256Hex(handle))]);
    expect(stored).not.toContain(code);
    expect(stored).not.toContain(handle);
  });

  it('derives the code key from --client-secret when --encryption-key is not set', async () => {
    const m = makeMfa({ encryptionKey: undefined });
    const ada = user();
    const handle = await m.open(ada);
    await expect(verifyOtpChallenge(m.c, handle, { otp: m.lastCode(ada.email!), isTotp: null })).resolves.toMatchObject({ userId: ada.id });
  });
});

describe('resend limit at login (behaviour.md §4.4: at most one code per user and channel every 30 s)', () => {
  it('a login within 30 s of the last code keeps that code: a new MFA session, no second mail', async () => {
    const m = makeMfa();
    const ada = user();
    const first = await m.open(ada);
    m.advance(29);
    const second = await openOtpChallenge(m.c, loginChallenge(ada));
    expect(second).toMatchObject({ expiresAt: T0 + 29 + 300, armedAt: T0 + 29, codeSent: false });
    expect(second.handle).not.toBe(first);
    expect(m.mails()).toHaveLength(1);
    expect(await m.store.findOtp(ada.id, 'email')).toMatchObject({ sentAt: T0, expiresAt: T0 + 300 });
    // both sessions are live; the one code completes the second
    expect(await m.store.findSessionByHandleHash(sha256Hex(first))).not.toBeNull();
    await expect(verifyOtpChallenge(m.c, second.handle, { otp: m.lastCode(ada.email!), isTotp: null })).resolves.toMatchObject({ userId: ada.id });
  });

  it('a login 30 s after the last code sends a new code, which replaces the old one', async () => {
    const m = makeMfa();
    const ada = user();
    await m.open(ada);
    const old = m.lastCode(ada.email!);
    m.advance(30);
    const handle = await m.open(ada);
    expect(m.codesFor(ada.email!)).toHaveLength(2);
    expect(await m.store.findOtp(ada.id, 'email')).toMatchObject({ sentAt: T0 + 30, expiresAt: T0 + 330 });
    const fresh = m.lastCode(ada.email!);
    if (fresh !== old) await expect(verifyOtpChallenge(m.c, handle, { otp: old, isTotp: null })).rejects.toMatchObject({ message: 'invalid otp' });
    await expect(verifyOtpChallenge(m.c, handle, { otp: fresh, isTotp: null })).resolves.toMatchObject({ userId: ada.id });
  });

  it('a login right after the code was used sends a new code', async () => {
    const m = makeMfa();
    const ada = user();
    const handle = await m.open(ada);
    await verifyOtpChallenge(m.c, handle, { otp: m.lastCode(ada.email!), isTotp: null });
    m.advance(5);
    const again = await openOtpChallenge(m.c, loginChallenge(ada));
    expect(again.codeSent).toBe(true);
    expect(m.mails()).toHaveLength(2);
  });

  it('counts per user: another user\'s login within 30 s gets its own code', async () => {
    const m = makeMfa();
    await m.open(user('u-ada'));
    m.advance(1);
    await m.open(user('u-bob'));
    expect(m.mails().map((j) => j.to)).toEqual(['u-ada@example.com', 'u-bob@example.com']);
  });
});

describe('refusals: nothing is stored and nothing is mailed', () => {
  const ada = user();

  it.each([
    ['an SMS channel without SMS configured', loginChallenge(ada, { channel: 'sms' }), 'failed_precondition', 'SMS service not enabled'],
    ['an unknown channel', loginChallenge(ada, { channel: 'fax' }), 'invalid_argument', 'unsupported OTP channel: fax'],
    ['another purpose', loginChallenge(ada, { purpose: 'signup' }), 'invalid_argument', 'unsupported MFA session purpose: signup'],
    ['a user without an id', loginChallenge({ ...ada, id: '' }), 'invalid_argument', 'the user needs an id and an email address'],
    ['a user without an email', loginChallenge({ ...ada, email: null }), 'invalid_argument', 'the user needs an id and an email address'],
  ])('refuses %s', async (_what, challenge, code, message) => {
    const m = makeMfa();
    await expect(openOtpChallenge(m.c, challenge)).rejects.toMatchObject({ code, message });
    expect(m.store.published).toEqual([]);
    expect(await m.store.findOtp(ada.id, 'email')).toBeNull();
  });

  it.each(['smtpHost', 'smtpPort', 'smtpSenderEmail'] as const)('without SMTP configured (no %s): failed_precondition email service not enabled', async (flag) => {
    const m = makeMfa({ [flag]: undefined });
    await expect(openOtpChallenge(m.c, loginChallenge(ada))).rejects.toMatchObject({ code: 'failed_precondition', message: 'email service not enabled' });
    expect(m.store.published).toEqual([]);
    expect(await m.store.findOtp(ada.id, 'email')).toBeNull();
  });
});
