/**
 * @module test/e2e/session
 * The account lifecycle end to end (behaviour.md §2, §3.2, §3.3, §3.5), every step performed on REST,
 * GraphQL and native gRPC with the three answers compared, against all-in-one and split deployments.
 */
import { describe, it, expect, beforeAll, afterAll, jest } from '@jest/globals';
import { startDeployment, type Deployment } from '@gatehouse/testing';
import { closeGrpcClients, cookieValue, grpcRpc, perform, type Surface } from '../support/surfaces.ts';
import { PASSWORD, expectError, expectOk, freshEmail, onAllSurfaces, perSurface, sessionCookie } from '../support/scenario.ts';

jest.setTimeout(60_000);

describe.each(['all', 'split'] as const)('account lifecycle on three surfaces (%s)', (mode) => {
  let d: Deployment;
  beforeAll(async () => { d = await startDeployment(mode, { readyTimeoutMs: 60_000 }); }, 120_000);
  afterAll(async () => { closeGrpcClients(); await d?.stop(); });

  // one user per surface, since every call has side effects
  const email = perSurface((s) => freshEmail(`${mode}-${s}`));
  const other: Record<Surface, Surface> = { rest: 'graphql', graphql: 'grpc', grpc: 'rest' };
  const asEmail = (s: Surface): Record<string, string> => ({ [email[s]]: '<email>' });

  /** Logs `s`'s user in on surface `s` and returns its access token and session cookie. */
  async function login(s: Surface, extra: Record<string, unknown> = {}): Promise<{ token: string; cookie: string; body: Record<string, any> }> {
    const r = await perform(s, d, { op: 'login', args: { email: email[s], password: PASSWORD, ...extra } });
    const body = expectOk(r);
    return { token: body.access_token as string, cookie: sessionCookie(r), body };
  }

  it('signup answers the same AuthResponse everywhere and sets both session cookies', async () => {
    const r = await onAllSurfaces(d, (s) => ({ op: 'signup', args: { email: email[s], password: PASSWORD, confirm_password: PASSWORD, given_name: 'Ada' } }), asEmail);
    for (const s of ['rest', 'graphql', 'grpc'] as const) {
      const body = expectOk(r[s]);
      expect(body).toMatchObject({ message: 'Signed up successfully.', refresh_token: null, user: { email: email[s], given_name: 'Ada', roles: ['user'] } });
      expect(typeof body.access_token).toBe('string');
      expect(typeof body.id_token).toBe('string');
      expect(body.expires_in).toBeGreaterThan(0);
      expect(cookieValue(r[s].cookies, 'cookie_session')).toBeTruthy();
      expect(cookieValue(r[s].cookies, 'cookie_session_domain')).toBe(cookieValue(r[s].cookies, 'cookie_session'));
      // behaviour.md §2.4: HttpOnly, Path=/, SameSite as configured (lax), host-only for an IP --url host
      for (const c of r[s].cookies.filter((x) => x.startsWith('cookie_session'))) {
        expect(c).toMatch(/;\s*HttpOnly/i);
        expect(c).toMatch(/;\s*Path=\//i);
        expect(c).toMatch(/;\s*SameSite=Lax/i);
        expect(c).toMatch(/;\s*Max-Age=\d+/i);
        expect(c).not.toMatch(/;\s*Domain=/i);
      }
    }
  });

  it('signup with a taken email is 400 invalid_argument, also after trimming and lower-casing', async () => {
    await onAllSurfaces(d, (s) => ({ op: 'signup', args: { email: email[other[s]], password: PASSWORD, confirm_password: PASSWORD } }));
    const r = await onAllSurfaces(d, (s) => ({ op: 'signup', args: { email: ` ${email[other[s]].toUpperCase()} `, password: PASSWORD, confirm_password: PASSWORD } }));
    expectError(r.rest, 'invalid_argument', 'user with given email already exists');
  });

  it('login answers alike; a wrong password and an unknown email are both 401 invalid credentials', async () => {
    const ok = await onAllSurfaces(d, (s) => ({ op: 'login', args: { email: email[s], password: PASSWORD } }), asEmail);
    expect(expectOk(ok.rest).message).toBe('Logged in successfully');
    for (const s of ['rest', 'graphql', 'grpc'] as const) expect(cookieValue(ok[s].cookies, 'cookie_session')).toBeTruthy();
    const wrong = await onAllSurfaces(d, (s) => ({ op: 'login', args: { email: email[s], password: `${PASSWORD}x` } }));
    expectError(wrong.rest, 'unauthenticated', 'invalid credentials');
    const unknown = await onAllSurfaces(d, () => ({ op: 'login', args: { email: freshEmail('nobody'), password: PASSWORD } }));
    expectError(unknown.rest, 'unauthenticated', 'invalid credentials');
  });

  it('profile works with a bearer token, with cookie_session and with cookie_session_domain alone', async () => {
    const creds = perSurface(() => ({ token: '', cookie: '' }));
    for (const s of ['rest', 'graphql', 'grpc'] as const) creds[s] = await login(s);
    const bearer = await onAllSurfaces(d, (s) => ({ op: 'profile', creds: { bearer: creds[s].token } }), asEmail);
    expect(expectOk(bearer.grpc)).toMatchObject({ email: email.grpc, given_name: 'Ada', email_verified: true });
    const cookie = await onAllSurfaces(d, (s) => ({ op: 'profile', creds: { cookie: creds[s].cookie } }), asEmail);
    expect(expectOk(cookie.graphql).email).toBe(email.graphql);
    const domainOnly = await onAllSurfaces(d, (s) => ({ op: 'profile', creds: { cookie: creds[s].cookie.replace(/^cookie_session=/, 'cookie_session_domain=') } }), asEmail);
    expect(expectOk(domainOnly.rest).email).toBe(email.rest);
    const none = await onAllSurfaces(d, () => ({ op: 'profile' }));
    expectError(none.rest, 'unauthenticated', 'unauthorized');
    // a present but invalid bearer decides alone: no fallback to the valid cookie (behaviour.md §2.3)
    const badBearer = await onAllSurfaces(d, (s) => ({ op: 'profile', creds: { bearer: 'not-a-token', cookie: creds[s].cookie } }));
    expectError(badBearer.rest, 'unauthenticated', 'unauthorized');
  });

  it('update_profile changes the profile; a taken email is 409 already_exists; an empty update is 400', async () => {
    const creds = perSurface(() => ({ token: '', cookie: '' }));
    for (const s of ['rest', 'graphql', 'grpc'] as const) creds[s] = await login(s);
    const upd = await onAllSurfaces(d, (s) => ({ op: 'update_profile', args: { given_name: 'Grace', nickname: 'g' }, creds: { bearer: creds[s].token } }));
    expect(expectOk(upd.rest)).toEqual({ message: 'Profile details updated successfully.' });
    const prof = await onAllSurfaces(d, (s) => ({ op: 'profile', creds: { bearer: creds[s].token } }), asEmail);
    expect(expectOk(prof.grpc)).toMatchObject({ given_name: 'Grace', nickname: 'g' });
    const taken = await onAllSurfaces(d, (s) => ({ op: 'update_profile', args: { email: email[other[s]] }, creds: { bearer: creds[s].token } }));
    expectError(taken.rest, 'already_exists', 'user with given email already exists');
    const empty = await onAllSurfaces(d, (s) => ({ op: 'update_profile', args: {}, creds: { bearer: creds[s].token } }));
    expectError(empty.rest, 'invalid_argument', 'please enter at least one param to update');
    // the refused email change left the account and its session alone
    const still = await onAllSurfaces(d, (s) => ({ op: 'profile', creds: { bearer: creds[s].token } }), asEmail);
    expect(expectOk(still.rest).email).toBe(email.rest);
  });

  it('validate_jwt_token accepts a live access token and refuses bad ones', async () => {
    const creds = perSurface(() => ({ token: '', cookie: '', body: {} as Record<string, any> }));
    for (const s of ['rest', 'graphql', 'grpc'] as const) creds[s] = await login(s);
    const ok = await onAllSurfaces(d, (s) => ({ op: 'validate_jwt_token', args: { token_type: 'access_token', token: creds[s].token } }), asEmail);
    expect(expectOk(ok.rest)).toMatchObject({ is_valid: true, claims: { iss: d.url, aud: d.clientId, token_type: 'access_token', roles: ['user'] } });
    expect(expectOk(ok.grpc).claims.sub).toBe(creds.grpc.body.user.id);
    const id = await onAllSurfaces(d, (s) => ({ op: 'validate_jwt_token', args: { token_type: 'id_token', token: creds[s].body.id_token } }), asEmail);
    expect(expectOk(id.graphql).claims).toMatchObject({ token_type: 'id_token', email: email.graphql });
    const bad = await onAllSurfaces(d, () => ({ op: 'validate_jwt_token', args: { token_type: 'access_token', token: 'a.b.c' } }));
    expectError(bad.rest, 'unauthenticated', 'invalid token');
    const badType = await onAllSurfaces(d, (s) => ({ op: 'validate_jwt_token', args: { token_type: 'bearer', token: creds[s].token } }));
    expectError(badType.rest, 'invalid_argument', 'invalid token type');
    const session = await onAllSurfaces(d, (s) => ({ op: 'validate_session', args: { cookie: creds[s].cookie.split('=')[1] } }), asEmail);
    expect(expectOk(session.rest)).toMatchObject({ is_valid: true, user: { email: email.rest } });
  });

  it('session with a cookie rotates it: new cookies, and the old cookie is refused afterwards', async () => {
    const creds = perSurface(() => ({ token: '', cookie: '' }));
    for (const s of ['rest', 'graphql', 'grpc'] as const) creds[s] = await login(s);
    const rotated = await onAllSurfaces(d, (s) => ({ op: 'session', creds: { cookie: creds[s].cookie } }), asEmail);
    for (const s of ['rest', 'graphql', 'grpc'] as const) {
      expect(expectOk(rotated[s]).message).toBe('Session token refreshed');
      expect(sessionCookie(rotated[s])).not.toBe(creds[s].cookie);
      expect(cookieValue(rotated[s].cookies, 'cookie_session_domain')).toBe(cookieValue(rotated[s].cookies, 'cookie_session'));
    }
    const old = await onAllSurfaces(d, (s) => ({ op: 'profile', creds: { cookie: creds[s].cookie } }));
    expectError(old.rest, 'unauthenticated', 'unauthorized');
    const oldToken = await onAllSurfaces(d, (s) => ({ op: 'profile', creds: { bearer: creds[s].token } }));
    expectError(oldToken.graphql, 'unauthenticated', 'unauthorized');
    const fresh = await onAllSurfaces(d, (s) => ({ op: 'profile', creds: { cookie: sessionCookie(rotated[s]) } }), asEmail);
    expect(expectOk(fresh.rest).email).toBe(email.rest);
    // with a bearer token: new tokens for the same session, no cookies (behaviour.md §2.2)
    const byBearer = await onAllSurfaces(d, (s) => ({ op: 'session', creds: { bearer: expectOk(rotated[s]).access_token } }), asEmail);
    for (const s of ['rest', 'graphql', 'grpc'] as const) expect(byBearer[s].cookies).toEqual([]);
    expect(expectOk(byBearer.rest).message).toBe('Session token refreshed');
  });

  it('logout ends only the current session and clears the cookies', async () => {
    const a = perSurface(() => ({ token: '', cookie: '' }));
    const b = perSurface(() => ({ token: '', cookie: '' }));
    for (const s of ['rest', 'graphql', 'grpc'] as const) { a[s] = await login(s); b[s] = await login(s); }
    const out = await onAllSurfaces(d, (s) => ({ op: 'logout', creds: { cookie: a[s].cookie } }));
    expect(expectOk(out.rest)).toEqual({ message: 'Logged out successfully' });
    for (const s of ['rest', 'graphql', 'grpc'] as const) {
      expect(cookieValue(out[s].cookies, 'cookie_session')).toBe('');
      expect(cookieValue(out[s].cookies, 'cookie_session_domain')).toBe('');
    }
    const refused = await onAllSurfaces(d, (s) => ({ op: 'profile', creds: { cookie: a[s].cookie } }));
    expectError(refused.rest, 'unauthenticated', 'unauthorized');
    const tokenRefused = await onAllSurfaces(d, (s) => ({ op: 'profile', creds: { bearer: a[s].token } }));
    expectError(tokenRefused.grpc, 'unauthenticated', 'unauthorized');
    const otherSession = await onAllSurfaces(d, (s) => ({ op: 'profile', creds: { bearer: b[s].token } }), asEmail);
    expect(expectOk(otherSession.rest).email).toBe(email.rest);
    const byBearer = await onAllSurfaces(d, (s) => ({ op: 'logout', creds: { bearer: b[s].token } }));
    expect(expectOk(byBearer.grpc).message).toBe('Logged out successfully');
    const again = await onAllSurfaces(d, (s) => ({ op: 'logout', creds: { bearer: b[s].token } }));
    expectError(again.rest, 'unauthenticated', 'unauthorized');
  });

  it('a refresh token is issued only with offline_access, and revoke with it ends the session', async () => {
    const without = await onAllSurfaces(d, (s) => ({ op: 'login', args: { email: email[s], password: PASSWORD, scope: ['openid', 'email'] } }), asEmail);
    expect(expectOk(without.rest).refresh_token).toBeNull();
    const withOffline = await onAllSurfaces(d, (s) => ({ op: 'login', args: { email: email[s], password: PASSWORD, scope: ['openid', 'email', 'profile', 'offline_access'] } }), asEmail);
    for (const s of ['rest', 'graphql', 'grpc'] as const) expect(typeof expectOk(withOffline[s]).refresh_token).toBe('string');
    const claims = await onAllSurfaces(d, (s) => ({ op: 'validate_jwt_token', args: { token_type: 'refresh_token', token: expectOk(withOffline[s]).refresh_token } }), asEmail);
    expect(expectOk(claims.rest).claims).toMatchObject({ token_type: 'refresh_token', scope: ['openid', 'email', 'profile', 'offline_access'] });
    const revoked = await onAllSurfaces(d, (s) => ({ op: 'revoke', args: { refresh_token: expectOk(withOffline[s]).refresh_token } }));
    expect(expectOk(revoked.rest)).toEqual({ message: 'Token revoked' });
    const dead = await onAllSurfaces(d, (s) => ({ op: 'profile', creds: { bearer: expectOk(withOffline[s]).access_token } }));
    expectError(dead.rest, 'unauthenticated', 'unauthorized');
    const twice = await onAllSurfaces(d, (s) => ({ op: 'revoke', args: { refresh_token: expectOk(withOffline[s]).refresh_token } }));
    expectError(twice.rest, 'not_found', 'token not found');
    // GraphQL declares `refresh_token: String!` (graphql.md §3.2), so there the omission is a validation error
    expectError(await perform('rest', d, { op: 'revoke', args: {} }), 'invalid_argument', 'missing refresh token');
    expectError(await perform('grpc', d, { op: 'revoke', args: {} }), 'invalid_argument', 'missing refresh token');
    const gqlMissing = await perform('graphql', d, { op: 'revoke', args: {} });
    expect(gqlMissing.ok ? 'ok' : gqlMissing.code).toBe('invalid_argument');
    const garbage = await onAllSurfaces(d, () => ({ op: 'revoke', args: { refresh_token: 'x.y.z' } }));
    expectError(garbage.rest, 'invalid_argument', 'invalid token');
  });

  it('an email change ends every session and clears the cookies; the new email logs in', async () => {
    const a = perSurface(() => ({ token: '', cookie: '' }));
    const b = perSurface(() => ({ token: '', cookie: '' }));
    for (const s of ['rest', 'graphql', 'grpc'] as const) { a[s] = await login(s); b[s] = await login(s); }
    const next = perSurface((s) => freshEmail(`${mode}-${s}-new`));
    const changed = await onAllSurfaces(d, (s) => ({ op: 'update_profile', args: { email: next[s].toUpperCase() }, creds: { bearer: a[s].token } }));
    expect(expectOk(changed.rest)).toEqual({ message: 'Profile details updated successfully.' });
    for (const s of ['rest', 'graphql', 'grpc'] as const) expect(cookieValue(changed[s].cookies, 'cookie_session')).toBe('');
    const gone = await onAllSurfaces(d, (s) => ({ op: 'profile', creds: { bearer: a[s].token } }));
    expectError(gone.rest, 'unauthenticated', 'unauthorized');
    const otherGone = await onAllSurfaces(d, (s) => ({ op: 'profile', creds: { cookie: b[s].cookie } }));
    expectError(otherGone.rest, 'unauthenticated', 'unauthorized');
    const oldEmail = await onAllSurfaces(d, (s) => ({ op: 'login', args: { email: email[s], password: PASSWORD } }));
    expectError(oldEmail.rest, 'unauthenticated', 'invalid credentials');
    for (const s of ['rest', 'graphql', 'grpc'] as const) email[s] = next[s];
    const fresh = await onAllSurfaces(d, (s) => ({ op: 'login', args: { email: email[s], password: PASSWORD } }), asEmail);
    expect(expectOk(fresh.grpc).user.email).toBe(next.grpc);
  });

  it('deactivate_account: message, cookies cleared, login refused, old token refused', async () => {
    const creds = perSurface(() => ({ token: '', cookie: '' }));
    for (const s of ['rest', 'graphql', 'grpc'] as const) creds[s] = await login(s);
    const off = await onAllSurfaces(d, (s) => ({ op: 'deactivate_account', creds: { bearer: creds[s].token } }));
    expect(expectOk(off.rest)).toEqual({ message: 'user account deactivated successfully' });
    for (const s of ['rest', 'graphql', 'grpc'] as const) expect(cookieValue(off[s].cookies, 'cookie_session')).toBe('');
    const login2 = await onAllSurfaces(d, (s) => ({ op: 'login', args: { email: email[s], password: PASSWORD } }));
    expectError(login2.rest, 'unauthenticated', 'invalid credentials');
    const profile = await onAllSurfaces(d, (s) => ({ op: 'profile', creds: { bearer: creds[s].token } }));
    expectError(profile.rest, 'unauthenticated', 'unauthorized');
    const cookie = await onAllSurfaces(d, (s) => ({ op: 'profile', creds: { cookie: creds[s].cookie } }));
    expectError(cookie.rest, 'unauthenticated', 'unauthorized');
  });

  it('JWKS and OpenID discovery answer on REST and gRPC alike, with issuer = --url', async () => {
    const jwksRes = await fetch(`${d.url}/.well-known/jwks.json`);
    expect(jwksRes.status).toBe(200);
    const jwks = (await jwksRes.json()) as { keys: unknown[] };
    expect(Array.isArray(jwks.keys)).toBe(true);
    // HS256 deployment: an HMAC secret is never published (behaviour.md §1.2)
    expect(JSON.stringify(jwks)).not.toMatch(/"k"\s*:/);
    expect(expectOk(await grpcRpc(d, 'GetJwks', {}))).toEqual(jwks);
    const discRes = await fetch(`${d.url}/.well-known/openid-configuration`);
    expect(discRes.status).toBe(200);
    const disc = (await discRes.json()) as Record<string, unknown>;
    expect(disc.issuer).toBe(d.url);
    expect(disc.jwks_uri).toBe(`${d.url}/.well-known/jwks.json`);
    expect(expectOk(await grpcRpc(d, 'GetOpenidConfiguration', {}))).toEqual(disc);
  });
});
