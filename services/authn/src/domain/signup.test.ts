import { describe, it, expect } from '@jest/globals';
import { decodeJwt } from 'jose';
import { PASSWORD, T0, URL_, makeAuthn } from '../fixture.ts';

const body = (over: Record<string, unknown> = {}) => ({ email: 'Ada@Example.com ', password: PASSWORD, confirm_password: PASSWORD, ...over });

describe('signup (behaviour.md §3.2)', () => {
  it('creates the user, issues tokens and session cookies, emits user.created and user.signup', async () => {
    const a = makeAuthn();
    const { res, cookies } = await a.call('Signup', body({ given_name: 'Ada', app_data: { plan: 'pro' } }));
    expect(res.message).toBe('Signed up successfully.');
    expect(res.user).toMatchObject({
      email: 'ada@example.com', email_verified: true, signup_methods: 'basic_auth', given_name: 'Ada', family_name: null,
      preferred_username: 'ada@example.com', phone_number: null, phone_number_verified: false, roles: ['user'],
      created_at: T0, updated_at: T0, revoked_timestamp: null, is_multi_factor_auth_enabled: null,
      has_skipped_mfa_setup_at: null, mfa_locked_at: null, enrolled_mfa_methods: [], app_data: { plan: 'pro' },
    });
    expect(res.user.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(res.user).not.toHaveProperty('password');
    expect(res.user).not.toHaveProperty('passwordHash');
    expect(res.access_token).toEqual(expect.any(String));
    expect(res.id_token).toEqual(expect.any(String));
    expect(res.refresh_token).toBeNull();
    expect(res.expires_in).toBe(1800);
    expect(res.should_show_email_otp_screen).toBe(false);
    expect(res.should_offer_mfa_setup).toBe(false);
    expect(res.authenticator_recovery_codes).toBeNull();
    expect(decodeJwt(res.access_token)).toMatchObject({ iss: URL_, sub: res.user.id, token_type: 'access_token' });
    // the cookies' attributes: rpc/cookies.test.ts
    expect(cookies.map((c: string) => c.split('=')[0])).toEqual(['cookie_session', 'cookie_session_domain']);
    expect(a.storage.published.filter((e) => e.name !== 'audit.recorded').map((e) => e.name)).toEqual(['user.created', 'user.signup']);
    expect(a.storage.published[0]!.data).toMatchObject({ user: { id: res.user.id, email: 'ada@example.com' } });
    const stored = await a.storage.users.findByEmail('ada@example.com');
    expect(stored!.passwordHash).toMatch(/^\$argon2id\$/);
  });

  it('signs up phone-only users with mobile_basic_auth', async () => {
    const a = makeAuthn();
    const { res } = await a.call('Signup', { phone_number: ' +491511234567 ', password: PASSWORD, confirm_password: PASSWORD });
    expect(res.user).toMatchObject({ email: null, phone_number: '+491511234567', phone_number_verified: true, signup_methods: 'mobile_basic_auth', email_verified: false, preferred_username: null });
  });

  it('checks in the documented order with the exact messages', async () => {
    const cases: Array<[Record<string, string | boolean | string[]>, Record<string, unknown>, string, string]> = [
      [{}, { email: '' }, 'invalid_argument', 'email or phone number is required'],
      [{ enableSignup: false }, {}, 'failed_precondition', 'signup is disabled for this instance'],
      [{ enableBasicAuthentication: false }, {}, 'failed_precondition', 'basic authentication is disabled for this instance'],
      [{ enableMobileBasicAuthentication: false }, { email: undefined, phone_number: '+12025550123' }, 'failed_precondition', 'mobile basic authentication is disabled for this instance'],
      [{}, { password: undefined }, 'invalid_argument', 'password is required'],
      [{}, { confirm_password: undefined }, 'invalid_argument', 'confirm_password is required'],
      [{}, { confirm_password: '' }, 'invalid_argument', 'confirm_password is required'],
      [{}, { confirm_password: 'Other1!pass' }, 'invalid_argument', 'password and confirm password does not match'],
      [{}, { password: 'Sh0rt!', confirm_password: 'Sh0rt!' }, 'invalid_argument', 'password must be between 8 and 128 characters'],
      [{}, { password: 'alllowercase1!', confirm_password: 'alllowercase1!' }, 'invalid_argument', 'password is not valid. It needs to be at least 8 characters long and contain at least one number, one uppercase letter, one lowercase letter and one special character'],
      [{}, { email: 'not-an-email' }, 'invalid_argument', 'invalid email address'],
      [{}, { email: undefined, phone_number: '12345' }, 'invalid_argument', 'invalid phone number'],
      [{}, { roles: ['admin'] }, 'invalid_argument', 'invalid roles'],
      [{}, { roles: ['unknown'] }, 'invalid_argument', 'invalid roles'],
      [{}, { redirect_uri: 'https://evil.example/cb' }, 'invalid_argument', 'invalid redirect URI'],
      [{}, { redirect_uri: 'javascript:alert(1)' }, 'invalid_argument', 'invalid redirect URI'],
      [{}, { app_data: [1, 2] as unknown as string }, 'invalid_argument', 'malformed app_data'],
      [{}, { app_data: { big: 'x'.repeat(17000) } as unknown as string }, 'invalid_argument', 'app_data too large'],
      [{ enableSignup: false }, { email: 'bad', confirm_password: 'x' }, 'failed_precondition', 'signup is disabled for this instance'],
    ];
    for (const [opts, over, code, message] of cases) {
      const a = makeAuthn(opts as never);
      await expect(a.call('Signup', body(over))).rejects.toMatchObject({ code, message });
      expect(a.storage.published).toEqual([]);
    }
  });

  it('accepts weak passwords when --enable-strong-password is off, but not short ones', async () => {
    const a = makeAuthn({ enableStrongPassword: false });
    await expect(a.call('Signup', body({ password: 'alllowercase', confirm_password: 'alllowercase' }))).resolves.toBeDefined();
    await expect(a.call('Signup', body({ email: 'b@example.com', password: 'short', confirm_password: 'short' }))).rejects.toMatchObject({ message: 'password must be between 8 and 128 characters' });
  });

  it('refuses wrong JSON types with invalid_argument naming the field, never a crash', async () => {
    const a = makeAuthn();
    const cases: Array<[unknown, string]> = [
      [body({ email: 123 }), 'invalid value for field "email": expected string'],
      [body({ roles: 'x' }), 'invalid value for field "roles": expected list of string'],
      [body({ scope: [1] }), 'invalid value for field "scope[0]": expected list of string'],
      [body({ given_name: 'x'.repeat(257) }), 'given_name must be at most 256 characters'],
      [body({ given_name: { a: 1 } }), 'invalid value for field "given_name": expected string'],
      [body({ is_multi_factor_auth_enabled: 'yes' }), 'invalid value for field "is_multi_factor_auth_enabled": expected boolean'],
      [[1, 2], 'invalid JSON body'],
      ['string', 'invalid JSON body'],
    ];
    for (const [req, message] of cases) await expect(a.call('Signup', req)).rejects.toMatchObject({ code: 'invalid_argument', message });
  });

  it('refuses a duplicate email (400) and a duplicate phone (400), case-insensitively', async () => {
    const a = makeAuthn();
    await a.call('Signup', body({ phone_number: '+12025550123' }));
    await expect(a.call('Signup', body({ email: 'ADA@example.COM' }))).rejects.toMatchObject({ code: 'invalid_argument', message: 'user with given email already exists' });
    await expect(a.call('Signup', body({ email: 'other@example.com', phone_number: '+12025550123' }))).rejects.toMatchObject({ code: 'invalid_argument', message: 'user with given phone number already exists' });
    expect(a.storage.published.filter((e) => e.name !== 'audit.recorded').map((e) => e.name)).toEqual(['user.created', 'user.signup']);
  });

  it('answers a duplicate email exactly like a fresh signup when email verification is on', async () => {
    const f = makeAuthn({ enableEmailVerification: true });
    const fresh = await f.call('Signup', body({ email: 'new@example.com' }));
    expect(fresh.res).toMatchObject({ message: 'Verification email has been sent. Please check your inbox', access_token: null, user: null });
    expect(fresh.cookies).toEqual([]);
    expect(f.storage.published.filter((e) => e.name !== 'audit.recorded').map((e) => e.name)).toEqual(['user.created', 'user.signup', 'email.send']);
    const c = makeAuthn();
    await c.call('Signup', body());
    c.options.enableEmailVerification = true;
    const dup = await c.call('Signup', body());
    expect(dup).toEqual(fresh);
    // the first signup's events and its audit row; the duplicate adds nothing (no audit either)
    expect(c.storage.published.map((e) => e.name)).toEqual(['user.created', 'user.signup', 'audit.recorded']);
    expect(c.storage.verificationRequests()).toEqual([]);
  });

  it('grants the requested self-service roles and takes the default scope', async () => {
    const a = makeAuthn();
    const { res } = await a.call('Signup', body({ roles: ['user', 'editor'], scope: ['openid', 'offline_access'] }));
    expect(res.user.roles).toEqual(['user', 'editor']);
    expect(decodeJwt(res.access_token)).toMatchObject({ roles: ['user', 'editor'], allowed_roles: ['user', 'editor'], scope: ['openid', 'offline_access'] });
    expect(res.refresh_token).toEqual(expect.any(String));
    const other = await a.call('Signup', body({ email: 'b@example.com' }));
    expect(decodeJwt(other.res.access_token).scope).toEqual(['openid', 'email', 'profile']);
  });
});
