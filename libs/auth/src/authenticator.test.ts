import { describe, it, expect, beforeEach } from '@jest/globals';
import { createJwtSigner, sha256Hex } from '@gatehouse/crypto';
import { createCallContext, type CallContext } from '@gatehouse/rpc';
import { createAuthenticator, RESOLVED_CALLER_MAX_HEADER_CHARS, RESOLVED_CALLER_TTL_SECONDS, type AuthenticatorOptions } from './authenticator.ts';
import { createCachedActivityCheck, createCachedSessionStore } from './session-cache.ts';
import { createMemoryAdminAccessStore } from './admin-access.ts';
import { createMemorySessionStore, type SessionRecord, type SessionStore } from './session-store.ts';

const ISS = 'https://auth.example.com';
let now = 2_000_000;
const clock = () => now;
const jwt = createJwtSigner({ type: 'HS256', secret: 'test-secret-test-secret-test-secret' });
const ctx = (headers: Record<string, string>) => createCallContext({ headers });

describe('createAuthenticator (behaviour.md §2.3)', () => {
  let sessions: ReturnType<typeof createMemorySessionStore>;
  let session: SessionRecord;
  let token: string;
  let opts: AuthenticatorOptions;
  const make = (over: Partial<AuthenticatorOptions> = {}) => createAuthenticator({ ...opts, ...over });
  const sign = (claims: Record<string, unknown>, exp = 600) =>
    jwt.sign({ iss: ISS, sub: 'u1', nonce: session.id, token_type: 'access_token', roles: ['user'], scope: ['openid'], login_method: 'basic_auth', ...claims }, { expiresInSeconds: exp, nowSeconds: now });

  beforeEach(async () => {
    now = 2_000_000;
    sessions = createMemorySessionStore({ clock });
    session = { id: 's1', userId: 'u1', handleHash: sha256Hex('handle-1'), loginMethod: 'basic_auth', roles: ['user', 'admin'], scope: ['openid', 'email'], authTime: now, expiresAt: now + 3600, createdAt: now };
    await sessions.create(session);
    token = await sign({});
    opts = { jwt, sessions, issuer: ISS, adminSecret: 'the-admin-secret', disableAdminHeaderAuth: false, clientId: 'cid', clock };
  });

  it('accepts a valid bearer token with any scheme case and returns the token roles', async () => {
    for (const scheme of ['Bearer', 'bearer', 'BEARER']) {
      const caller = await make().requireUser(ctx({ authorization: `${scheme} ${token}` }));
      expect(caller).toMatchObject({ kind: 'user', userId: 'u1', sessionId: 's1', roles: ['user'], scope: ['openid'], loginMethod: 'basic_auth', via: 'bearer' });
    }
  });

  it('refuses a malformed authorization header, with no cookie fallback', async () => {
    const a = make();
    for (const h of [`Basic ${token}`, token, `Bearer ${token} extra`, 'Bearer', `Token ${token}`]) {
      await expect(a.requireUser(ctx({ authorization: h, cookie: 'cookie_session=handle-1' }))).rejects.toMatchObject({ code: 'unauthenticated', message: 'unauthorized' });
    }
  });

  it('refuses an invalid bearer token even when a valid cookie is present', async () => {
    await expect(make().requireUser(ctx({ authorization: `Bearer ${token}x`, cookie: 'cookie_session=handle-1' }))).rejects.toMatchObject({ code: 'unauthenticated' });
  });

  it('refuses wrong iss, wrong token_type, expired tokens and tokens of a deleted session', async () => {
    const a = make();
    const bad = [await sign({ iss: 'https://evil.example' }), await sign({ token_type: 'id_token' }), await sign({ nonce: undefined })];
    for (const t of bad) await expect(a.requireUser(ctx({ authorization: `Bearer ${t}` }))).rejects.toMatchObject({ code: 'unauthenticated' });
    now += 601;
    await expect(a.requireUser(ctx({ authorization: `Bearer ${token}` }))).rejects.toMatchObject({ code: 'unauthenticated' });
    now -= 601;
    await sessions.delete('s1');
    await expect(a.requireUser(ctx({ authorization: `Bearer ${token}` }))).rejects.toMatchObject({ code: 'unauthenticated' });
  });

  it('refuses a DPoP-bound token (cnf.jkt) presented as a bearer token, for users and service accounts (RFC 9449 §7.1)', async () => {
    const bound = await sign({ cnf: { jkt: 'NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs' } });
    await expect(make().requireUser(ctx({ authorization: `Bearer ${bound}` }))).rejects.toMatchObject({ code: 'unauthenticated', reason: 'bearer_dpop_bound' });
    const cc = { id: 'cc1', userId: 'svc', handleHash: sha256Hex('h-cc'), loginMethod: 'client_credentials', roles: [], scope: [], authTime: now, expiresAt: now + 600, createdAt: now };
    await sessions.create(cc);
    const sa = (claims: Record<string, unknown>) => sign({ sub: 'service_account:svc', nonce: 'cc1', ...claims });
    expect(await make().resolveCaller(ctx({ authorization: `Bearer ${await sa({})}` }))).toMatchObject({ kind: 'service_account', clientId: 'svc' });
    await expect(make().resolveCaller(ctx({ authorization: `Bearer ${await sa({ cnf: { jkt: 'x' } })}` }))).rejects.toMatchObject({ code: 'unauthenticated', reason: 'bearer_dpop_bound' });
  });

  it('refuses a token whose session belongs to another user, and inactive users', async () => {
    const t = await sign({ sub: 'u2' });
    await expect(make().requireUser(ctx({ authorization: `Bearer ${t}` }))).rejects.toMatchObject({ code: 'unauthenticated' });
    const inactive = make({ users: { isActive: async () => false } });
    await expect(inactive.requireUser(ctx({ authorization: `Bearer ${token}` }))).rejects.toMatchObject({ code: 'unauthenticated' });
    await expect(inactive.requireUser(ctx({ cookie: 'cookie_session=handle-1' }))).rejects.toMatchObject({ code: 'unauthenticated' });
  });

  it('resolves cookie_session, then cookie_session_domain, with the session roles', async () => {
    const a = make();
    expect(await a.requireUser(ctx({ cookie: 'cookie_session=handle-1' }))).toMatchObject({ via: 'cookie', sessionId: 's1', roles: ['user', 'admin'], scope: ['openid', 'email'] });
    expect(await a.requireUser(ctx({ cookie: 'cookie_session_domain=handle-1' }))).toMatchObject({ via: 'cookie', sessionId: 's1' });
    expect(await a.requireUser(ctx({ cookie: 'cookie_session=stale; cookie_session_domain=handle-1' }))).toMatchObject({ sessionId: 's1' });
    await expect(a.requireUser(ctx({ cookie: 'cookie_session=nope' }))).rejects.toMatchObject({ code: 'unauthenticated', message: 'unauthorized' });
    await expect(a.requireUser(ctx({}))).rejects.toMatchObject({ code: 'unauthenticated', message: 'unauthorized' });
    now += 3600;
    await expect(a.requireUser(ctx({ cookie: 'cookie_session=handle-1' }))).rejects.toMatchObject({ code: 'unauthenticated' });
  });

  it('accepts the admin secret header in constant time unless disabled', async () => {
    expect(await make().requireAdmin(ctx({ 'x-service-admin-secret': 'the-admin-secret' }))).toEqual({ kind: 'admin', via: 'header' });
    await expect(make().requireAdmin(ctx({ 'x-service-admin-secret': 'the-admin-secreT' }))).rejects.toMatchObject({ code: 'unauthenticated', message: 'unauthorized' });
    await expect(make({ disableAdminHeaderAuth: true }).requireAdmin(ctx({ 'x-service-admin-secret': 'the-admin-secret' }))).rejects.toMatchObject({ code: 'unauthenticated' });
    await expect(make().requireAdmin(ctx({ authorization: `Bearer ${token}` }))).rejects.toMatchObject({ code: 'unauthenticated' });
  });

  it('accepts the service-admin cookie through the admin session hook', async () => {
    const a = make({ disableAdminHeaderAuth: true, adminSessions: { isValid: async (h) => h === 'adm' } });
    expect(await a.requireAdmin(ctx({ cookie: 'service-admin=adm' }))).toEqual({ kind: 'admin', via: 'cookie' });
    await expect(a.requireAdmin(ctx({ cookie: 'service-admin=other' }))).rejects.toMatchObject({ code: 'unauthenticated' });
    await expect(make().requireAdmin(ctx({ cookie: 'service-admin=adm' }))).rejects.toMatchObject({ code: 'unauthenticated' });
  });

  it('resolveCaller prefers a super-admin credential, then a user credential', async () => {
    const a = make();
    expect(await a.resolveCaller(ctx({ 'x-service-admin-secret': 'the-admin-secret', authorization: `Bearer ${token}` }))).toEqual({ kind: 'admin', via: 'header' });
    expect(await a.resolveCaller(ctx({ authorization: `Bearer ${token}` }))).toMatchObject({ kind: 'user', userId: 'u1' });
    await expect(a.resolveCaller(ctx({}))).rejects.toMatchObject({ code: 'unauthenticated' });
  });
});

describe('resolved bearer callers over the credential caches (all-in-one)', () => {
  let inner: ReturnType<typeof createMemorySessionStore>;
  let reads: number;
  let active: boolean;
  let activityReads: number;
  let external: number;
  let token: string;
  const bearer = () => ctx({ authorization: `Bearer ${token}` });

  /** The authenticator over a cached, counting session store and activity check, as buildAuthn wires them. */
  function build(over: Partial<AuthenticatorOptions> = {}) {
    const counting: SessionStore = { ...inner, get: async (id) => { reads++; return inner.get(id); } };
    const sessions = createCachedSessionStore(counting, { clock, externalVersion: () => external });
    const users = createCachedActivityCheck({ isActive: async () => { activityReads++; return active; } });
    const a = createAuthenticator({ jwt, sessions, users, issuer: ISS, adminSecret: 'the-admin-secret', disableAdminHeaderAuth: false, clientId: 'cid', clock, ...over });
    return { a, sessions, users };
  }

  beforeEach(async () => {
    now = 2_000_000;
    reads = 0;
    activityReads = 0;
    active = true;
    external = 1;
    inner = createMemorySessionStore({ clock });
    await inner.create({ id: 's1', userId: 'u1', handleHash: sha256Hex('h1'), loginMethod: 'basic_auth', roles: ['user'], scope: ['openid'], authTime: now, expiresAt: now + 3600, createdAt: now });
    token = await jwt.sign({ iss: ISS, sub: 'u1', nonce: 's1', token_type: 'access_token', roles: ['user'], scope: ['openid'] }, { expiresInSeconds: 600, nowSeconds: now });
  });

  it('answers a repeated token without reading again, and hands out a frozen caller', async () => {
    const { a } = build();
    const first = await a.requireUser(bearer());
    const again = await a.requireUser(bearer());
    expect(again).toBe(first);
    expect(reads).toBe(1);
    expect(activityReads).toBe(1);
    expect(Object.isFrozen(again) && Object.isFrozen(again.roles) && Object.isFrozen(again.session) && Object.isFrozen(again.claims)).toBe(true);
    expect(() => { (again.roles as string[]).push('admin'); }).toThrow(TypeError);
    expect((await a.requireUser(bearer())).roles).toEqual(['user']);
  });

  it('refuses the very next request after a logout, a rotation or a deactivation (behaviour.md §2.1)', async () => {
    const { a, sessions, users } = build();
    await a.requireUser(bearer());
    const s1 = (await inner.get('s1'))!;
    await sessions.update({ ...s1, roles: ['user'] }); // rotation / refresh: resolved again, still valid
    await a.requireUser(bearer());
    expect(reads).toBe(2);
    active = false;
    users.invalidate('u1'); // what a committed revoke or deactivation does
    await expect(a.requireUser(bearer())).rejects.toMatchObject({ code: 'unauthenticated', message: 'unauthorized' });
    active = true;
    users.invalidate('u1');
    await a.requireUser(bearer());
    await sessions.delete('s1'); // logout
    await expect(a.requireUser(bearer())).rejects.toMatchObject({ code: 'unauthenticated' });
  });

  it('refuses after the token or the session expires, and resolves again past the TTL or an outside write', async () => {
    const { a } = build();
    const first = await a.requireUser(bearer());
    now += RESOLVED_CALLER_TTL_SECONDS;
    const second = await a.requireUser(bearer());
    expect(second).not.toBe(first); // resolved again (the session cache, on its own TTL, still answers)
    external++; // another process committed to the database file
    expect(await a.requireUser(bearer())).not.toBe(second);
    expect(reads).toBe(2); // the session cache was dropped too
    now += 600 - RESOLVED_CALLER_TTL_SECONDS; // the token's exp
    await expect(a.requireUser(bearer())).rejects.toMatchObject({ code: 'unauthenticated' });

    now = 2_000_000;
    const shortSession = build();
    await inner.update({ ...(await inner.get('s1'))!, expiresAt: now + 5 });
    await shortSession.a.requireUser(bearer());
    now += 5;
    await expect(shortSession.a.requireUser(bearer())).rejects.toMatchObject({ code: 'unauthenticated' });
  });

  it('does not remember a caller resolved while its session was deleted', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => { release = r; });
    const slow: SessionStore = { ...inner, get: async (id) => { const s = await inner.get(id); await gate; return s; } };
    const sessions = createCachedSessionStore(slow, { clock });
    const a = createAuthenticator({ jwt, sessions, issuer: ISS, adminSecret: 'the-admin-secret', disableAdminHeaderAuth: false, clientId: 'cid', clock });
    const inFlight = a.requireUser(bearer()); // read the session, not finished yet
    await new Promise((r) => setImmediate(r));
    await sessions.delete('s1');
    release();
    await inFlight; // it read the session before the delete
    await expect(a.requireUser(bearer())).rejects.toMatchObject({ code: 'unauthenticated' });
  });

  it('does not remember the caller of an oversized header (whitespace padding), but still accepts it', async () => {
    const { a } = build();
    const padded = (): CallContext => ctx({ authorization: `Bearer${' '.repeat(RESOLVED_CALLER_MAX_HEADER_CHARS)}${token}` });
    const first = await a.requireUser(padded());
    expect(first).toMatchObject({ kind: 'user', userId: 'u1', via: 'bearer' });
    expect(await a.requireUser(padded())).not.toBe(first);
    expect(Object.isFrozen(first)).toBe(false);
  });

  it('resolves the caller of one call once: the auth guard and the handler share the answer', async () => {
    const { a } = build();
    const call = ctx({ authorization: `Bearer${' '.repeat(RESOLVED_CALLER_MAX_HEADER_CHARS)}${token}` });
    const first = await a.requireUser(call);
    expect(await a.requireUser(call)).toBe(first);
    // a refusal is the same refusal for the rest of the call
    const anonymous = ctx({});
    await expect(a.requireUser(anonymous)).rejects.toMatchObject({ code: 'unauthenticated' });
    await expect(a.requireUser(anonymous)).rejects.toMatchObject({ code: 'unauthenticated' });
  });

  it('remembers nothing when a store is not versioned (another process may write it)', async () => {
    const a = createAuthenticator({ jwt, sessions: inner, issuer: ISS, adminSecret: 'the-admin-secret', disableAdminHeaderAuth: false, clientId: 'cid', clock });
    expect(Object.isFrozen(await a.requireUser(bearer()))).toBe(false);
    await inner.delete('s1'); // not through any cache
    await expect(a.requireUser(bearer())).rejects.toMatchObject({ code: 'unauthenticated' });
  });
});

describe('admin-secret lockout on the header (behaviour.md §5.1, §10)', () => {
  it('10 wrong headers from one IP → 429 for that IP, the right secret too; other IPs and the cookie still pass', async () => {
    const store = createMemoryAdminAccessStore();
    const a = createAuthenticator({
      jwt: { verify: async () => { throw new Error('no tokens here'); } }, sessions: createMemorySessionStore(), issuer: 'http://x',
      adminSecret: 'the-admin-secret', disableAdminHeaderAuth: false, clientId: 'cid',
      adminSessions: { isValid: async (h) => h === 'live-handle' }, adminSecretFailures: store.failures,
    });
    const call = (ip: string, headers: Record<string, string>) => createCallContext({ headers, clientIp: ip });
    for (let i = 0; i < 10; i++) await expect(a.requireAdmin(call('10.1.1.1', { 'x-service-admin-secret': 'wrong' }))).rejects.toMatchObject({ code: 'unauthenticated' });
    await expect(a.requireAdmin(call('10.1.1.1', { 'x-service-admin-secret': 'the-admin-secret' }))).rejects.toMatchObject({ code: 'resource_exhausted' });
    await expect(a.requireAdmin(call('10.1.1.2', { 'x-service-admin-secret': 'the-admin-secret' }))).resolves.toEqual({ kind: 'admin', via: 'header' });
    await expect(a.requireAdmin(call('10.1.1.1', { cookie: 'service-admin=live-handle' }))).resolves.toEqual({ kind: 'admin', via: 'cookie' });
  });

  it('counts a wrong secret once per call, however often the call asks', async () => {
    const store = createMemoryAdminAccessStore();
    const a = createAuthenticator({
      jwt: { verify: async () => { throw new Error('no tokens here'); } }, sessions: createMemorySessionStore(), issuer: 'http://x',
      adminSecret: 'the-admin-secret', disableAdminHeaderAuth: false, clientId: 'cid', adminSecretFailures: store.failures,
    });
    const ctx = createCallContext({ headers: { 'x-service-admin-secret': 'wrong' }, clientIp: '10.2.2.2' });
    await expect(a.requireAdmin(ctx)).rejects.toMatchObject({ code: 'unauthenticated' });
    await expect(a.resolveCaller(ctx)).rejects.toMatchObject({ code: 'unauthenticated' });
    expect(await store.failures.attemptsSince('10.2.2.2', 0)).toHaveLength(1);
  });
});
