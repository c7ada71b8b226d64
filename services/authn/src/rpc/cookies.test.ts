import { describe, it, expect } from '@jest/globals';
import { PASSWORD, makeAuthn } from '../fixture.ts';
import { makeEmailAuthn } from '../domain/email-fixture.ts';

const signupBody = { email: 'ada@example.com', password: PASSWORD, confirm_password: PASSWORD };
const CLEARED = [
  'cookie_session=; Path=/; Max-Age=0; HttpOnly; Secure; SameSite=None',
  'cookie_session_domain=; Path=/; Domain=example.com; Max-Age=0; HttpOnly; Secure; SameSite=None',
  'mfa=; Path=/; Max-Age=0; HttpOnly; Secure; SameSite=None',
];

describe('session cookies on the wire (behaviour.md §2.4)', () => {
  it('sets both session cookies with the flags\' attributes and Max-Age = seconds to expiry', async () => {
    const { cookies } = await makeAuthn().call('Signup', signupBody);
    expect(cookies).toHaveLength(2);
    expect(cookies[0]).toMatch(/^cookie_session=[A-Za-z0-9_-]{43}; Path=\/; Max-Age=86400; HttpOnly; Secure; SameSite=None$/);
    expect(cookies[1]).toMatch(/^cookie_session_domain=[A-Za-z0-9_-]{43}; Path=\/; Domain=example.com; Max-Age=86400; HttpOnly; Secure; SameSite=None$/);
    expect(cookies[0]!.split(';')[0]!.split('=')[1]).toBe(cookies[1]!.split(';')[0]!.split('=')[1]);
  });

  it('sends SameSite=None as Lax without Secure, and a host-only domain cookie for a single-label --url host', async () => {
    const a = makeAuthn({ url: 'http://localhost:8080', appCookieSecure: false, appCookieSameSite: 'none', sessionExpiresIn: 600 });
    const { cookies } = await a.call('Signup', signupBody);
    expect(cookies[0]).toMatch(/^cookie_session=[A-Za-z0-9_-]{43}; Path=\/; Max-Age=600; HttpOnly; SameSite=Lax$/);
    expect(cookies[1]).toMatch(/^cookie_session_domain=[A-Za-z0-9_-]{43}; Path=\/; Max-Age=600; HttpOnly; SameSite=Lax$/);
  });

  it('clears the session pair and mfa when every session ends: an email change, deactivation', async () => {
    const a = makeAuthn();
    const s = await a.signup();
    expect((await a.call('UpdateProfile', { nickname: 'ada' }, s.bearer)).cookies).toEqual([]);
    expect((await a.call('UpdateProfile', { email: 'ada.new@example.com' }, s.bearer)).cookies).toEqual(CLEARED);
    const t = await a.signup('grace@example.com');
    expect((await a.call('DeactivateAccount', {}, t.cookie)).cookies).toEqual(CLEARED);
  });

  it('the link target sets the session cookies only when it redeemed the token', async () => {
    const a = makeEmailAuthn();
    await a.call('Signup', signupBody);
    const token = a.lastToken();
    expect((await a.call('VerifyEmailLink', { token: 'unknown' })).cookies).toEqual([]);
    expect((await a.call('VerifyEmailLink', { token })).cookies.map((c: string) => c.split('=')[0])).toEqual(['cookie_session', 'cookie_session_domain']);
  });
});

describe('logout (behaviour.md §2.2)', () => {
  it('deletes only the current session and clears the session pair and mfa', async () => {
    const a = makeAuthn();
    const s1 = await a.signup();
    const s2 = await a.call('Login', { email: 'ada@example.com', password: PASSWORD });
    const { res, cookies } = await a.call('Logout', {}, s1.cookie);
    expect(res).toEqual({ message: 'Logged out successfully' });
    expect(cookies).toEqual(CLEARED);
    await expect(a.call('Profile', {}, s1.bearer)).rejects.toMatchObject({ code: 'unauthenticated' });
    await expect(a.call('Profile', {}, { authorization: `Bearer ${s2.res.access_token}` })).resolves.toBeDefined();
    await expect(a.call('Logout', {}, s1.cookie)).rejects.toMatchObject({ code: 'unauthenticated' });
  });
});
