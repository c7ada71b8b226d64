import { describe, it, expect } from '@jest/globals';
import { atHash } from '@gatehouse/crypto';
import { decodeJwt, decodeProtectedHeader } from 'jose';
import { T0, URL_, makeAuthn } from '../fixture.ts';

describe('tokens (behaviour.md §2.1)', () => {
  it('access token claims', async () => {
    const a = makeAuthn();
    await a.signup('ada@example.com', { roles: ['user', 'editor'] });
    // login without roles: granted = the user's roles ∩ --default-roles
    const { res } = await a.call('Login', { email: 'ada@example.com', password: 'Str0ng!pass' });
    const claims = decodeJwt(res.access_token);
    expect(decodeProtectedHeader(res.access_token)).toMatchObject({ alg: 'ES256', kid: a.jwt.kid });
    expect(claims).toEqual({
      iss: URL_, aud: 'client-123', sub: res.user.id, iat: T0, exp: T0 + 1800, nonce: expect.any(String),
      token_type: 'access_token', scope: ['openid', 'email', 'profile'], roles: ['user'], allowed_roles: ['user', 'editor'], login_method: 'basic_auth',
    });
    expect(await a.sessions.get(claims.nonce as string)).toMatchObject({ userId: res.user.id, roles: ['user'], expiresAt: T0 + 86400, authTime: T0 });
  });

  it('ID token claims: at_hash, amr, acr, role claim and non-null profile claims', async () => {
    const a = makeAuthn({ jwtRoleClaim: 'groups' });
    const { res } = await a.signup('ada@example.com', { given_name: 'Ada', nickname: 'ada' });
    const id = decodeJwt(res.id_token);
    expect(id).toEqual({
      iss: URL_, aud: 'client-123', sub: res.user.id, iat: T0, exp: T0 + 1800, auth_time: T0, nonce: decodeJwt(res.access_token).nonce,
      sid: decodeJwt(res.access_token).nonce, token_type: 'id_token', amr: ['pwd'], acr: '0', at_hash: atHash(res.access_token, 'ES256'), groups: ['user'], allowed_roles: ['user'],
      login_method: 'basic_auth', email: 'ada@example.com', email_verified: true, given_name: 'Ada', nickname: 'ada',
      preferred_username: 'ada@example.com', updated_at: T0,
    });
  });

  it('issues a refresh token only with offline_access', async () => {
    const a = makeAuthn();
    const { res } = await a.signup('ada@example.com', { scope: ['openid', 'offline_access'] });
    const rt = decodeJwt(res.refresh_token);
    const session = await a.sessions.get(rt.nonce as string);
    expect(rt).toEqual({
      iss: URL_, aud: 'client-123', sub: res.user.id, iat: T0, exp: T0 + 2592000, auth_time: T0, nonce: session!.id,
      token_type: 'refresh_token', scope: ['openid', 'offline_access'], roles: ['user'], allowed_roles: ['user'], login_method: 'basic_auth',
      client_id: 'client-123', family_id: session!.id, jti: session!.refreshTokenId,
    });
  });

  it('merges custom claims from the script into access and ID tokens, skipping reserved keys', async () => {
    const script = 'function(user, tokenPayload) { return { tenant: "t-" + user.email, sub: "evil", roles: ["admin"], nonce: "x", tt: tokenPayload.token_type }; }';
    const a = makeAuthn({ customAccessTokenScript: script });
    const { res } = await a.signup();
    const at = decodeJwt(res.access_token);
    expect(at).toMatchObject({ tenant: 't-ada@example.com', tt: 'access_token', sub: res.user.id, roles: ['user'] });
    expect(at.nonce).not.toBe('x');
    expect(decodeJwt(res.id_token)).toMatchObject({ tenant: 't-ada@example.com', sub: res.user.id });
  });

  it.each([
    ['throws', 'function() { throw new Error("no"); }'],
    ['times out', 'function() { while (true) {} }'],
    ['returns a non-object', 'function() { return 42; }'],
    ['returns an array', 'function() { return [1]; }'],
    ['returns a promise', 'async function() { return { a: 1 }; }'],
  ])('issues tokens without custom claims when the script %s', async (_name, script) => {
    const a = makeAuthn({ customAccessTokenScript: script });
    const { res } = await a.signup();
    expect(Object.keys(decodeJwt(res.access_token)).sort()).toEqual(['allowed_roles', 'aud', 'exp', 'iat', 'iss', 'login_method', 'nonce', 'roles', 'scope', 'sub', 'token_type']);
  });

  it('refuses a script that does not compile at construction', () => {
    expect(() => makeAuthn({ customAccessTokenScript: 'function( {' })).toThrow(/--custom-access-token-script does not compile/);
  });
});
