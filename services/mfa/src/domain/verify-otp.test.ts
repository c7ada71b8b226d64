/**
 * @module verify-otp.test: the verdict on an MFA session's emailed code (behaviour.md §4.1 grant,
 * §4.2 MFA session, §4.3 verify_otp, §4.4 expiry and lockout), on the memory store.
 */
import { describe, expect, it } from '@jest/globals';
import { sha256Hex } from '@gatehouse/crypto';
import { makeMfa, T0, user, type MfaFixture } from '../fixture.ts';
import { otpLockoutKey, verifyOtpChallenge, type OtpAttempt } from './verify-otp.ts';

const INVALID_SESSION = { code: 'unauthenticated', message: 'invalid session' };
const INVALID_OTP = { code: 'invalid_argument', message: 'invalid otp' };
const LOCKED = { code: 'resource_exhausted', message: 'too many failed attempts, please try again later' };

const ada = user('u-ada');
const bob = user('u-bob', { phone_number: '+15550199' });

/** verify_otp for the session behind `handle` */
const verify = (m: MfaFixture, handle: string | undefined, otp: string | null | undefined, more: Partial<OtpAttempt> = {}) =>
  verifyOtpChallenge(m.c, handle, { otp, isTotp: null, ...more });

/** a code of the alphabet that is not `code` */
const wrongFor = (code: string): string => (code === 'AAAAAA' ? 'BBBBBB' : 'AAAAAA');

/** opens a login challenge for `u`; its handle and the code mailed */
async function login(m: MfaFixture, u = ada, grant = {}): Promise<{ handle: string; code: string }> {
  const handle = await m.open(u, grant);
  return { handle, code: m.lastCode(u.email!) };
}

describe('verify_otp (behaviour.md §4.3)', () => {
  it('accepts the code trimmed and in any case, and answers the verdict with the grant stored at open', async () => {
    const m = makeMfa();
    const { handle, code } = await login(m, ada, { loginMethod: 'magic_link_login', roles: ['admin'], scope: ['openid', 'offline_access'], state: 'st-9', authTime: T0 - 60 });
    m.advance(10);
    await expect(verify(m, handle, `  ${code.toLowerCase()} `, { email: ` ${ada.email!.toUpperCase()} ` })).resolves.toEqual({
      userId: ada.id, verifiedChannel: 'email', verifiedContact: ada.email, loginMethod: 'magic_link_login',
      roles: ['admin'], scope: ['openid', 'offline_access'], state: 'st-9', authTime: T0 - 60, amr: ['otp'], enrolledMethod: '',
    });
  });

  it('the verdict carries the grant of the first step, never the completing request\'s (behaviour.md §4.1)', async () => {
    const m = makeMfa();
    const { handle, code } = await login(m, ada, { roles: ['user'], scope: ['openid'], state: null, authTime: T0 });
    // what a completing request might say about the grant; OtpAttempt has no place for it
    const request = { email: ada.email, roles: ['admin'], scope: ['openid', 'offline_access'], state: 'from-the-request', loginMethod: 'admin', authTime: 1 };
    await expect(verify(m, handle, code, request)).resolves.toMatchObject({ loginMethod: 'basic_auth', roles: ['user'], scope: ['openid'], state: null, authTime: T0 });
  });

  it('accepts an email or phone number of the session\'s user, trimmed and in any case', async () => {
    const m = makeMfa();
    const { handle, code } = await login(m, bob);
    await expect(verify(m, handle, code, { email: ' U-BOB@example.COM ', phoneNumber: ' +15550199 ' })).resolves.toMatchObject({ userId: bob.id });
  });

  it('single use: the verdict deletes the session and the code; the same cookie is then 401 invalid session', async () => {
    const m = makeMfa();
    const { handle, code } = await login(m);
    await verify(m, handle, code);
    expect(await m.store.findSessionByHandleHash(sha256Hex(handle))).toBeNull();
    expect(await m.store.findOtp(ada.id, 'email')).toBeNull();
    await expect(verify(m, handle, code)).rejects.toMatchObject(INVALID_SESSION);
  });

  it('single use: of two concurrent completions with the right code exactly one gets the verdict, the other 401 invalid session', async () => {
    const m = makeMfa();
    const { handle, code } = await login(m);
    const results = await Promise.allSettled([verify(m, handle, code), verify(m, handle, code)]);
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    expect(results.find((r) => r.status === 'rejected')).toMatchObject({ reason: INVALID_SESSION });
  });
});

describe('MFA session refusals (behaviour.md §4.2): 401 invalid session', () => {
  it('refuses a missing, unknown or expired session', async () => {
    const m = makeMfa();
    const { handle, code } = await login(m);
    await expect(verify(m, undefined, code)).rejects.toMatchObject(INVALID_SESSION);
    await expect(verify(m, '', code)).rejects.toMatchObject(INVALID_SESSION);
    await expect(verify(m, 'forged', code)).rejects.toMatchObject(INVALID_SESSION);
    // the stored SHA-256 of the handle is not a handle
    await expect(verify(m, sha256Hex(handle), code)).rejects.toMatchObject(INVALID_SESSION);
    m.advance(299);
    await expect(verify(m, handle, wrongFor(code))).rejects.toMatchObject(INVALID_OTP);
    m.advance(1);
    await expect(verify(m, handle, code)).rejects.toMatchObject(INVALID_SESSION);
  });

  it('refuses an email or phone number of another user (a foreign session)', async () => {
    const m = makeMfa();
    const { handle, code } = await login(m, ada);
    await expect(verify(m, handle, code, { email: bob.email })).rejects.toMatchObject(INVALID_SESSION);
    await expect(verify(m, handle, code, { phoneNumber: bob.phone_number })).rejects.toMatchObject(INVALID_SESSION);
    // the session is untouched by the refusals
    await expect(verify(m, handle, code, { email: ada.email })).resolves.toMatchObject({ userId: ada.id });
  });

  it('refuses a session of the wrong purpose: verify_otp completes login sessions only', async () => {
    const m = makeMfa();
    const handle = await m.seedSession({ purpose: 'password_reset' });
    await expect(verify(m, handle, 'ABC123')).rejects.toMatchObject(INVALID_SESSION);
  });

  it('binds the code to the session\'s user: another user\'s code on this session is invalid otp', async () => {
    const m = makeMfa();
    const mine = await login(m, ada);
    const theirs = await login(m, bob);
    if (theirs.code !== mine.code) await expect(verify(m, mine.handle, theirs.code)).rejects.toMatchObject(INVALID_OTP);
  });
});

describe('verify_otp refusals (behaviour.md §4.3)', () => {
  it.each([
    [undefined, 'otp is required'],
    [null, 'otp is required'],
    ['', 'otp is required'],
    ['   ', 'otp is required'],
    ['x'.repeat(17), 'otp must be at most 16 characters'],
  ])('refuses otp %j with 400 invalid_argument %j', async (otp, message) => {
    const m = makeMfa();
    const { handle } = await login(m);
    await expect(verify(m, handle, otp)).rejects.toMatchObject({ code: 'invalid_argument', message });
  });

  it('takes up to 16 characters after trimming', async () => {
    const m = makeMfa();
    const { handle } = await login(m);
    await expect(verify(m, handle, ` ${'X'.repeat(16)} `)).rejects.toMatchObject(INVALID_OTP);
  });

  it('is_totp without an authenticator app is 400 failed_precondition authenticator app is not set up for this account, and counts no failure', async () => {
    const m = makeMfa();
    const { handle, code } = await login(m);
    await expect(verify(m, handle, code, { isTotp: true })).rejects.toMatchObject({ code: 'failed_precondition', message: 'authenticator app is not set up for this account' });
    expect(await m.store.failures.attemptsSince(otpLockoutKey(ada.id), 0)).toEqual([]);
    await expect(verify(m, handle, code, { isTotp: false })).resolves.toMatchObject({ userId: ada.id });
  });

  it('404 OTP not found when the session has no code: no OTP channel, or the code was used through another session', async () => {
    const m = makeMfa();
    const totpSession = await m.seedSession({ channel: null, contact: null });
    await expect(verify(m, totpSession, 'ABC123')).rejects.toMatchObject({ code: 'not_found', message: 'OTP not found' });
    const first = await login(m);
    m.advance(10);
    const second = await m.open(ada);
    await verify(m, second, first.code);
    await expect(verify(m, first.handle, first.code)).rejects.toMatchObject({ code: 'not_found', message: 'OTP not found' });
  });

  it('a wrong code is 400 invalid otp and counts one failure; the code stays usable', async () => {
    const m = makeMfa();
    const { handle, code } = await login(m);
    await expect(verify(m, handle, wrongFor(code))).rejects.toMatchObject(INVALID_OTP);
    expect(await m.store.failures.attemptsSince(otpLockoutKey(ada.id), 0)).toEqual([T0]);
    await expect(verify(m, handle, code)).resolves.toMatchObject({ userId: ada.id });
  });
});

describe('expiry (behaviour.md §2.1, §4.4): the code lives 300 s from its send, the session 300 s from its last arm', () => {
  it('the code works until its 300th second', async () => {
    const m = makeMfa();
    const { handle, code } = await login(m);
    m.advance(299);
    await expect(verify(m, handle, code)).resolves.toMatchObject({ userId: ada.id });
  });

  it('the code expires after 300 s even while a later session is live: 400 otp expired, no failure counted', async () => {
    const m = makeMfa();
    const { code } = await login(m);
    m.advance(20);
    // a second login within 30 s keeps the live code but opens a session that lives until T0 + 320
    const second = await m.open(ada);
    m.advance(280);
    await expect(verify(m, second, code)).rejects.toMatchObject({ code: 'invalid_argument', message: 'otp expired' });
    await expect(verify(m, second, wrongFor(code))).rejects.toMatchObject({ message: 'otp expired' });
    expect(await m.store.failures.attemptsSince(otpLockoutKey(ada.id), 0)).toEqual([]);
  });
});

describe('lockout (behaviour.md §4.4): 5 failed verifications per user within a sliding 15 min', () => {
  /** five wrong codes on `handle`, one a minute from now on; the clock ends on the fifth */
  async function failFiveTimes(m: MfaFixture, handle: string, code: string): Promise<void> {
    for (let i = 0; i < 5; i++) {
      if (i > 0) m.advance(60);
      await expect(verify(m, handle, wrongFor(code))).rejects.toMatchObject(INVALID_OTP);
    }
  }

  it('locks further attempts, the right code included: 429 with Retry-After, the seconds until the window admits another', async () => {
    const m = makeMfa();
    const { handle, code } = await login(m);
    await failFiveTimes(m, handle, code); // at T0, T0+60, …, T0+240
    m.advance(10);
    const locked = await verify(m, handle, code).catch((e: unknown) => e);
    expect(locked).toMatchObject({ ...LOCKED, headers: { 'Retry-After': String(T0 + 900 - (T0 + 250)) } });
    // a locked attempt is no failure: the window is unchanged
    expect(await m.store.failures.attemptsSince(otpLockoutKey(ada.id), 0)).toHaveLength(5);
    // and the code was not used up
    expect(await m.store.findOtp(ada.id, 'email')).not.toBeNull();
  });

  it('the window clears 15 min after the first failure: a new login\'s code then works', async () => {
    const m = makeMfa();
    const first = await login(m);
    await failFiveTimes(m, first.handle, first.code);
    m.advance(899 - 240); // T0 + 899: the first failure is still in the window
    const again = await login(m);
    await expect(verify(m, again.handle, again.code)).rejects.toMatchObject({ ...LOCKED, headers: { 'Retry-After': '1' } });
    m.advance(1);
    await expect(verify(m, again.handle, again.code)).resolves.toMatchObject({ userId: ada.id });
  });

  it('slides: once the first failure leaves the window one attempt is admitted, and a wrong one locks again', async () => {
    const m = makeMfa();
    const first = await login(m);
    await failFiveTimes(m, first.handle, first.code);
    m.advance(900 - 240); // T0 + 900
    const again = await login(m);
    await expect(verify(m, again.handle, wrongFor(again.code))).rejects.toMatchObject(INVALID_OTP);
    // the window now holds T0+60 … T0+240 and T0+900: the next attempt is admitted at T0+60+900
    await expect(verify(m, again.handle, again.code)).rejects.toMatchObject({ ...LOCKED, headers: { 'Retry-After': '60' } });
  });

  it('counts per user across the user\'s MFA sessions: another session of the user is locked, another user is not', async () => {
    const m = makeMfa();
    const mine = await login(m, ada);
    await failFiveTimes(m, mine.handle, mine.code);
    const other = await m.open(ada);
    await expect(verify(m, other, mine.code)).rejects.toMatchObject(LOCKED);
    const theirs = await login(m, bob);
    await expect(verify(m, theirs.handle, theirs.code)).resolves.toMatchObject({ userId: bob.id });
  });

  it('a success resets the counter', async () => {
    const m = makeMfa();
    const first = await login(m);
    for (let i = 0; i < 4; i++) await expect(verify(m, first.handle, wrongFor(first.code))).rejects.toMatchObject(INVALID_OTP);
    await verify(m, first.handle, first.code);
    expect(await m.store.failures.attemptsSince(otpLockoutKey(ada.id), 0)).toEqual([]);
    m.advance(1);
    const second = await login(m);
    for (let i = 0; i < 4; i++) await expect(verify(m, second.handle, wrongFor(second.code))).rejects.toMatchObject(INVALID_OTP);
    await expect(verify(m, second.handle, second.code)).resolves.toMatchObject({ userId: ada.id });
  });

  it('counts email/SMS OTP apart from TOTP: TOTP failures do not lock the emailed code', async () => {
    const m = makeMfa();
    const { handle, code } = await login(m);
    for (let i = 0; i < 5; i++) await m.store.failures.claim(`totp:${ada.id}`, T0, 5, 900);
    expect(otpLockoutKey(ada.id)).toBe(`otp:${ada.id}`);
    await expect(verify(m, handle, code)).resolves.toMatchObject({ userId: ada.id });
  });
});
