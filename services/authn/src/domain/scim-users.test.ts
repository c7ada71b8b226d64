/**
 * AuthnInternal's SCIM provisioning RPCs (behaviour.md §6.4, §2.2) through the codec, on the memory
 * stores: create or return by email, attribute updates with uniqueness, and deactivation that deletes
 * every session before it answers (the user's token is refused at once).
 */
import { describe, expect, it } from '@jest/globals';
import { makeAuthn } from '../fixture.ts';

describe('SCIM provisioning in authn (AuthnInternal)', () => {
  it('ProvisionUser creates a verified, password-less `scim` user once; a repeat returns it unchanged', async () => {
    const a = makeAuthn();
    const first = (await a.call('ProvisionUser', { email: ' Ada@Example.com ', given_name: 'Ada', family_name: 'Lovelace', active: true })).res;
    expect(first).toMatchObject({ created: true, user: { email: 'ada@example.com', email_verified: true, signup_methods: 'scim', given_name: 'Ada', revoked_timestamp: null } });
    const again = (await a.call('ProvisionUser', { email: 'ada@example.com', given_name: 'Other', active: true })).res;
    expect(again).toMatchObject({ created: false, user: { id: first.user.id, given_name: 'Ada' } });
    const inactive = (await a.call('ProvisionUser', { email: 'off@example.com', active: false })).res;
    expect(inactive.user.revoked_timestamp).toBe(a.now());
    await expect(a.call('ProvisionUser', { email: 'not-an-email', active: true })).rejects.toMatchObject({ code: 'invalid_argument', message: 'invalid email address' });
    expect((await a.call('FindUsers', { ids: [first.user.id, 'missing'], email: 'OFF@example.com' })).res.users.map((u: any) => u.email)).toEqual(['ada@example.com', 'off@example.com']);
  });

  it('UpdateProvisionedUser changes names and email, refuses a taken email, and an email change ends sessions', async () => {
    const a = makeAuthn();
    const signed = await a.signup('grace@example.com');
    const other = await a.signup('taken@example.com');
    expect((await a.call('Profile', {}, signed.bearer)).res.email).toBe('grace@example.com');
    const named = (await a.call('UpdateProvisionedUser', { user_id: signed.res.user.id, given_name: 'Grace', family_name: '' })).res;
    expect(named).toMatchObject({ given_name: 'Grace', family_name: null });
    expect((await a.call('Profile', {}, signed.bearer)).res.email).toBe('grace@example.com');
    await expect(a.call('UpdateProvisionedUser', { user_id: signed.res.user.id, email: 'taken@example.com' })).rejects.toMatchObject({ code: 'already_exists', message: 'user with given email already exists' });
    expect(other.res.user.id).not.toBe(signed.res.user.id);
    const moved = (await a.call('UpdateProvisionedUser', { user_id: signed.res.user.id, email: 'hopper@example.com' })).res;
    expect(moved.email).toBe('hopper@example.com');
    await expect(a.call('Profile', {}, signed.bearer)).rejects.toMatchObject({ code: 'unauthenticated' });
  });

  it('SetUserActive false revokes and deletes sessions before answering; true re-enables; repeats are not changes', async () => {
    const a = makeAuthn();
    const s = await a.signup('linus@example.com');
    const off = (await a.call('SetUserActive', { user_id: s.res.user.id, active: false })).res;
    expect(off).toMatchObject({ changed: true, user: { revoked_timestamp: a.now() } });
    await expect(a.call('Profile', {}, s.bearer)).rejects.toMatchObject({ code: 'unauthenticated', message: 'unauthorized' });
    expect((await a.call('SetUserActive', { user_id: s.res.user.id, active: false })).res.changed).toBe(false);
    const on = (await a.call('SetUserActive', { user_id: s.res.user.id, active: true })).res;
    expect(on).toMatchObject({ changed: true, user: { revoked_timestamp: null } });
    await expect(a.call('SetUserActive', { user_id: '00000000-0000-4000-8000-000000000000', active: false })).rejects.toMatchObject({ code: 'not_found', message: 'user not found' });
  });
});
