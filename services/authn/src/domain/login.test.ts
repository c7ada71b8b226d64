import { describe, it, expect } from '@jest/globals';
import argon2 from 'argon2';
import { decodeJwt } from 'jose';
import { PASSWORD, makeAuthn } from '../fixture.ts';

const creds = (over: Record<string, unknown> = {}) => ({ email: 'ada@example.com', password: PASSWORD, ...over });

describe('login (behaviour.md §3.3)', () => {
  it('logs in by email, case-insensitively, with cookies and a user.login event', async () => {
    const a = makeAuthn();
    await a.signup();
    const { res, cookies } = await a.call('Login', creds({ email: '  ADA@example.com' }));
    expect(res.message).toBe('Logged in successfully');
    expect(res.user.email).toBe('ada@example.com');
    expect(decodeJwt(res.access_token)).toMatchObject({ login_method: 'basic_auth', roles: ['user'] });
    expect(cookies.map((c: string) => c.split('=')[0])).toEqual(['cookie_session', 'cookie_session_domain']);
    expect(a.storage.published.filter((e) => e.name !== 'audit.recorded').map((e) => e.name)).toEqual(['user.created', 'user.signup', 'user.login']);
    expect(a.storage.published.filter((e) => e.name !== 'audit.recorded')[2]!.data).toMatchObject({ login_method: 'basic_auth', user: { email: 'ada@example.com' } });
  });

  it('logs in by phone with mobile_basic_auth', async () => {
    const a = makeAuthn();
    await a.call('Signup', { phone_number: '+12025550123', password: PASSWORD, confirm_password: PASSWORD });
    const { res } = await a.call('Login', { phone_number: ' +12025550123 ', password: PASSWORD });
    expect(decodeJwt(res.access_token).login_method).toBe('mobile_basic_auth');
  });

  it('answers one text for unknown accounts, wrong passwords and revoked users', async () => {
    const a = makeAuthn();
    await a.signup();
    const expected = { code: 'unauthenticated', message: 'invalid credentials' };
    await expect(a.call('Login', creds({ email: 'nobody@example.com' }))).rejects.toMatchObject(expected);
    await expect(a.call('Login', creds({ password: 'Wrong!pass1' }))).rejects.toMatchObject(expected);
    await expect(a.call('Login', creds({ password: undefined }))).rejects.toMatchObject(expected);
    const u = (await a.storage.users.findByEmail('ada@example.com'))!;
    await a.storage.users.transaction((tx) => tx.users.update({ ...u, revokedTimestamp: a.now() }));
    await expect(a.call('Login', creds())).rejects.toMatchObject(expected);
  });

  it('refuses missing identifiers and disabled methods', async () => {
    const a = makeAuthn({ enableBasicAuthentication: false, enableMobileBasicAuthentication: false });
    await expect(a.call('Login', { password: 'x' })).rejects.toMatchObject({ code: 'invalid_argument', message: 'email or phone number is required' });
    await expect(a.call('Login', creds())).rejects.toMatchObject({ code: 'failed_precondition', message: 'basic authentication is disabled for this instance' });
    await expect(a.call('Login', { phone_number: '+12025550123', password: 'x' })).rejects.toMatchObject({ code: 'failed_precondition', message: 'mobile basic authentication is disabled for this instance' });
    await expect(a.call('Login', { email: 42, password: 'x' })).rejects.toMatchObject({ code: 'invalid_argument', message: 'invalid value for field "email": expected string' });
  });

  it('locks out after 5 failures in 15 min, even with the right password, with Retry-After', async () => {
    const a = makeAuthn();
    await a.signup();
    for (let i = 0; i < 5; i++) {
      await expect(a.call('Login', creds({ password: 'Wrong!pass1' }))).rejects.toMatchObject({ code: 'unauthenticated' });
      a.advance(60);
    }
    const err = await a.call('Login', creds()).catch((e: { code: string; message: string; headers: Record<string, string> }) => e);
    expect(err).toMatchObject({ code: 'resource_exhausted', message: 'too many failed attempts, please try again later' });
    // first failure at T0, now T0+300: the window admits a try at T0+900
    expect((err as { headers: Record<string, string> }).headers['Retry-After']).toBe('600');
    a.advance(600);
    await expect(a.call('Login', creds())).resolves.toBeDefined();
  });

  it('locks unknown identifiers the same way, and success clears the counter', async () => {
    const a = makeAuthn();
    for (let i = 0; i < 5; i++) await expect(a.call('Login', creds({ email: 'ghost@example.com' }))).rejects.toMatchObject({ code: 'unauthenticated' });
    await expect(a.call('Login', creds({ email: 'ghost@example.com' }))).rejects.toMatchObject({ code: 'resource_exhausted' });
    await a.signup();
    for (let i = 0; i < 4; i++) await expect(a.call('Login', creds({ password: 'bad' }))).rejects.toMatchObject({ code: 'unauthenticated' });
    await a.call('Login', creds());
    for (let i = 0; i < 4; i++) await expect(a.call('Login', creds({ password: 'bad' }))).rejects.toMatchObject({ code: 'unauthenticated' });
    await expect(a.call('Login', creds())).resolves.toBeDefined();
  });

  it('checks roles against the user, then the MFA lock, then verification', async () => {
    const a = makeAuthn();
    await a.signup();
    await expect(a.call('Login', creds({ roles: ['editor'] }))).rejects.toMatchObject({ code: 'invalid_argument', message: 'invalid roles' });
    const u = (await a.storage.users.findByEmail('ada@example.com'))!;
    await a.storage.users.transaction((tx) => tx.users.update({ ...u, mfaLockedAt: 1 }));
    await expect(a.call('Login', creds())).rejects.toMatchObject({ code: 'failed_precondition', message: "your account's multi-factor authentication is locked; contact your administrator to regain access" });
    await a.storage.users.transaction((tx) => tx.users.update({ ...u, emailVerifiedAt: null }));
    await expect(a.call('Login', creds())).rejects.toMatchObject({ code: 'failed_precondition', message: 'email address is not verified' });
    await expect(a.call('Login', creds({ password: 'Wrong!pass1' }))).rejects.toMatchObject({ code: 'unauthenticated', message: 'invalid credentials' });
  });

  it('refuses an unverified phone without an SMS channel', async () => {
    const a = makeAuthn();
    await a.call('Signup', { phone_number: '+12025550123', password: PASSWORD, confirm_password: PASSWORD });
    const u = (await a.storage.users.findByPhone('+12025550123'))!;
    await a.storage.users.transaction((tx) => tx.users.update({ ...u, phoneNumberVerifiedAt: null }));
    await expect(a.call('Login', { phone_number: '+12025550123', password: PASSWORD })).rejects.toMatchObject({ code: 'failed_precondition', message: 'phone number is not verified' });
  });

  it('verifies a legacy bcrypt hash and re-hashes it to argon2id in the same request', async () => {
    const a = makeAuthn();
    await a.signup();
    const u = (await a.storage.users.findByEmail('ada@example.com'))!;
    // produced by glibc crypt(3): crypt('Correct horse 1!', '$2b$10$N9qo8uLOickgx2ZMRZoMye')
    const legacy = '$2b$10$N9qo8uLOickgx2ZMRZoMyemOmALaz80G8oca7cxlB2LiVQmRdvneC';
    await a.storage.users.transaction((tx) => tx.users.update({ ...u, passwordHash: legacy }));
    await expect(a.call('Login', creds({ password: 'Wrong!pass1' }))).rejects.toMatchObject({ message: 'invalid credentials' });
    expect((await a.storage.users.findById(u.id))!.passwordHash).toBe(legacy);
    await a.call('Login', creds({ password: 'Correct horse 1!' }));
    expect((await a.storage.users.findById(u.id))!.passwordHash).toMatch(/^\$argon2id\$/);
    await expect(a.call('Login', creds({ password: 'Correct horse 1!' }))).resolves.toBeDefined();
  });

  it('upgrades an outdated argon2 hash after a successful login', async () => {
    const a = makeAuthn();
    await a.signup();
    const u = (await a.storage.users.findByEmail('ada@example.com'))!;
    const weak = await argon2.hash(PASSWORD, { type: argon2.argon2i, memoryCost: 4096, timeCost: 1, parallelism: 1 });
    await a.storage.users.transaction((tx) => tx.users.update({ ...u, passwordHash: weak }));
    await a.call('Login', creds());
    expect((await a.storage.users.findById(u.id))!.passwordHash).toMatch(/^\$argon2id\$v=19\$m=19456/);
  });
});
