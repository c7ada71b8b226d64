import { describe, it, expect } from '@jest/globals';
import { PASSWORD, T0, makeAuthn } from '../fixture.ts';

const NEW = 'N3w!password';

describe('profile', () => {
  it('returns the caller by bearer or cookie', async () => {
    const a = makeAuthn();
    const s = await a.signup();
    expect((await a.call('Profile', {}, s.bearer)).res).toEqual(s.res.user);
    expect((await a.call('Profile', {}, s.cookie)).res).toEqual(s.res.user);
    await expect(a.call('Profile', {})).rejects.toMatchObject({ code: 'unauthenticated', message: 'unauthorized' });
  });
});

describe('update_profile (behaviour.md §3.5)', () => {
  it('needs at least one field', async () => {
    const a = makeAuthn();
    const s = await a.signup();
    await expect(a.call('UpdateProfile', {}, s.bearer)).rejects.toMatchObject({ code: 'invalid_argument', message: 'please enter at least one param to update' });
    await expect(a.call('UpdateProfile', { given_name: null }, s.bearer)).rejects.toMatchObject({ message: 'please enter at least one param to update' });
  });

  it('updates names, clears with an empty string and replaces app_data', async () => {
    const a = makeAuthn();
    const s = await a.signup('ada@example.com', { given_name: 'Ada', family_name: 'L', app_data: { a: 1, b: 2 } });
    a.advance(5);
    const { res, cookies } = await a.call('UpdateProfile', { given_name: ' Augusta ', family_name: '', app_data: { c: 3 } }, s.bearer);
    expect(res).toEqual({ message: 'Profile details updated successfully.' });
    expect(cookies).toEqual([]);
    expect((await a.call('Profile', {}, s.bearer)).res).toMatchObject({ given_name: 'Augusta', family_name: null, app_data: { c: 3 }, updated_at: T0 + 5 });
    await expect(a.call('UpdateProfile', { nickname: 'x'.repeat(300) }, s.bearer)).rejects.toMatchObject({ code: 'invalid_argument', message: 'nickname must be at most 256 characters' });
    await expect(a.call('UpdateProfile', { app_data: 'x' }, s.bearer)).rejects.toMatchObject({ code: 'invalid_argument', message: 'malformed app_data' });
  });

  it('changes the password with the exact errors and keeps only the current session', async () => {
    const a = makeAuthn();
    const s = await a.signup();
    const other = await a.call('Login', { email: 'ada@example.com', password: PASSWORD });
    const bad: Array<[Record<string, unknown>, string]> = [
      [{ new_password: NEW }, 'confirm password is required'],
      [{ new_password: NEW, confirm_new_password: 'Other!pass1' }, 'password and confirm password does not match'],
      [{ new_password: NEW, confirm_new_password: NEW }, 'old password is required'],
      [{ old_password: 'Wrong!pass1', new_password: NEW, confirm_new_password: NEW }, 'incorrect old password'],
      [{ old_password: PASSWORD, new_password: 'weakpassword', confirm_new_password: 'weakpassword' }, 'password is not valid. It needs to be at least 8 characters long and contain at least one number, one uppercase letter, one lowercase letter and one special character'],
    ];
    for (const [req, message] of bad) await expect(a.call('UpdateProfile', req, s.bearer)).rejects.toMatchObject({ code: 'invalid_argument', message });
    await a.call('UpdateProfile', { old_password: PASSWORD, new_password: NEW, confirm_new_password: NEW }, s.bearer);
    await expect(a.call('Profile', {}, s.bearer)).resolves.toBeDefined();
    await expect(a.call('Profile', {}, { authorization: `Bearer ${other.res.access_token}` })).rejects.toMatchObject({ code: 'unauthenticated' });
    await expect(a.call('Login', { email: 'ada@example.com', password: PASSWORD })).rejects.toMatchObject({ message: 'invalid credentials' });
    await expect(a.call('Login', { email: 'ada@example.com', password: NEW })).resolves.toBeDefined();
  });

  it('refuses a password change when basic auth is off', async () => {
    const a = makeAuthn();
    const s = await a.signup();
    a.options.enableBasicAuthentication = false;
    await expect(a.call('UpdateProfile', { old_password: PASSWORD, new_password: NEW, confirm_new_password: NEW }, s.bearer)).rejects.toMatchObject({ code: 'failed_precondition', message: 'basic authentication is disabled for this instance' });
  });

  it('changes the email: 409 when taken, all sessions deleted and cookies cleared', async () => {
    const a = makeAuthn();
    await a.signup('taken@example.com');
    const s = await a.signup('ada@example.com');
    await expect(a.call('UpdateProfile', { email: 'TAKEN@example.com' }, s.bearer)).rejects.toMatchObject({ code: 'already_exists', message: 'user with given email already exists' });
    await expect(a.call('UpdateProfile', { email: 'nope' }, s.bearer)).rejects.toMatchObject({ code: 'invalid_argument', message: 'invalid email address' });
    const { cookies } = await a.call('UpdateProfile', { email: ' New@Example.com' }, s.bearer);
    expect(cookies.map((c: string) => c.split(';')[0])).toEqual(['cookie_session=', 'cookie_session_domain=', 'mfa=']);
    await expect(a.call('Profile', {}, s.bearer)).rejects.toMatchObject({ code: 'unauthenticated' });
    await expect(a.call('Login', { email: 'new@example.com', password: PASSWORD })).resolves.toBeDefined();
  });

  it('changes the phone: 409 when taken, unverified with phone verification on, sessions deleted', async () => {
    const a = makeAuthn();
    await a.call('Signup', { phone_number: '+12025550123', password: PASSWORD, confirm_password: PASSWORD });
    const s = await a.signup();
    await expect(a.call('UpdateProfile', { phone_number: '+12025550123' }, s.bearer)).rejects.toMatchObject({ code: 'already_exists', message: 'user with given phone number already exists' });
    await expect(a.call('UpdateProfile', { phone_number: 'abc' }, s.bearer)).rejects.toMatchObject({ code: 'invalid_argument', message: 'invalid phone number' });
    a.options.enablePhoneVerification = true;
    await a.call('UpdateProfile', { phone_number: '+12025550999' }, s.bearer);
    await expect(a.call('Profile', {}, s.bearer)).rejects.toMatchObject({ code: 'unauthenticated' });
    const u = await a.storage.users.findByEmail('ada@example.com');
    expect(u).toMatchObject({ phoneNumber: '+12025550999', phoneNumberVerifiedAt: null });
  });

  it('sets the MFA preference within the server rules (behaviour.md §4.7)', async () => {
    const a = makeAuthn();
    const s = await a.signup();
    await a.call('UpdateProfile', { is_multi_factor_auth_enabled: false }, s.bearer);
    expect((await a.call('Profile', {}, s.bearer)).res.is_multi_factor_auth_enabled).toBe(false);
    a.options.enforceMfa = true;
    await expect(a.call('UpdateProfile', { is_multi_factor_auth_enabled: false }, s.bearer)).rejects.toMatchObject({ code: 'failed_precondition', message: 'cannot disable multi factor authentication as it is enforced by organization' });
    a.options.disableMfa = true;
    await expect(a.call('UpdateProfile', { is_multi_factor_auth_enabled: true }, s.bearer)).rejects.toMatchObject({ code: 'failed_precondition', message: 'cannot enable MFA: no MFA method is available on this server' });
  });
});

describe('deactivate_account (behaviour.md §3.5)', () => {
  it('revokes the user, deletes every session, clears cookies and emits user.deactivated', async () => {
    const a = makeAuthn();
    const s = await a.signup('ada@example.com', { scope: ['openid', 'offline_access'] });
    const other = await a.call('Login', { email: 'ada@example.com', password: PASSWORD });
    a.advance(10);
    const { res, cookies } = await a.call('DeactivateAccount', {}, s.cookie);
    expect(res).toEqual({ message: 'user account deactivated successfully' });
    expect(cookies.map((c: string) => c.split(';')[0])).toEqual(['cookie_session=', 'cookie_session_domain=', 'mfa=']);
    expect(a.storage.published.filter((e) => e.name !== 'audit.recorded').at(-1)).toMatchObject({ name: 'user.deactivated', data: { user: { id: s.res.user.id, revoked_timestamp: T0 + 10 } } });
    await expect(a.call('Profile', {}, { authorization: `Bearer ${other.res.access_token}` })).rejects.toMatchObject({ code: 'unauthenticated' });
    await expect(a.call('ValidateJwtToken', { token_type: 'refresh_token', token: s.res.refresh_token })).rejects.toMatchObject({ message: 'invalid token' });
    await expect(a.call('Login', { email: 'ada@example.com', password: PASSWORD })).rejects.toMatchObject({ code: 'unauthenticated', message: 'invalid credentials' });
  });

  it('a revoked user cannot use tokens issued before the revocation', async () => {
    const a = makeAuthn();
    const s = await a.signup();
    const u = (await a.storage.users.findByEmail('ada@example.com'))!;
    // admin revoke_access (later issue) sets the timestamp; even before sessions are purged the tokens stop working
    await a.storage.users.transaction((tx) => tx.users.update({ ...u, revokedTimestamp: a.now() }));
    await expect(a.call('Profile', {}, s.bearer)).rejects.toMatchObject({ code: 'unauthenticated' });
    await expect(a.call('Session', {}, s.cookie)).rejects.toMatchObject({ code: 'unauthenticated' });
    await expect(a.call('ValidateJwtToken', { token_type: 'access_token', token: s.res.access_token })).rejects.toMatchObject({ message: 'invalid token' });
  });
});
