import { describe, it, expect, jest } from '@jest/globals';
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

  it('with email verification on, answers a taken and a fresh address before looking either up (issue 30 §6)', async () => {
    // the work after the answer is held until the test runs it, as the server runs it once the answer left
    const held: Array<() => Promise<void>> = [];
    const a = makeAuthn({ enableEmailVerification: true }, { afterAnswer: (work) => { held.push(work); return Promise.resolve(); } });
    await a.call('Signup', body({ email: 'known@example.com' }));
    await held.shift()!();
    expect(await a.storage.users.findByEmail('known@example.com')).toMatchObject({ emailVerifiedAt: null });
    const before = a.storage.published.length;
    const reads = [
      jest.spyOn(a.storage.users, 'findByEmail'), jest.spyOn(a.storage.users, 'findByPhone'), jest.spyOn(a.storage.users, 'transaction'),
    ];
    const taken = await a.call('Signup', body({ email: 'known@example.com' }));
    const fresh = await a.call('Signup', body({ email: 'fresh@example.com' }));
    // the same answer, and neither address was read nor anything written before it: nothing there to time
    expect(fresh).toEqual(taken);
    expect(taken.res).toMatchObject({ message: 'Verification email has been sent. Please check your inbox', access_token: null, user: null });
    expect(reads.map((r) => r.mock.calls.length)).toEqual([0, 0, 0]);
    expect(a.storage.published).toHaveLength(before);
    expect(held).toHaveLength(2);
    for (const work of held) await work();
    // after the answer: the fresh address has its account, events, link and audit row; the taken one nothing
    expect(a.storage.published.slice(before).map((e) => e.name)).toEqual(['user.created', 'user.signup', 'email.send', 'audit.recorded']);
    const created = await a.storage.users.findByEmail('fresh@example.com');
    expect(a.storage.published.at(-1)!.data).toMatchObject({ action: 'user.signup', actor_id: created!.id, actor_email: 'fresh@example.com', resource_id: created!.id });
    expect(a.storage.verificationRequests().map((r) => r.email)).toEqual(['known@example.com', 'fresh@example.com']);
  });

  it('with email verification on, a taken phone number is refused only beside a free email (§3.2 check order)', async () => {
    const a = makeAuthn({ enableEmailVerification: true });
    await a.call('Signup', body({ email: 'first@example.com', phone_number: '+12025550123' }));
    await expect(a.call('Signup', body({ email: 'second@example.com', phone_number: '+12025550123' })))
      .rejects.toMatchObject({ code: 'invalid_argument', message: 'user with given phone number already exists' });
    const dup = await a.call('Signup', body({ email: 'first@example.com', phone_number: '+12025550123' }));
    expect(dup.res.message).toBe('Verification email has been sent. Please check your inbox');
    expect(a.storage.published.filter((e) => e.name === 'user.created')).toHaveLength(1);
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
