import { describe, it, expect } from '@jest/globals';
import { openMail } from './email-fixture.ts';
import { PASSWORD, T0, makeAuthn } from '../fixture.ts';
import type { MfaInternalClient } from '../rpc/deps.ts';

const ADMIN = { 'x-service-admin-secret': 'admin-secret' };
const SMTP = { smtpHost: '127.0.0.1', smtpPort: 2525, smtpSenderEmail: 'no-reply@example.com' };

async function withUsers(n: number, over: Parameters<typeof makeAuthn>[0] = {}, extra: Parameters<typeof makeAuthn>[1] = {}) {
  const a = makeAuthn(over, extra);
  const users = [];
  for (let i = 0; i < n; i++) {
    users.push((await a.signup(`user${i}@example.com`, { given_name: i === 1 ? 'Grace' : `Name${i}` })).res.user);
    a.advance(10);
  }
  return { a, users };
}

describe('users and user (behaviour.md §5.3, §10)', () => {
  it('pages newest first with the total; a page past the end is [] with the total', async () => {
    const { a, users } = await withUsers(3);
    const page1 = (await a.call('Users', { pagination: { limit: 2 } }, ADMIN)).res;
    expect(page1.users.map((u: { id: string }) => u.id)).toEqual([users[2].id, users[1].id]);
    expect(page1.pagination).toEqual({ page: 1, limit: 2, offset: 0, total: 3 });
    const past = (await a.call('Users', { pagination: { page: 5, limit: 2 } }, ADMIN)).res;
    expect(past).toEqual({ users: [], pagination: { page: 5, limit: 2, offset: 8, total: 3 } });
    expect((await a.call('Users', { query: 'GRAC' }, ADMIN)).res.users.map((u: { id: string }) => u.id)).toEqual([users[1].id]);
    await expect(a.call('Users', { pagination: { limit: 1001 } }, ADMIN)).rejects.toMatchObject({ code: 'invalid_argument', message: 'limit must be between 1 and 1000' });
    await expect(a.call('Users', { pagination: { page: -1 } }, ADMIN)).rejects.toMatchObject({ code: 'invalid_argument', message: 'page must be at least 1' });
  });

  it('finds one user by id or email, with the §5.3 refusals', async () => {
    const { a, users } = await withUsers(1);
    expect((await a.call('User', { id: users[0].id }, ADMIN)).res).toEqual(users[0]);
    expect((await a.call('User', { email: ' USER0@example.com ' }, ADMIN)).res).toEqual(users[0]);
    await expect(a.call('User', {}, ADMIN)).rejects.toMatchObject({ code: 'invalid_argument', message: 'either id or email is required' });
    await expect(a.call('User', { id: users[0].id, email: 'user0@example.com' }, ADMIN)).rejects.toMatchObject({ message: 'provide either id or email, not both' });
    await expect(a.call('User', { id: 'nope' }, ADMIN)).rejects.toMatchObject({ code: 'not_found', message: 'user not found' });
  });
});

describe('update_user (behaviour.md §5.3, §4.7)', () => {
  it('changes email and roles, ends the sessions, and answers the 409s and the roles check', async () => {
    const { a, users } = await withUsers(2);
    const login = await a.call('Login', { email: 'user0@example.com', password: PASSWORD });
    const bearer = { authorization: `Bearer ${login.res.access_token}` };
    await expect(a.call('UpdateUser', { id: users[0].id, email: 'user1@example.com' }, ADMIN)).rejects.toMatchObject({ code: 'already_exists', message: 'user with given email already exists' });
    await a.call('UpdateUser', { id: users[1].id, phone_number: '+4915112345678' }, ADMIN);
    await expect(a.call('UpdateUser', { id: users[0].id, phone_number: '+4915112345678' }, ADMIN)).rejects.toMatchObject({ code: 'already_exists', message: 'user with given phone number already exists' });
    await expect(a.call('UpdateUser', { id: users[0].id, roles: ['user', 'root'] }, ADMIN)).rejects.toMatchObject({ code: 'invalid_argument', message: 'invalid list of roles' });
    // still signed in: nothing was changed by the refusals
    expect((await a.call('Profile', {}, bearer)).res.id).toBe(users[0].id);
    const updated = (await a.call('UpdateUser', { id: users[0].id, email: 'NEW@example.com', roles: ['user', 'admin'], nickname: 'nn' }, ADMIN)).res;
    expect(updated).toMatchObject({ email: 'new@example.com', email_verified: false, roles: ['user', 'admin'], nickname: 'nn' });
    await expect(a.call('Profile', {}, bearer)).rejects.toMatchObject({ code: 'unauthenticated' });
    const audit = a.storage.published.filter((e) => e.name === 'audit.recorded').map((e) => e.data as { action: string; metadata: string });
    expect(audit.at(-1)).toMatchObject({ action: 'admin.user_updated', actor_type: 'admin' });
    expect(JSON.parse(audit.at(-1)!.metadata)).toEqual({ fields: ['email', 'nickname', 'roles'], protocol: 'rest' });
  });

  it('mails an update_email link for an unverified new address when SMTP is configured', async () => {
    const { a, users } = await withUsers(1, SMTP);
    await a.call('UpdateUser', { id: users[0].id, email: 'moved@example.com' }, ADMIN);
    const mail = a.storage.published.filter((e) => e.name === 'email.send').at(-1)!.data as { event_name: string; to: string };
    expect(mail).toMatchObject({ event_name: 'update_email', to: 'moved@example.com' });
  });

  it('reset_mfa clears the lock and the preference and asks mfa to drop the factors', async () => {
    const resets: string[] = [];
    const mfa = {
      // the gate lets every login through: this test is about the reset
      EvaluateGate: async () => ({ outcome: 'issue' }),
      ResetUserMfa: async (req: { user_id: string }) => { resets.push(req.user_id); return { deleted: 2 }; },
      EnrolledMfaMethods: async (req: { user_ids: string[] }) => ({ users: req.user_ids.map((user_id) => ({ user_id, methods: ['totp'] })) }),
    } as unknown as MfaInternalClient;
    const { a, users } = await withUsers(1, {}, { mfa });
    await a.call('UpdateUser', { id: users[0].id, is_multi_factor_auth_enabled: true }, ADMIN);
    const res = (await a.call('UpdateUser', { id: users[0].id, reset_mfa: true }, ADMIN)).res;
    expect(res).toMatchObject({ is_multi_factor_auth_enabled: null, mfa_locked_at: null, has_skipped_mfa_setup_at: null, enrolled_mfa_methods: ['totp'] });
    expect(resets).toEqual([users[0].id]);
    await expect(a.call('UpdateUser', { id: '' }, ADMIN)).rejects.toMatchObject({ code: 'invalid_argument', message: 'user ID is missing' });
    await expect(a.call('UpdateUser', { id: 'nope', nickname: 'x' }, ADMIN)).rejects.toMatchObject({ code: 'not_found', message: 'user not found' });
  });
});

describe('revoke_access, enable_access, delete_user (behaviour.md §5.3)', () => {
  it('revoke deletes the sessions at once and is idempotent; enable re-activates, also a deactivated user', async () => {
    const { a, users } = await withUsers(1);
    const login = await a.call('Login', { email: 'user0@example.com', password: PASSWORD });
    const bearer = { authorization: `Bearer ${login.res.access_token}` };
    expect((await a.call('RevokeAccess', { user_id: users[0].id }, ADMIN)).res).toEqual({ message: 'user access revoked successfully' });
    await expect(a.call('Profile', {}, bearer)).rejects.toMatchObject({ code: 'unauthenticated' });
    await a.call('RevokeAccess', { user_id: users[0].id }, ADMIN);
    const names = () => a.storage.published.map((e) => e.name).filter((n) => n.startsWith('user.access'));
    expect(names()).toEqual(['user.access_revoked']);
    expect((await a.call('EnableAccess', { user_id: users[0].id }, ADMIN)).res).toEqual({ message: 'user access enabled successfully' });
    await a.call('EnableAccess', { user_id: users[0].id }, ADMIN);
    expect(names()).toEqual(['user.access_revoked', 'user.access_enabled']);
    const s = await a.call('Login', { email: 'user0@example.com', password: PASSWORD });
    await a.call('DeactivateAccount', {}, { authorization: `Bearer ${s.res.access_token}` });
    await a.call('EnableAccess', { user_id: users[0].id }, ADMIN);
    expect((await a.call('Login', { email: 'user0@example.com', password: PASSWORD })).res.access_token).toEqual(expect.any(String));
    // one audit row per state change, none for the repeats (behaviour.md §5.7)
    const audits = a.storage.published.filter((e) => e.name === 'audit.recorded').map((e) => e.data as { action: string; resource_type: string; resource_id: string; actor_type: string });
    expect(audits.filter((r) => r.action.startsWith('admin.access')).map((r) => [r.action, r.resource_type, r.resource_id, r.actor_type])).toEqual([
      ['admin.access_revoked', 'user', users[0].id, 'admin'],
      ['admin.access_enabled', 'user', users[0].id, 'admin'],
      ['admin.access_enabled', 'user', users[0].id, 'admin'],
    ]);
    await expect(a.call('RevokeAccess', { user_id: ' ' }, ADMIN)).rejects.toMatchObject({ code: 'invalid_argument', message: 'user ID is missing' });
    await expect(a.call('EnableAccess', { user_id: 'nope' }, ADMIN)).rejects.toMatchObject({ code: 'not_found', message: 'user not found' });
  });

  it('delete_user removes the user, its sessions and links, and emits user.deleted with the record as it was', async () => {
    const { a, users } = await withUsers(1, SMTP);
    const login = await a.call('Login', { email: 'user0@example.com', password: PASSWORD });
    await a.call('ForgotPassword', { email: 'user0@example.com' });
    expect(a.storage.verificationRequests()).toHaveLength(1);
    expect((await a.call('DeleteUser', { email: 'user0@example.com' }, ADMIN)).res).toEqual({ message: 'user deleted successfully' });
    expect(await a.storage.users.findById(users[0].id)).toBeNull();
    expect(a.storage.verificationRequests()).toHaveLength(0);
    expect(await a.sessions.get(login.res.user.id)).toBeNull();
    await expect(a.call('Profile', {}, { authorization: `Bearer ${login.res.access_token}` })).rejects.toMatchObject({ code: 'unauthenticated' });
    const deleted = a.storage.published.find((e) => e.name === 'user.deleted')!.data as { user: { id: string; email: string; created_at: number } };
    expect(deleted.user).toMatchObject({ id: users[0].id, email: 'user0@example.com', created_at: T0 });
    const audit = a.storage.published.filter((e) => e.name === 'audit.recorded').at(-1)!.data as { action: string; resource_id: string };
    expect(audit).toMatchObject({ action: 'admin.user_deleted', resource_id: users[0].id });
    await expect(a.call('DeleteUser', { id: users[0].id }, ADMIN)).rejects.toMatchObject({ code: 'not_found', message: 'user not found' });
    await expect(a.call('DeleteUser', {}, ADMIN)).rejects.toMatchObject({ code: 'invalid_argument', message: 'either id or email is required' });
  });
});

describe('invite_members and verification_requests (behaviour.md §5.3)', () => {
  it('invites valid new addresses, skips existing ones, and lists the links without their tokens', async () => {
    const { a } = await withUsers(1, SMTP);
    const res = (await a.call('InviteMembers', { emails: ['user0@example.com', 'new1@example.com', 'not-an-email', 'NEW2@example.com'] }, ADMIN)).res;
    expect(res.message).toBe('2 user(s) invited successfully.');
    expect(res.users.map((u: { email: string; email_verified: boolean }) => [u.email, u.email_verified])).toEqual([['new1@example.com', false], ['new2@example.com', false]]);
    const mails = a.storage.published.filter((e) => e.name === 'email.send').map((e) => openMail(a.options, e.data));
    expect(mails.map((m) => m.event_name)).toEqual(['invite_member', 'invite_member']);
    const invited = a.storage.published.filter((e) => e.name === 'audit.recorded').map((e) => e.data as { action: string; resource_id: string });
    expect(invited.filter((r) => r.action === 'admin.invite_sent').map((r) => r.resource_id)).toEqual(res.users.map((u: { id: string }) => u.id));
    expect(mails[0]!.variables.verification_url).toMatch(/^https:\/\/auth\.example\.com\/app\/setup-password\?token=[^&]+&redirect_uri=/);
    const listed = (await a.call('VerificationRequests', {}, ADMIN)).res;
    expect(listed.pagination).toEqual({ page: 1, limit: 10, offset: 0, total: 2 });
    expect(listed.verification_requests[0]).toMatchObject({ identifier: 'invite_member', token: null, nonce: null });
    await expect(a.call('InviteMembers', { emails: ['new1@example.com'] }, ADMIN)).rejects.toMatchObject({ code: 'already_exists', message: 'all emails already exist' });
    await expect(a.call('InviteMembers', { emails: ['nope'] }, ADMIN)).rejects.toMatchObject({ code: 'invalid_argument', message: 'no valid emails found' });
    await expect(a.call('InviteMembers', { emails: Array.from({ length: 101 }, (_, i) => `x${i}@example.com`) }, ADMIN)).rejects.toMatchObject({ message: 'cannot invite more than 100 members in a single request' });
  });

  it('needs SMTP and a sign-in method', async () => {
    const { a } = await withUsers(0);
    await expect(a.call('InviteMembers', { emails: ['a@example.com'] }, ADMIN)).rejects.toMatchObject({ code: 'failed_precondition', message: 'email sending is disabled' });
    const b = makeAuthn({ ...SMTP, enableBasicAuthentication: false, enableMagicLinkLogin: false });
    await expect(b.call('InviteMembers', { emails: ['a@example.com'] }, ADMIN)).rejects.toMatchObject({ code: 'failed_precondition', message: 'either basic authentication or magic link login is required' });
  });
});
