import { describe, it, expect } from '@jest/globals';
import { decodeJwt } from 'jose';
import { T0, cookieHeader, makeAuthn } from '../fixture.ts';

describe('session (behaviour.md §2.2, §3.5)', () => {
  it('rotates a cookie session: new session and cookies, same auth_time, old session and its tokens dead', async () => {
    const a = makeAuthn();
    const s = await a.signup('ada@example.com', { roles: ['user', 'editor'] });
    const oldNonce = decodeJwt(s.res.access_token).nonce as string;
    a.advance(1000);
    const { res, cookies } = await a.call('Session', {}, s.cookie);
    expect(res.message).toBe('Session token refreshed');
    const at = decodeJwt(res.access_token);
    expect(at.nonce).not.toBe(oldNonce);
    expect(at.iat).toBe(T0 + 1000);
    expect(decodeJwt(res.id_token).auth_time).toBe(T0);
    expect(at.roles).toEqual(['user', 'editor']);
    expect(cookies).toHaveLength(2);
    expect(cookies[0]).toContain('Max-Age=86400');
    expect(await a.sessions.get(oldNonce)).toBeNull();
    expect(await a.sessions.get(at.nonce as string)).toMatchObject({ authTime: T0, expiresAt: T0 + 1000 + 86400 });
    await expect(a.call('Profile', {}, s.bearer)).rejects.toMatchObject({ code: 'unauthenticated', message: 'unauthorized' });
    await expect(a.call('Profile', {}, s.cookie)).rejects.toMatchObject({ code: 'unauthenticated' });
    await expect(a.call('Profile', {}, cookieHeader(cookies))).resolves.toBeDefined();
    expect(a.storage.published.filter((e) => e.name !== 'audit.recorded').map((e) => e.name)).toEqual(['user.created', 'user.signup']);
  });

  it('refreshes with a bearer token without rotation or cookies', async () => {
    const a = makeAuthn();
    const s = await a.signup();
    const nonce = decodeJwt(s.res.access_token).nonce;
    a.advance(60);
    const { res, cookies } = await a.call('Session', {}, s.bearer);
    expect(cookies).toEqual([]);
    expect(decodeJwt(res.access_token)).toMatchObject({ nonce, iat: T0 + 60 });
    expect((await a.sessions.get(nonce as string))!.expiresAt).toBe(T0 + 86400);
    await expect(a.call('Profile', {}, s.bearer)).resolves.toBeDefined();
  });

  it('may only narrow roles and scope', async () => {
    const a = makeAuthn();
    const s = await a.signup('ada@example.com', { roles: ['user', 'editor'], scope: ['openid', 'email'] });
    const narrowed = await a.call('Session', { roles: ['editor'], scope: ['openid'] }, s.bearer);
    expect(decodeJwt(narrowed.res.access_token)).toMatchObject({ roles: ['editor'], scope: ['openid'] });
    await expect(a.call('Session', { roles: ['admin'] }, s.bearer)).rejects.toMatchObject({ code: 'unauthenticated', message: 'unauthorized' });
    await expect(a.call('Session', { scope: ['offline_access'] }, s.bearer)).rejects.toMatchObject({ code: 'unauthenticated', message: 'unauthorized' });
  });

  it('needs credentials', async () => {
    const a = makeAuthn();
    await expect(a.call('Session', {})).rejects.toMatchObject({ code: 'unauthenticated', message: 'unauthorized' });
    await expect(a.call('Session', {}, { authorization: 'Bearer nope' })).rejects.toMatchObject({ code: 'unauthenticated' });
  });

  it('required_relations: engine off → failed_precondition; checked with AND, fail closed', async () => {
    const a = makeAuthn();
    const s = await a.signup();
    await expect(a.call('Session', { required_relations: [{ relation: 'viewer', object: 'doc:1' }] }, s.bearer)).rejects.toMatchObject({ code: 'failed_precondition', message: 'authorization engine is not enabled' });
    await expect(a.call('Session', { required_relations: [{ relation: '', object: 'doc:1' }] }, s.bearer)).rejects.toMatchObject({ code: 'invalid_argument', message: 'each required relation needs relation and object' });
    await expect(a.call('Session', { required_relations: [] }, s.bearer)).resolves.toBeDefined();
    const seen: unknown[] = [];
    const b = makeAuthn({}, { permissions: { checkAll: async (subject, rels) => { seen.push([subject, rels]); return rels.every((r) => r.object === 'doc:1'); } } });
    const t = await b.signup();
    await expect(b.call('Session', { required_relations: [{ relation: 'viewer', object: 'doc:1' }] }, t.bearer)).resolves.toBeDefined();
    await expect(b.call('Session', { required_relations: [{ relation: 'viewer', object: 'doc:1' }, { relation: 'viewer', object: 'doc:2' }] }, t.bearer)).rejects.toMatchObject({ code: 'permission_denied', message: 'unauthorized' });
    expect(seen[0]).toEqual([`user:${t.res.user.id}`, [{ relation: 'viewer', object: 'doc:1' }]]);
  });
});

describe('revoke (behaviour.md §3.5)', () => {
  it('deletes the session of a refresh token', async () => {
    const a = makeAuthn();
    const s = await a.signup('ada@example.com', { scope: ['openid', 'offline_access'] });
    expect((await a.call('Revoke', { refresh_token: s.res.refresh_token })).res).toEqual({ message: 'Token revoked' });
    await expect(a.call('Profile', {}, s.bearer)).rejects.toMatchObject({ code: 'unauthenticated' });
    await expect(a.call('Revoke', { refresh_token: s.res.refresh_token })).rejects.toMatchObject({ code: 'not_found', message: 'token not found' });
  });

  it('answers the exact errors', async () => {
    const a = makeAuthn();
    const s = await a.signup('ada@example.com', { scope: ['openid', 'offline_access'] });
    await expect(a.call('Revoke', {})).rejects.toMatchObject({ code: 'invalid_argument', message: 'missing refresh token' });
    await expect(a.call('Revoke', { refresh_token: 'garbage' })).rejects.toMatchObject({ code: 'invalid_argument', message: 'invalid token' });
    await expect(a.call('Revoke', { refresh_token: s.res.access_token })).rejects.toMatchObject({ code: 'invalid_argument', message: 'invalid token' });
    await expect(a.call('Revoke', { refresh_token: 5 })).rejects.toMatchObject({ code: 'invalid_argument' });
    // a newer refresh token for the same session makes the first one stale
    const newer = await a.call('Session', {}, s.bearer);
    expect(newer.res.refresh_token).toEqual(expect.any(String));
    await expect(a.call('Revoke', { refresh_token: s.res.refresh_token })).rejects.toMatchObject({ code: 'invalid_argument', message: 'token does not match' });
    a.advance(2592001);
    await expect(a.call('Revoke', { refresh_token: newer.res.refresh_token })).rejects.toMatchObject({ code: 'invalid_argument', message: 'invalid token' });
  });
});
