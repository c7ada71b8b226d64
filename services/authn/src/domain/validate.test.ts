import { describe, it, expect } from '@jest/globals';
import { createJwtSigner } from '@gatehouse/crypto';
import { parseCookies } from '@gatehouse/auth';
import { URL_, makeAuthn } from '../fixture.ts';

describe('validate_jwt_token (behaviour.md §3.5)', () => {
  it('returns the claims of a valid access, id and refresh token', async () => {
    const a = makeAuthn();
    const s = await a.signup('ada@example.com', { scope: ['openid', 'offline_access'] });
    for (const [token_type, token] of [['access_token', s.res.access_token], ['id_token', s.res.id_token], ['refresh_token', s.res.refresh_token]]) {
      const { res } = await a.call('ValidateJwtToken', { token_type, token });
      expect(res).toEqual({ is_valid: true, claims: expect.objectContaining({ sub: s.res.user.id, token_type, iss: URL_ }) });
    }
  });

  it('refuses a bad type, a malformed/foreign/expired token and a mismatched type', async () => {
    const a = makeAuthn();
    const s = await a.signup();
    await expect(a.call('ValidateJwtToken', { token_type: 'bearer', token: s.res.access_token })).rejects.toMatchObject({ code: 'invalid_argument', message: 'invalid token type' });
    const invalid = { code: 'unauthenticated', message: 'invalid token' };
    await expect(a.call('ValidateJwtToken', { token_type: 'access_token', token: 'x.y.z' })).rejects.toMatchObject(invalid);
    await expect(a.call('ValidateJwtToken', { token_type: 'id_token', token: s.res.access_token })).rejects.toMatchObject(invalid);
    const foreign = await createJwtSigner({ type: 'HS256', secret: 'another-secret-another-secret-xx' }).sign({ iss: URL_, sub: 'x', token_type: 'access_token' }, { expiresInSeconds: 60 });
    await expect(a.call('ValidateJwtToken', { token_type: 'access_token', token: foreign })).rejects.toMatchObject(invalid);
    a.advance(1801);
    await expect(a.call('ValidateJwtToken', { token_type: 'id_token', token: s.res.id_token })).rejects.toMatchObject(invalid);
  });

  it('refuses an access token whose session is gone but keeps id tokens valid until exp', async () => {
    const a = makeAuthn();
    const s = await a.signup();
    await a.call('Logout', {}, s.cookie);
    await expect(a.call('ValidateJwtToken', { token_type: 'access_token', token: s.res.access_token })).rejects.toMatchObject({ code: 'unauthenticated', message: 'invalid token' });
    await expect(a.call('ValidateJwtToken', { token_type: 'id_token', token: s.res.id_token })).resolves.toBeDefined();
  });

  it('checks requested roles against the role claim', async () => {
    const a = makeAuthn({ jwtRoleClaim: 'groups' });
    const s = await a.signup('ada@example.com', { roles: ['user', 'editor'] });
    await expect(a.call('ValidateJwtToken', { token_type: 'id_token', token: s.res.id_token, roles: ['editor'] })).resolves.toBeDefined();
    await expect(a.call('ValidateJwtToken', { token_type: 'access_token', token: s.res.access_token, roles: ['editor'] })).resolves.toBeDefined();
    await expect(a.call('ValidateJwtToken', { token_type: 'id_token', token: s.res.id_token, roles: ['admin'] })).rejects.toMatchObject({ code: 'unauthenticated', message: 'unauthorized' });
  });
});

describe('validate_session (behaviour.md §3.5)', () => {
  it('returns the user of a live session cookie value', async () => {
    const a = makeAuthn();
    const s = await a.signup();
    const value = parseCookies(s.cookie.cookie)['cookie_session']!;
    const { res } = await a.call('ValidateSession', { cookie: value });
    expect(res).toEqual({ is_valid: true, user: s.res.user });
    await expect(a.call('ValidateSession', { cookie: value, roles: ['user'] })).resolves.toBeDefined();
    await expect(a.call('ValidateSession', { cookie: value, roles: ['admin'] })).rejects.toMatchObject({ code: 'unauthenticated', message: 'unauthorized' });
    await expect(a.call('ValidateSession', { cookie: 'unknown' })).rejects.toMatchObject({ code: 'unauthenticated', message: 'unauthorized' });
    await expect(a.call('ValidateSession', {})).rejects.toMatchObject({ code: 'unauthenticated' });
    // without a body cookie, the caller's own session cookie header is validated
    await expect(a.call('ValidateSession', {}, s.cookie)).resolves.toMatchObject({ res: { is_valid: true, user: { id: s.res.user.id } } });
    await expect(a.call('ValidateSession', {}, { cookie: `cookie_session_domain=${value}` })).resolves.toMatchObject({ res: { is_valid: true } });
    await expect(a.call('ValidateSession', { cookie: 'unknown' }, s.cookie)).rejects.toMatchObject({ code: 'unauthenticated', message: 'unauthorized' });
    await expect(a.call('ValidateSession', { cookie: value, required_relations: [{ relation: 'r', object: 'o:1' }] })).rejects.toMatchObject({ code: 'failed_precondition' });
    a.advance(86400);
    await expect(a.call('ValidateSession', { cookie: value })).rejects.toMatchObject({ code: 'unauthenticated', message: 'unauthorized' });
  });
});
