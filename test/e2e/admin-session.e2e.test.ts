/**
 * @module test/e2e/admin-session
 * The super-admin session (behaviour.md §5.1, §5.2, §10), in both modes, on REST, GraphQL and native
 * gRPC: admin login → the `service-admin` cookie → session refresh → AdminMeta → logout; the cookie
 * honoured by every service; the admin-secret lockout per client IP (the gateway resolves the client
 * IP from X-Forwarded-For under `--trusted-proxies`); `--disable-admin-header-auth`; and the
 * deprecated GraphQL operations' fixed errors (spec §4, graphql.md §1.3).
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createCallContext, createGrpcClient, serviceDescriptor } from '@gatehouse/rpc';
import { startDeployment, type Deployment } from '@gatehouse/testing';
import { gql, postJson, raw } from '../support/http.ts';

let ipSeq = 0;
/** A client IP no other request of this file used (the lockout is per IP). */
const freshIp = (): string => { ipSeq += 1; return `10.77.${Math.floor(ipSeq / 250)}.${(ipSeq % 250) + 1}`; };

const cookieOf = (res: { headers: Headers }, name: string): string | undefined =>
  res.headers.getSetCookie().find((c) => c.startsWith(`${name}=`));
const pair = (setCookie: string): string => setCookie.split(';')[0]!;

const DEPRECATED: Array<[string, string, string]> = [
  ['_update_env', 'mutation { _update_env(params: {}) { message } }', 'deprecated. please configure env via cli args'],
  ['_admin_signup', 'mutation { _admin_signup(params: {admin_secret: "x"}) { message } }', 'deprecated. please configure admin secret via cli args'],
  ['_generate_jwt_keys', 'mutation { _generate_jwt_keys(params: {type: "RS256"}) { secret } }', 'deprecated. please configure jwt keys via cli args'],
  ['_env', 'query { _env { CLIENT_ID } }', 'deprecated. please configure env via cli args'],
];

describe.each(['all', 'split'] as const)('admin session (%s)', (mode) => {
  let d: Deployment;
  const h = (ip: string, extra: Record<string, string> = {}) => ({ origin: d.url, 'x-forwarded-for': ip, ...extra });

  beforeAll(async () => {
    d = await startDeployment(mode, { flags: ['--trusted-proxies=127.0.0.1/32', '--admin-cookie-secure=false', '--roles=user,editor', '--protected-roles=owner'], readyTimeoutMs: 60_000 });
  }, 120_000);
  afterAll(async () => { await d?.stop(); });

  it('REST: login sets the cookie, session refreshes it, meta answers, logout ends it; every service honours it', async () => {
    const ip = freshIp();
    const wrong = await postJson(`${d.url}/v1/admin/login`, { admin_secret: 'not-the-secret' }, h(ip));
    expect({ status: wrong.status, body: wrong.body }).toEqual({ status: 401, body: { code: 'unauthenticated', message: 'invalid admin secret' } });
    const blank = await postJson(`${d.url}/v1/admin/login`, { admin_secret: '' }, h(ip));
    expect(blank.status).toBe(400);
    const typed = await postJson(`${d.url}/v1/admin/login`, { admin_secret: 42 }, h(ip));
    expect({ status: typed.status, code: typed.body.code }).toEqual({ status: 400, code: 'invalid_argument' });

    const login = await postJson(`${d.url}/v1/admin/login`, { admin_secret: d.adminSecret }, h(ip));
    expect({ status: login.status, body: login.body }).toEqual({ status: 200, body: { message: 'admin logged in successfully' } });
    const set = cookieOf(login, 'service-admin')!;
    expect(set).toMatch(/^service-admin=[A-Za-z0-9_-]{43};/);
    expect(set).toMatch(/; Path=\//);
    expect(set).toMatch(/; HttpOnly/);
    expect(set).toMatch(/; SameSite=Strict/);
    expect(set).toMatch(/; Max-Age=3600/);
    expect(set).not.toMatch(/Secure/);
    const cookie = pair(set);

    const session = await raw(`${d.url}/v1/admin/session`, { headers: h(ip, { cookie }) });
    expect({ status: session.status, body: session.body }).toEqual({ status: 200, body: { message: 'admin session refreshed successfully' } });
    expect(cookieOf(session, 'service-admin')).toMatch(new RegExp(`^${cookie}; .*Max-Age=3600`));

    const meta = await raw(`${d.url}/v1/admin/meta`, { headers: h(ip, { cookie }) });
    const publicMeta = await raw(`${d.url}/v1/meta`);
    expect(meta.status).toBe(200);
    expect(meta.body).toMatchObject({
      ...publicMeta.body,
      roles: ['user', 'editor'], default_roles: ['user'], protected_roles: ['owner'],
      is_email_service_enabled: false, is_sms_service_enabled: false,
      database_type: mode === 'all' ? 'sqlite' : 'postgres', env: 'production',
      authorization_engine: { is_enabled: true, store: mode === 'all' ? 'sqlite' : 'postgres', model_id: null },
    });
    expect(meta.body.social_providers).toHaveLength(10);
    expect(meta.body.social_providers[0]).toEqual({ provider: 'google', is_enabled: false, has_client_id: false, has_client_secret: false, scopes: ['openid', 'profile', 'email'] });

    // the cookie is an admin credential for authn's and authz's admin operations too
    const users = await postJson(`${d.url}/v1/admin/users`, {}, h(ip, { cookie }));
    expect(users.status).toBe(200);
    const model = await raw(`${d.url}/v1/admin/fga/model`, { headers: h(ip, { cookie }) });
    expect(model.status).not.toBe(401);

    const logout = await postJson(`${d.url}/v1/admin/logout`, {}, h(ip, { cookie }));
    expect({ status: logout.status, body: logout.body }).toEqual({ status: 200, body: { message: 'admin logged out successfully' } });
    expect(cookieOf(logout, 'service-admin')).toMatch(/^service-admin=; .*Max-Age=0/);
    for (const res of [
      await raw(`${d.url}/v1/admin/session`, { headers: h(ip, { cookie }) }),
      await postJson(`${d.url}/v1/admin/users`, {}, h(ip, { cookie })),
    ]) expect({ status: res.status, body: res.body }).toEqual({ status: 401, body: { code: 'unauthenticated', message: 'unauthorized' } });
  });

  it('GraphQL and gRPC: the same answers as REST', async () => {
    const ip = freshIp();
    const login = await gql(d.url, 'mutation($p: AdminLoginRequest!) { _admin_login(params: $p) { message } }', { p: { admin_secret: d.adminSecret } }, h(ip));
    expect(login.body).toEqual({ data: { _admin_login: { message: 'admin logged in successfully' } } });
    const cookie = pair(cookieOf(login, 'service-admin')!);
    expect(cookieOf(login, 'service-admin')).toMatch(/HttpOnly; SameSite=Strict/);
    const s = await gql(d.url, 'query { _admin_session { message } }', {}, h(ip, { cookie }));
    expect(s.body).toEqual({ data: { _admin_session: { message: 'admin session refreshed successfully' } } });
    const m = await gql(d.url, 'query { _admin_meta { roles env database_type social_providers { provider scopes } authorization_engine { is_enabled store model_id } } }', {}, h(ip, { cookie }));
    const rest = (await raw(`${d.url}/v1/admin/meta`, { headers: h(ip, { cookie }) })).body;
    expect(m.body.data._admin_meta).toEqual({
      roles: rest.roles, env: rest.env, database_type: rest.database_type, authorization_engine: rest.authorization_engine,
      social_providers: rest.social_providers.map((p: { provider: string; scopes: string[] }) => ({ provider: p.provider, scopes: p.scopes })),
    });
    const wrong = await gql(d.url, 'mutation { _admin_login(params: {admin_secret: "nope"}) { message } }', {}, h(ip));
    expect(wrong.body.errors.map((e: { message: string; extensions: { code: string } }) => [e.extensions.code, e.message])).toEqual([['UNAUTHENTICATED', 'invalid admin secret']]);
    const out = await gql(d.url, 'mutation { _admin_logout { message } }', {}, h(ip, { cookie }));
    expect(out.body).toEqual({ data: { _admin_logout: { message: 'admin logged out successfully' } } });
    const after = await gql(d.url, 'query { _admin_session { message } }', {}, h(ip, { cookie }));
    expect(after.body.errors[0].extensions.code).toBe('UNAUTHENTICATED');

    const grpc = createGrpcClient(serviceDescriptor('admin'), { address: d.grpcAddress });
    try {
      // the public gRPC port sees the socket peer (127.0.0.1) as the client IP: two calls only, far from the lockout
      expect(await grpc.call('AdminLogin', { admin_secret: d.adminSecret }, createCallContext({ protocol: 'grpc' }))).toEqual({ message: 'admin logged in successfully' });
      const meta = await grpc.call('AdminMeta', {}, createCallContext({ protocol: 'grpc', headers: { 'x-service-admin-secret': d.adminSecret } }));
      expect(meta).toEqual(rest);
      await expect(grpc.call('AdminLogin', { admin_secret: 'nope' }, createCallContext({ protocol: 'grpc' }))).rejects.toMatchObject({ code: 'unauthenticated', message: 'invalid admin secret' });
    } finally {
      grpc.close();
    }
  });

  it('locks an IP after 10 wrong secrets (login and header alike): 429 even for the right secret; other IPs and cookie sessions are unaffected', async () => {
    const ip = freshIp();
    const held = pair(cookieOf(await postJson(`${d.url}/v1/admin/login`, { admin_secret: d.adminSecret }, h(ip)), 'service-admin')!);
    for (let i = 0; i < 5; i++) expect((await postJson(`${d.url}/v1/admin/login`, { admin_secret: `wrong-${i}` }, h(ip))).status).toBe(401);
    // the header on other services' admin routes counts too (authn, authz)
    for (let i = 0; i < 3; i++) expect((await postJson(`${d.url}/v1/admin/users`, {}, h(ip, { 'x-service-admin-secret': `wrong-${i}` }))).status).toBe(401);
    for (let i = 0; i < 2; i++) expect((await raw(`${d.url}/v1/admin/fga/model`, { headers: h(ip, { 'x-service-admin-secret': `wrong-${i}` }) })).status).toBe(401);

    const locked = await postJson(`${d.url}/v1/admin/login`, { admin_secret: d.adminSecret }, h(ip));
    expect({ status: locked.status, body: locked.body }).toEqual({ status: 429, body: { code: 'resource_exhausted', message: 'too many failed attempts, please try again later' } });
    expect(Number(locked.headers.get('retry-after'))).toBeGreaterThan(800);
    const header = await postJson(`${d.url}/v1/admin/users`, {}, h(ip, { 'x-service-admin-secret': d.adminSecret }));
    expect({ status: header.status, code: header.body.code }).toEqual({ status: 429, code: 'resource_exhausted' });
    const g = await gql(d.url, 'query { _admin_meta { env } }', {}, h(ip, { 'x-service-admin-secret': d.adminSecret }));
    expect(g.body.errors[0].extensions.code).toBe('RESOURCE_EXHAUSTED');

    // the cookie session from before the lockout still works from the locked IP
    expect((await postJson(`${d.url}/v1/admin/users`, {}, h(ip, { cookie: held }))).status).toBe(200);
    expect((await raw(`${d.url}/v1/admin/session`, { headers: h(ip, { cookie: held }) })).status).toBe(200);
    // another IP is fine
    const other = freshIp();
    expect((await postJson(`${d.url}/v1/admin/login`, { admin_secret: d.adminSecret }, h(other))).status).toBe(200);
    expect((await postJson(`${d.url}/v1/admin/users`, {}, h(other, { 'x-service-admin-secret': d.adminSecret }))).status).toBe(200);
  });

  it('the deprecated GraphQL operations answer their fixed errors to anyone', async () => {
    for (const [field, query, message] of DEPRECATED) {
      const res = await gql(d.url, query, {}, h(freshIp()));
      expect({ field, status: res.status, errors: res.body.errors.map((e: { message: string; extensions: { code: string } }) => [e.extensions.code, e.message]) })
        .toEqual({ field, status: 200, errors: [['UNIMPLEMENTED', message]] });
    }
  });
});

describe.each(['all', 'split'] as const)('--disable-admin-header-auth (%s)', (mode) => {
  let d: Deployment;
  beforeAll(async () => {
    d = await startDeployment(mode, { flags: ['--disable-admin-header-auth=true', '--admin-cookie-secure=false'], readyTimeoutMs: 60_000 });
  }, 120_000);
  afterAll(async () => { await d?.stop(); });

  it('refuses the admin-secret header on every service and surface; the cookie from admin/login works', async () => {
    const header = { origin: d.url, 'x-service-admin-secret': d.adminSecret };
    for (const res of [
      await raw(`${d.url}/v1/admin/meta`, { headers: header }),
      await postJson(`${d.url}/v1/admin/users`, {}, header),
      await raw(`${d.url}/v1/admin/fga/model`, { headers: header }),
    ]) expect({ status: res.status, body: res.body }).toEqual({ status: 401, body: { code: 'unauthenticated', message: 'unauthorized' } });
    const g = await gql(d.url, 'query { _users { pagination { total } } }', {}, header);
    expect(g.body.errors[0].extensions.code).toBe('UNAUTHENTICATED');
    const grpc = createGrpcClient(serviceDescriptor('authn'), { address: d.grpcAddress });
    try {
      await expect(grpc.call('Users', {}, createCallContext({ protocol: 'grpc', headers: { 'x-service-admin-secret': d.adminSecret } }))).rejects.toMatchObject({ code: 'unauthenticated' });
    } finally {
      grpc.close();
    }
    const login = await postJson(`${d.url}/v1/admin/login`, { admin_secret: d.adminSecret }, { origin: d.url });
    const cookie = pair(cookieOf(login, 'service-admin')!);
    expect((await postJson(`${d.url}/v1/admin/users`, {}, { origin: d.url, cookie })).status).toBe(200);
    expect((await raw(`${d.url}/v1/admin/meta`, { headers: { cookie } })).status).toBe(200);
  });
});
