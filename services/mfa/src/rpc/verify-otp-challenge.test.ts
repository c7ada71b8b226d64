/**
 * @module verify-otp-challenge.test: MfaInternal.VerifyOtpChallenge through the in-process client:
 * the handle read from the `mfa` cookie, the verdict on the wire, and the cookie cleared on a verdict
 * (behaviour.md §2.4, §4.2 single use, §4.3 verify_otp).
 */
import { describe, expect, it } from '@jest/globals';
import { makeMfa, user, withCookie, type MfaFixture } from '../fixture.ts';

const CLEARED = 'mfa=; Path=/; Max-Age=0; HttpOnly; Secure; SameSite=Lax';

/** A login over the wire: the Cookie header carrying its `mfa` cookie, and the code mailed. */
async function login(m: MfaFixture, over = {}) {
  const ada = user();
  const { cookie } = await m.openOverWire(ada, over);
  return { ada, cookie, code: m.lastCode(ada.email!) };
}

describe('VerifyOtpChallenge (behaviour.md §4.3 verify_otp)', () => {
  it('reads the MFA session from the mfa cookie among the caller\'s cookies, answers the verdict and clears the cookie', async () => {
    const m = makeMfa();
    const { ada, cookie, code } = await login(m, { roles: ['admin'], scope: ['openid', 'offline_access'], state: 'st-9', auth_time: 1_700_000_000 });
    const ctx = withCookie(`cookie_session=other; ${cookie}; theme=dark`);
    await expect(m.internal.VerifyOtpChallenge({ otp: ` ${code.toLowerCase()}`, email: ada.email!.toUpperCase() }, ctx)).resolves.toEqual({
      user_id: ada.id, verified_channel: 'email', verified_contact: ada.email, login_method: 'basic_auth',
      roles: ['admin'], scope: ['openid', 'offline_access'], state: 'st-9', auth_time: 1_700_000_000, amr: ['otp'], enrolled_method: '',
    });
    // cleared: the same name, Path and attributes, an empty value and Max-Age=0 (behaviour.md §2.4)
    expect(ctx.setCookies).toEqual([CLEARED]);
    await expect(m.internal.VerifyOtpChallenge({ otp: code }, withCookie(cookie))).rejects.toMatchObject({ code: 'unauthenticated', message: 'invalid session' });
  });

  it('the verdict\'s state is the one stored at open, never the completing request\'s (behaviour.md §4.1)', async () => {
    const m = makeMfa();
    const { cookie, code } = await login(m, { state: 'st-1' });
    await expect(m.internal.VerifyOtpChallenge({ otp: code, state: 'from-the-request' }, withCookie(cookie))).resolves.toMatchObject({ state: 'st-1' });
  });

  it('clears the cookie with the flags\' attributes', async () => {
    const m = makeMfa({ appCookieSecure: false, appCookieSameSite: 'strict' });
    const { cookie, code } = await login(m);
    const ctx = withCookie(cookie);
    await m.internal.VerifyOtpChallenge({ otp: code }, ctx);
    expect(ctx.setCookies).toEqual(['mfa=; Path=/; Max-Age=0; HttpOnly; SameSite=Strict']);
  });

  it('a refusal leaves the mfa cookie alone: no Set-Cookie', async () => {
    const m = makeMfa();
    const { cookie, code } = await login(m);
    const wrong = withCookie(cookie);
    await expect(m.internal.VerifyOtpChallenge({ otp: code === 'AAAAAA' ? 'BBBBBB' : 'AAAAAA' }, wrong)).rejects.toMatchObject({ code: 'invalid_argument', message: 'invalid otp' });
    expect(wrong.setCookies).toEqual([]);
    const totp = withCookie(cookie);
    await expect(m.internal.VerifyOtpChallenge({ otp: code, is_totp: true }, totp)).rejects.toMatchObject({ code: 'failed_precondition' });
    expect(totp.setCookies).toEqual([]);
  });

  it('without the mfa cookie: 401 invalid session', async () => {
    const m = makeMfa();
    const { code } = await login(m);
    await expect(m.internal.VerifyOtpChallenge({ otp: code }, withCookie())).rejects.toMatchObject({ code: 'unauthenticated', message: 'invalid session' });
    await expect(m.internal.VerifyOtpChallenge({ otp: code }, withCookie('cookie_session=abc; mfa='))).rejects.toMatchObject({ code: 'unauthenticated', message: 'invalid session' });
  });
});
