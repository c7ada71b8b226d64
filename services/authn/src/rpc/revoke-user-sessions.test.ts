/**
 * @module @gatehouse/authn/rpc/revoke-user-sessions.test
 * `_revoke_user_sessions` (issue 35) through authn's codec and guard, as every transport calls it: the
 * admin signs one user out everywhere, every token and cookie of that user fails on its next use
 * (behaviour.md §2.1), other users stay signed in, the account is not revoked (the user signs in again
 * at once), the relying parties of the user's sign-on sessions get a back-channel logout token, and
 * the action is audited; bad input answers 400/404 and anonymous callers 401, changing nothing.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from '@jest/globals';
import { decodeJwt } from 'jose';
import { PASSWORD, makeAuthn } from '../fixture.ts';

const ADMIN = { 'x-service-admin-secret': 'admin-secret' };

async function twoUsers() {
  const a = makeAuthn();
  const ada = await a.signup('ada@example.com');
  const phone = await a.call('Login', { email: 'ada@example.com', password: PASSWORD });
  const grace = await a.signup('grace@example.com');
  const profile = (headers: Record<string, string>) => a.call('Profile', {}, headers);
  return { a, ada, phone: { authorization: `Bearer ${phone.res.access_token}` }, grace, profile };
}

describe('revoke_user_sessions (issue 35)', () => {
  it("ends every session of the user and no one else's, without revoking access; audited; a repeat ends none", async () => {
    const { a, ada, phone, grace, profile } = await twoUsers();
    const id = ada.res.user.id as string;
    const { res } = await a.call('RevokeUserSessions', { user_id: id }, ADMIN);
    expect(res).toEqual({ message: 'User sessions revoked', count: 2 });
    for (const headers of [ada.bearer, ada.cookie, phone]) await expect(profile(headers)).rejects.toMatchObject({ code: 'unauthenticated' });
    await expect(a.call('Session', {}, ada.cookie)).rejects.toMatchObject({ code: 'unauthenticated' });
    expect((await profile(grace.bearer)).res.id).toBe(grace.res.user.id);
    // nothing to end the second time
    expect((await a.call('RevokeUserSessions', { user_id: ` ${id.toUpperCase()} ` }, ADMIN)).res).toEqual({ message: 'User sessions revoked', count: 0 });
    // access is untouched: not revoked, and the user signs in again at once
    expect((await a.call('User', { id }, ADMIN)).res.revoked_timestamp).toBeNull();
    const again = await a.call('Login', { email: 'ada@example.com', password: PASSWORD });
    expect((await profile({ authorization: `Bearer ${again.res.access_token}` })).res.id).toBe(id);
    const published = a.storage.published;
    expect(published.filter((e) => e.name.startsWith('user.access'))).toEqual([]);
    const audits = published.filter((e) => e.name === 'audit.recorded').map((e) => e.data as { action: string; resource_type: string; resource_id: string; actor_type: string; metadata: string })
      .filter((r) => r.action === 'admin.sessions_revoked');
    expect(audits.map((r) => [r.resource_type, r.resource_id, r.actor_type, JSON.parse(r.metadata)])).toEqual([
      ['user', id, 'admin', { count: 2, protocol: 'rest' }],
      ['user', id, 'admin', { count: 0, protocol: 'rest' }],
    ]);
  });

  it('logs the relying parties of every sign-on session out (Back-Channel Logout 1.0), their refresh tokens dead', async () => {
    const { a, ada, phone } = await twoUsers();
    const { res: made } = await a.call('CreateClient', {
      name: 'rp', allowed_scopes: ['openid', 'offline_access'], redirect_uris: ['https://rp.example/cb'], grant_types: ['authorization_code', 'refresh_token'],
      is_first_party: true, backchannel_logout_uri: 'https://rp.example/backchannel',
    }, ADMIN);
    const basic = { authorization: `Basic ${Buffer.from(`${made.client.client_id}:${made.client_secret}`).toString('base64')}` };
    const http = async (rpc: string, params: Record<string, string>, headers: Record<string, string>, method = 'POST') => (await a.call(rpc, { params, method }, headers)).res;
    const authorize = await http('Authorize', {
      client_id: made.client.client_id, redirect_uri: 'https://rp.example/cb', response_type: 'code', scope: 'openid offline_access', state: 's', nonce: 'n',
    }, ada.cookie, 'GET');
    const code = new URL(authorize.location).searchParams.get('code')!;
    const tokens = (await http('OauthToken', { grant_type: 'authorization_code', code, redirect_uri: 'https://rp.example/cb' }, basic)).body;
    expect(tokens.refresh_token).toEqual(expect.any(String));
    await a.call('RevokeUserSessions', { user_id: ada.res.user.id }, ADMIN);
    const jobs = a.storage.published.filter((e) => e.name === 'oauth.backchannel_logout').map((e) => e.data as Record<string, string>);
    expect(jobs.map((j) => [j.client_id, decodeJwt(j.logout_token!).sid])).toEqual([[made.client.client_id, decodeJwt(ada.res.id_token).sid]]);
    const refreshed = await http('OauthToken', { grant_type: 'refresh_token', refresh_token: tokens.refresh_token }, basic);
    expect(refreshed.body).toMatchObject({ error: 'invalid_grant' });
    await expect(a.call('Profile', {}, phone)).rejects.toMatchObject({ code: 'unauthenticated' });
  });

  it('answers 400 without a user, 404 for an unknown one and 401 to anonymous callers, ending nothing', async () => {
    const { a, ada, profile } = await twoUsers();
    for (const req of [{}, { user_id: '' }, { user_id: '  ' }]) {
      await expect(a.call('RevokeUserSessions', req, ADMIN)).rejects.toMatchObject({ code: 'invalid_argument', message: 'user ID is missing' });
    }
    await expect(a.call('RevokeUserSessions', { user_id: randomUUID() }, ADMIN)).rejects.toMatchObject({ code: 'not_found', message: 'user not found' });
    await expect(a.call('RevokeUserSessions', { user_id: ada.res.user.id })).rejects.toMatchObject({ code: 'unauthenticated' });
    // an ordinary user's token is no admin credential
    await expect(a.call('RevokeUserSessions', { user_id: ada.res.user.id }, ada.bearer)).rejects.toMatchObject({ code: 'unauthenticated' });
    expect((await profile(ada.bearer)).res.id).toBe(ada.res.user.id);
  });
});
