/**
 * @module open-otp-challenge.test: MfaInternal.OpenOtpChallenge through the in-process client: the
 * `mfa` cookie it sets (behaviour.md §2.4, §4.2) and the wire fields it maps (§3.3 step 8).
 */
import { describe, expect, it } from '@jest/globals';
import { sha256Hex } from '@gatehouse/crypto';
import { createCallContext } from '@gatehouse/rpc';
import { makeMfa, openRequest, T0, user } from '../fixture.ts';
import type { MfaOptions } from '../domain/options.ts';

const MFA_COOKIE = /^mfa=([A-Za-z0-9_-]{43}); Path=\/; Max-Age=300; HttpOnly; Secure; SameSite=Lax$/;

describe('OpenOtpChallenge: the mfa cookie (behaviour.md §2.4)', () => {
  it('sets one host-only, HttpOnly mfa cookie for the 300 s of the MFA session, with an opaque 256-bit handle', async () => {
    const m = makeMfa();
    const { res, setCookies, setCookie } = await m.openOverWire();
    expect(res).toEqual({ expires_at: T0 + 300, code_sent: true });
    expect(setCookies).toHaveLength(1);
    // host-only: no Domain, although --url names a registrable domain (session cookies get one)
    expect(setCookie).toMatch(MFA_COOKIE);
    const handle = MFA_COOKIE.exec(setCookie)![1]!;
    expect(await m.store.findSessionByHandleHash(sha256Hex(handle))).toMatchObject({ userId: 'u-ada', expiresAt: T0 + 300 });
  });

  it.each<[string, Partial<MfaOptions>, string]>([
    ['Secure = --app-cookie-secure (false)', { appCookieSecure: false }, 'HttpOnly; SameSite=Lax'],
    ['SameSite = --app-cookie-same-site (strict)', { appCookieSameSite: 'strict' }, 'HttpOnly; Secure; SameSite=Strict'],
    ['SameSite none with Secure', { appCookieSameSite: 'none' }, 'HttpOnly; Secure; SameSite=None'],
    ['SameSite none sent as Lax without Secure', { appCookieSameSite: 'none', appCookieSecure: false }, 'HttpOnly; SameSite=Lax'],
  ])('follows the flags: %s', async (_what, flags, attributes) => {
    const m = makeMfa(flags);
    const { setCookie } = await m.openOverWire();
    expect(setCookie).toMatch(new RegExp(`^mfa=[A-Za-z0-9_-]{43}; Path=/; Max-Age=300; ${attributes}$`));
  });

  it('a login within 30 s of the last code answers code_sent false, with a cookie of its own session', async () => {
    const m = makeMfa();
    const first = await m.openOverWire();
    m.advance(20);
    const second = await m.openOverWire();
    expect(second.res).toEqual({ expires_at: T0 + 320, code_sent: false });
    expect(second.setCookie).toMatch(MFA_COOKIE);
    expect(second.cookie).not.toBe(first.cookie);
  });

  it('gives the mfa cookie the whole 300 s when the clock turns a second during the write', async () => {
    // every clock reading is one second later than the one before (a slow write that crosses a second)
    let t = T0;
    const m = makeMfa({}, { clock: () => t++ });
    const { setCookie } = await m.openOverWire();
    expect(setCookie).toMatch(MFA_COOKIE);
  });

  it('a refusal sets no cookie', async () => {
    const m = makeMfa({ smtpHost: undefined });
    const ctx = createCallContext();
    await expect(m.internal.OpenOtpChallenge(openRequest(user()), ctx)).rejects.toMatchObject({ code: 'failed_precondition', message: 'email service not enabled' });
    expect(ctx.setCookies).toEqual([]);
  });
});

describe('OpenOtpChallenge: wire ↔ domain', () => {
  it('stores the request\'s grant and user, an absent state as null, and mails the code to the user\'s email', async () => {
    const m = makeMfa();
    const ada = user();
    const { setCookie } = await m.openOverWire(ada, { login_method: 'magic_link_login', roles: ['editor'], scope: ['openid'], state: undefined, auth_time: T0 - 5 });
    const session = await m.store.findSessionByHandleHash(sha256Hex(MFA_COOKIE.exec(setCookie)![1]!));
    expect(session).toMatchObject({ loginMethod: 'magic_link_login', roles: ['editor'], scope: ['openid'], state: null, authTime: T0 - 5, contact: ada.email });
    expect(session!.user).toMatchObject({ ...ada });
    expect(m.mails()).toEqual([{ event_name: 'verify_otp', to: ada.email, user: session!.user, variables: { otp: expect.any(String) }, sealed_variables: expect.any(String) }]);
  });

  it('refuses a request without a user with invalid_argument', async () => {
    const m = makeMfa();
    const ctx = createCallContext();
    await expect(m.internal.OpenOtpChallenge({ ...openRequest(user()), user: null }, ctx))
      .rejects.toMatchObject({ code: 'invalid_argument', message: 'the user needs an id and an email address' });
    expect(ctx.setCookies).toEqual([]);
  });
});
