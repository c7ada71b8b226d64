/**
 * @module test/e2e/oauth
 * The OAuth 2.0 / OpenID Provider (issue 18) in both modes, driven by a real relying party
 * (`openid-client`): discovery; the authorization code flow with PKCE (the browser session obtained by
 * POST /v1/login and carried into /authorize); ID token and userinfo; refresh rotation, the 10 s
 * double-submit exception and family revocation on reuse; code reuse refused and what it issued
 * revoked; a redirect URI one character off refused without a redirect; prompt=none without a session;
 * client_credentials with client_secret_basic, client_secret_post and private_key_jwt (a JWKS server
 * of the test's own signing assertions with jose) and a replayed jti; service-account tokens only
 * where behaviour.md §2.3 allows; a deactivated or deleted client's user tokens refused at once;
 * introspection and revocation; RP-initiated logout (GET, and POST with id_token_hint); authorizer-js
 * 3.0.1's getToken and revokeToken; and the client and trusted-issuer admin routes (behaviour.md §5.8)
 * on REST, GraphQL and gRPC; RFC 8693 token exchange for agents (issue 34).
 */
import http from 'node:http';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import * as oidc from 'openid-client';
import { SignJWT, exportJWK, generateKeyPair, decodeJwt } from 'jose';
import { Authorizer } from '@authorizerdev/authorizer-js';
import { createCallContext, createGrpcClient, serviceDescriptor } from '@gatehouse/rpc';
import { startDeployment, type Deployment } from '@gatehouse/testing';
import { gql, postJson, raw } from '../support/http.ts';
import { PASSWORD, freshEmail } from '../support/scenario.ts';
import { until } from '../support/until.ts';
import { waitForAudits } from './audit-support.ts';

const RP = 'http://127.0.0.1:9/rp';
const CALLBACK = `${RP}/callback`;
const LOGGED_OUT = `${RP}/logged-out`;

/** A JWKS server on 127.0.0.1 (the trusted issuer of private_key_jwt assertions): `/jwks.json`. */
async function startJwksServer(): Promise<{ url: string; sign(claims: Record<string, unknown>): Promise<string>; close(): Promise<void> }> {
  const { publicKey, privateKey } = await generateKeyPair('ES256');
  const jwk = { ...(await exportJWK(publicKey)), kid: 'k1', alg: 'ES256', use: 'sig' };
  const server = http.createServer((req, res) => {
    if (req.url === '/jwks.json') {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: [jwk] }));
      return;
    }
    res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  return {
    url,
    sign: (claims) => new SignJWT(claims).setProtectedHeader({ alg: 'ES256', kid: 'k1' }).sign(privateKey),
    close: () => new Promise((resolve) => { server.close(() => resolve()); }),
  };
}

describe.each(['all', 'split'] as const)('OAuth 2.0 / OpenID Provider (%s)', (mode) => {
  let d: Deployment;
  let jwks: Awaited<ReturnType<typeof startJwksServer>>;
  const admin = (): Record<string, string> => ({ origin: d.url, 'x-service-admin-secret': d.adminSecret });
  const adminPost = (route: string, body: unknown) => postJson(`${d.url}/v1/admin/${route}`, body, admin());
  let rp: { id: string; secret: string };
  let config: oidc.Configuration;

  /** A user with a browser session: the `cookie_session` cookie of POST /v1/login. */
  async function loggedIn(): Promise<{ email: string; cookie: string; userId: string }> {
    const email = freshEmail('oauth');
    const s = await postJson(`${d.url}/v1/signup`, { email, password: PASSWORD, confirm_password: PASSWORD }, { origin: d.url });
    expect(s.status).toBe(200);
    const login = await postJson(`${d.url}/v1/login`, { email, password: PASSWORD }, { origin: d.url });
    const cookie = login.headers.getSetCookie().map((c) => c.split(';')[0]!).find((c) => c.startsWith('cookie_session='))!;
    return { email, cookie, userId: login.body.user.id };
  }

  /** The code flow up to the callback URL, the session cookie carried into /authorize. */
  async function authorizeWith(cookie: string, extra: Record<string, string> = {}, cfg: oidc.Configuration = config) {
    const verifier = oidc.randomPKCECodeVerifier();
    const state = oidc.randomState();
    const nonce = oidc.randomNonce();
    const url = oidc.buildAuthorizationUrl(cfg, {
      redirect_uri: CALLBACK, scope: 'openid profile email offline_access', state, nonce,
      code_challenge: await oidc.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256', ...extra,
    });
    const res = await fetch(url, { redirect: 'manual', headers: { cookie } });
    return { res, location: res.headers.get('location') ?? '', verifier, state, nonce };
  }

  async function codeFlow(cookie: string, cfg: oidc.Configuration = config) {
    const a = await authorizeWith(cookie, {}, cfg);
    expect({ status: a.res.status, callback: a.location.startsWith(`${CALLBACK}?`), location: a.location }).toEqual({ status: 302, callback: true, location: a.location });
    const callback = new URL(a.location);
    const tokens = await oidc.authorizationCodeGrant(cfg, callback, { pkceCodeVerifier: a.verifier, expectedState: a.state, expectedNonce: a.nonce });
    return { tokens, callback, ...a };
  }

  beforeAll(async () => {
    jwks = await startJwksServer();
    d = await startDeployment(mode, { readyTimeoutMs: 60_000 });
    const created = await adminPost('create_client', {
      name: 'relying party', allowed_scopes: ['openid', 'profile', 'email', 'offline_access', 'read:docs'],
      redirect_uris: [CALLBACK], post_logout_redirect_uris: [LOGGED_OUT], grant_types: ['authorization_code', 'refresh_token', 'client_credentials'],
      is_first_party: true,
    });
    expect(created.status).toBe(200);
    rp = { id: created.body.client.client_id, secret: created.body.client_secret };
    config = await oidc.discovery(new URL(d.url), rp.id, { redirect_uris: [CALLBACK] }, oidc.ClientSecretBasic(rp.secret), { execute: [oidc.allowInsecureRequests] });
  }, 120_000);
  afterAll(async () => {
    await d?.stop();
    await jwks?.close();
  });

  it('discovery lists exactly the served endpoints with their capabilities, and each answers', async () => {
    const m = config.serverMetadata();
    expect(m).toMatchObject({
      issuer: d.url, authorization_endpoint: `${d.url}/authorize`, token_endpoint: `${d.url}/oauth/token`,
      userinfo_endpoint: `${d.url}/userinfo`, revocation_endpoint: `${d.url}/oauth/revoke`, introspection_endpoint: `${d.url}/oauth/introspect`,
      end_session_endpoint: `${d.url}/logout`, code_challenge_methods_supported: ['S256'],
    });
    for (const url of [m.authorization_endpoint, m.token_endpoint, m.userinfo_endpoint, m.revocation_endpoint, m.introspection_endpoint, m.end_session_endpoint]) {
      expect({ url, status: (await raw(String(url), { redirect: 'manual' })).status }).not.toEqual({ url, status: 404 });
    }
  });

  it('code + PKCE: ID token (nonce, at_hash, auth_time, amr, sid) and userinfo; refresh rotation, double submit, family revocation', async () => {
    const user = await loggedIn();
    const { tokens } = await codeFlow(user.cookie);
    const claims = tokens.claims()!;
    expect(claims).toMatchObject({ iss: d.url, aud: rp.id, sub: user.userId, amr: ['pwd'], auth_time: expect.any(Number), sid: expect.any(String), at_hash: expect.any(String) });
    expect(tokens.refresh_token).toEqual(expect.any(String));
    const info = await oidc.fetchUserInfo(config, tokens.access_token, user.userId);
    expect(info).toMatchObject({ sub: user.userId, email: user.email, email_verified: true });

    // rotation: a new refresh token each time; the retired one is refused
    const r1 = await oidc.refreshTokenGrant(config, tokens.refresh_token!);
    expect(r1.refresh_token).not.toBe(tokens.refresh_token);
    // double submit of the immediate predecessor within 10 s: invalid_grant, the family lives on
    await expect(oidc.refreshTokenGrant(config, tokens.refresh_token!)).rejects.toMatchObject({ error: 'invalid_grant' });
    const r2 = await oidc.refreshTokenGrant(config, r1.refresh_token!);
    expect((await oidc.tokenIntrospection(config, r2.access_token)).active).toBe(true);
    // an older retired token (not the immediate predecessor): the whole family is revoked
    await expect(oidc.refreshTokenGrant(config, tokens.refresh_token!)).rejects.toMatchObject({ error: 'invalid_grant' });
    await expect(oidc.refreshTokenGrant(config, r2.refresh_token!)).rejects.toMatchObject({ error: 'invalid_grant' });
    expect((await oidc.tokenIntrospection(config, r2.access_token)).active).toBe(false);
  });

  it('a reused code is refused and the tokens it issued are revoked', async () => {
    const user = await loggedIn();
    const first = await codeFlow(user.cookie);
    expect((await oidc.tokenIntrospection(config, first.tokens.access_token)).active).toBe(true);
    await expect(oidc.authorizationCodeGrant(config, first.callback, { pkceCodeVerifier: first.verifier, expectedState: first.state, expectedNonce: first.nonce }))
      .rejects.toMatchObject({ error: 'invalid_grant' });
    expect((await oidc.tokenIntrospection(config, first.tokens.access_token)).active).toBe(false);
    const info = await raw(`${d.url}/userinfo`, { headers: { authorization: `Bearer ${first.tokens.access_token}` } });
    expect(info.status).toBe(401);
  });

  it('a redirect URI one character off is refused on an error page, never redirected', async () => {
    const user = await loggedIn();
    const a = await authorizeWith(user.cookie, { redirect_uri: `${CALLBACK}x` });
    expect(a.res.status).toBe(400);
    expect(a.res.headers.get('location')).toBeNull();
    expect(await a.res.text()).toContain('redirect_uri is not registered');
  });

  it('prompt=none without a session → login_required at the redirect URI; no session → the hosted login page', async () => {
    const none = await authorizeWith('', { prompt: 'none' });
    expect(none.res.status).toBe(302);
    const back = new URL(none.location);
    expect(`${back.origin}${back.pathname}`).toBe(CALLBACK);
    expect(back.searchParams.get('error')).toBe('login_required');
    expect(back.searchParams.get('state')).toBe(none.state);
    const login = await authorizeWith('');
    expect(login.res.status).toBe(302);
    const page = new URL(login.location);
    expect(page.pathname).toBe('/app/login');
    expect(page.searchParams.get('return_to')!.startsWith('/authorize?')).toBe(true);
  });

  it('client_credentials with client_secret_basic and client_secret_post; the token works only for check_permissions, list_permissions and meta', async () => {
    const basic = await oidc.clientCredentialsGrant(config, { scope: 'read:docs' });
    expect(decodeJwt(basic.access_token)).toMatchObject({ sub: `service_account:${rp.id}`, aud: rp.id, scope: 'read:docs' });
    const postConfig = new oidc.Configuration(config.serverMetadata(), rp.id, {}, oidc.ClientSecretPost(rp.secret));
    oidc.allowInsecureRequests(postConfig);
    const post = await oidc.clientCredentialsGrant(postConfig);
    const bearer = { origin: d.url, authorization: `Bearer ${post.access_token}` };
    // accepted by check_permissions (the engine is off here, so its answer is the engine's, not 401)
    const check = await postJson(`${d.url}/v1/check_permissions`, { checks: [{ relation: 'viewer', object: 'doc:1' }] }, bearer);
    expect(check.status).not.toBe(401);
    expect((await raw(`${d.url}/v1/meta`, { headers: bearer })).status).toBe(200);
    for (const route of ['session', 'update_profile', 'logout']) {
      const res = await postJson(`${d.url}/v1/${route}`, {}, bearer);
      expect({ route, status: res.status, body: res.body }).toEqual({ route, status: 401, body: { code: 'unauthenticated', message: 'unauthorized' } });
    }
    const profile = await raw(`${d.url}/v1/profile`, { headers: bearer });
    expect({ status: profile.status, body: profile.body }).toEqual({ status: 401, body: { code: 'unauthenticated', message: 'unauthorized' } });
    expect((await raw(`${d.url}/userinfo`, { headers: bearer })).status).toBe(401);
    expect((await oidc.tokenIntrospection(config, post.access_token)).active).toBe(true);
    await expect(oidc.clientCredentialsGrant(new oidc.Configuration(config.serverMetadata(), rp.id, {}, oidc.ClientSecretPost('wrong'))))
      .rejects.toBeDefined();
  });

  it('RFC 8693 token exchange (issue 34) by openid-client: act nested per hop, scope attenuated, RFC 8707 audience, the audit names the agent, and it ends with the user session', async () => {
    const TE = 'urn:ietf:params:oauth:grant-type:token-exchange';
    const AT = 'urn:ietf:params:oauth:token-type:access_token';
    const agent = async (name: string) => {
      const made = await adminPost('create_client', { name, allowed_scopes: ['openid', 'email', 'read:docs'], grant_types: ['client_credentials', TE] });
      expect(made.status).toBe(200);
      const cfg = new oidc.Configuration(config.serverMetadata(), made.body.client.client_id, {}, oidc.ClientSecretBasic(made.body.client_secret));
      oidc.allowInsecureRequests(cfg);
      return { id: made.body.client.client_id as string, cfg };
    };
    const [bot, hop] = [await agent('agent-a'), await agent('agent-b')];
    const email = freshEmail('delegate');
    expect((await postJson(`${d.url}/v1/signup`, { email, password: PASSWORD, confirm_password: PASSWORD }, { origin: d.url })).status).toBe(200);
    const login = await postJson(`${d.url}/v1/login`, { email, password: PASSWORD }, { origin: d.url });
    const userToken = login.body.access_token as string;
    const userId = login.body.user.id as string;

    const actor = await oidc.clientCredentialsGrant(bot.cfg);
    const ex = await oidc.genericGrantRequest(bot.cfg, TE, {
      subject_token: userToken, subject_token_type: AT, actor_token: actor.access_token, actor_token_type: AT,
      resource: 'https://api.example.com/', scope: 'openid email profile',
    });
    expect(ex).toMatchObject({ issued_token_type: AT, token_type: 'bearer', scope: 'openid email' });
    expect(decodeJwt(ex.access_token)).toMatchObject({ sub: userId, aud: 'https://api.example.com/', client_id: bot.id, act: { sub: `service_account:${bot.id}` } });
    const profile = (t: string) => raw(`${d.url}/v1/profile`, { headers: { origin: d.url, authorization: `Bearer ${t}` } });
    expect((await profile(ex.access_token)).status).toBe(200);

    // a second hop nests the chain
    const second = await oidc.genericGrantRequest(hop.cfg, TE, { subject_token: ex.access_token, subject_token_type: AT });
    expect(decodeJwt(second.access_token).act).toMatchObject({ sub: `service_account:${hop.id}`, act: { sub: `service_account:${bot.id}` } });
    expect((await oidc.tokenIntrospection(hop.cfg, second.access_token))).toMatchObject({ active: true, act: { sub: `service_account:${hop.id}` } });

    // the audit row names the agent as actor and the user in its details
    // (both hops' rows: the second may reach the audit log after the first)
    const rows = await until('both token.exchanged rows', () => waitForAudits(d, (r) => r.action === 'token.exchanged' && r.metadata.user_id === userId, ['token.exchanged']), (r) => r.length >= 2);
    expect(rows.map((r) => r.actor_id).sort()).toEqual([bot.id, hop.id].sort());

    // the user signs out: every delegated token stops, and no new exchange is granted
    expect((await postJson(`${d.url}/v1/logout`, {}, { origin: d.url, authorization: `Bearer ${userToken}` })).status).toBe(200);
    expect((await profile(ex.access_token)).status).toBe(401);
    expect((await profile(second.access_token)).status).toBe(401);
    await expect(oidc.genericGrantRequest(bot.cfg, TE, { subject_token: userToken, subject_token_type: AT })).rejects.toMatchObject({ error: 'invalid_grant' });
  });

  it('client_credentials with private_key_jwt from a trusted issuer; a replayed jti is refused; deactivation kills live tokens', async () => {
    const sa = await adminPost('create_client', { name: 'workload', allowed_scopes: ['read:docs'] });
    const saId = sa.body.client.client_id as string;
    const issuer = await adminPost('add_trusted_issuer', {
      service_account_id: saId, name: 'test issuer', issuer_url: jwks.url, key_source_type: 'static_jwks_url', jwks_url: `${jwks.url}/jwks.json`,
      expected_aud: `${d.url}/oauth/token`, issuer_type: 'oidc', allowed_subjects: 'workload-a,workload-b',
    });
    expect(issuer.status).toBe(200);
    const assertion = (sub: string, jti: string = randomUUID()) => jwks.sign({ iss: jwks.url, sub, aud: `${d.url}/oauth/token`, jti, exp: Math.floor(Date.now() / 1000) + 60 });
    let next = '';
    const withAssertion: oidc.ClientAuth = (_as, _client, body) => {
      body.set('client_assertion_type', 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer');
      body.set('client_assertion', next);
    };
    const jwtConfig = new oidc.Configuration(config.serverMetadata(), saId, {}, withAssertion);
    oidc.allowInsecureRequests(jwtConfig);
    next = await assertion('workload-a', 'jti-1');
    const ok = await oidc.clientCredentialsGrant(jwtConfig);
    expect(decodeJwt(ok.access_token)).toMatchObject({ sub: `service_account:${saId}` });
    // the same jti again: refused (RFC 7523 §3)
    await expect(oidc.clientCredentialsGrant(jwtConfig)).rejects.toMatchObject({ error: 'invalid_client' });
    // a subject outside allowed_subjects
    next = await assertion('intruder');
    await expect(oidc.clientCredentialsGrant(jwtConfig)).rejects.toMatchObject({ error: 'invalid_client' });
    // deactivation: the live token stops working at once
    const bearer = { origin: d.url, authorization: `Bearer ${ok.access_token}` };
    expect((await postJson(`${d.url}/v1/check_permissions`, { checks: [{ relation: 'viewer', object: 'doc:1' }] }, bearer)).status).not.toBe(401);
    expect((await adminPost('update_client', { id: saId, is_active: false })).body.is_active).toBe(false);
    expect((await postJson(`${d.url}/v1/check_permissions`, { checks: [{ relation: 'viewer', object: 'doc:1' }] }, bearer)).status).toBe(401);
    next = await assertion('workload-b');
    await expect(oidc.clientCredentialsGrant(jwtConfig)).rejects.toMatchObject({ error: 'invalid_client' });
  });

  it('deactivating or deleting a client ends the user sessions issued through it: their tokens are refused on /v1 at once', async () => {
    const clientConfig = async (name: string) => {
      const made = await adminPost('create_client', {
        name, allowed_scopes: ['openid', 'profile', 'email', 'offline_access'], redirect_uris: [CALLBACK], grant_types: ['authorization_code', 'refresh_token'],
        is_first_party: true,
      });
      const cfg = new oidc.Configuration(config.serverMetadata(), made.body.client.client_id, { redirect_uris: [CALLBACK] }, oidc.ClientSecretBasic(made.body.client_secret));
      oidc.allowInsecureRequests(cfg);
      return { id: made.body.client.id as string, cfg };
    };
    const user = await loggedIn();
    // GET /v1/profile reads a credential without rotating it (POST /v1/session would rotate the cookie's session)
    const alive = (token: string) => raw(`${d.url}/v1/profile`, { headers: { origin: d.url, authorization: `Bearer ${token}` } }).then((r) => r.status);
    for (const [how, end] of [
      ['update_client is_active=false', (id: string) => adminPost('update_client', { id, is_active: false })],
      ['delete_client', (id: string) => adminPost('delete_client', { id })],
    ] as const) {
      const { id, cfg } = await clientConfig(`ended by ${how}`);
      const { tokens } = await codeFlow(user.cookie, cfg);
      const own = await codeFlow(user.cookie);
      expect({ how, through: await alive(tokens.access_token), own: await alive(own.tokens.access_token) }).toEqual({ how, through: 200, own: 200 });
      expect((await end(id)).status).toBe(200);
      // the next request with the client's token is refused; the user's other sessions live on
      expect({ how, through: await alive(tokens.access_token), own: await alive(own.tokens.access_token) }).toEqual({ how, through: 401, own: 200 });
      expect((await raw(`${d.url}/userinfo`, { headers: { authorization: `Bearer ${tokens.access_token}` } })).status).toBe(401);
      expect((await raw(`${d.url}/v1/profile`, { headers: { cookie: user.cookie } })).status).toBe(200);
      await expect(oidc.refreshTokenGrant(cfg, tokens.refresh_token!)).rejects.toBeDefined();
    }
  });

  it('revocation (RFC 7009) and introspection (RFC 7662): a revoked token is inactive', async () => {
    const user = await loggedIn();
    const { tokens } = await codeFlow(user.cookie);
    expect(await oidc.tokenIntrospection(config, tokens.access_token)).toMatchObject({ active: true, client_id: rp.id, sub: user.userId });
    await oidc.tokenRevocation(config, tokens.refresh_token!);
    expect(await oidc.tokenIntrospection(config, tokens.access_token)).toEqual({ active: false });
    expect(await oidc.tokenIntrospection(config, 'not-a-token')).toEqual({ active: false });
    // introspection needs client authentication
    const anon = await raw(`${d.url}/oauth/introspect`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: `token=${tokens.access_token}` });
    expect(anon.status).toBe(401);
    expect(anon.body.error).toBe('invalid_client');
  });

  it('RP-initiated logout ends the session and returns to the registered post_logout_redirect_uri only', async () => {
    const user = await loggedIn();
    const { tokens } = await codeFlow(user.cookie);
    const url = oidc.buildEndSessionUrl(config, { id_token_hint: tokens.id_token!, post_logout_redirect_uri: LOGGED_OUT, state: 'bye' });
    const res = await fetch(url, { redirect: 'manual', headers: { cookie: user.cookie } });
    expect(res.status).toBe(302);
    expect(res.headers.get('location')).toBe(`${LOGGED_OUT}?state=bye`);
    expect((await postJson(`${d.url}/v1/session`, {}, { origin: d.url, cookie: user.cookie })).status).toBe(401);
    expect((await oidc.tokenIntrospection(config, tokens.access_token)).active).toBe(false);
    // an unregistered target is not followed
    const other = await loggedIn();
    const evil = await fetch(`${d.url}/logout?client_id=${rp.id}&post_logout_redirect_uri=${encodeURIComponent('https://evil.example/')}`, { redirect: 'manual', headers: { cookie: other.cookie } });
    expect(evil.status).toBe(200);
    expect(evil.headers.get('location')).toBeNull();
  });

  it('RP-initiated logout by POST form (RP-Initiated Logout 1.0 §2) is under the §2.5 CSRF check: refused from a foreign origin, honoured from an allowed one', async () => {
    const user = await loggedIn();
    const { tokens } = await codeFlow(user.cookie);
    const form = new URLSearchParams({ id_token_hint: tokens.id_token!, post_logout_redirect_uri: LOGGED_OUT, state: 'post' }).toString();
    const postLogout = (origin: string) => fetch(`${d.url}/logout`, {
      method: 'POST', redirect: 'manual', body: form, headers: { 'content-type': 'application/x-www-form-urlencoded', origin, cookie: user.cookie },
    });
    // §2.5 lists no exemption for /logout: a form from another origin is refused and nothing ends
    const foreign = await postLogout('https://rp.example');
    expect({ status: foreign.status, body: await foreign.json() }).toEqual({ status: 403, body: { code: 'permission_denied', message: 'origin not allowed' } });
    expect((await oidc.tokenIntrospection(config, tokens.access_token)).active).toBe(true);
    expect((await raw(`${d.url}/v1/profile`, { headers: { cookie: user.cookie } })).status).toBe(200);
    // from an allowed origin (`--allowed-origins`; here the default `*`, i.e. the server's own origin) it is RP-initiated logout
    const ok = await postLogout(d.url);
    expect(ok.status).toBe(302);
    expect(ok.headers.get('location')).toBe(`${LOGGED_OUT}?state=post`);
    expect((await oidc.tokenIntrospection(config, tokens.access_token)).active).toBe(false);
    expect((await raw(`${d.url}/v1/profile`, { headers: { cookie: user.cookie } })).status).toBe(401);
  });

  it('authorizer-js 3.0.1: getToken (refresh grant) and revokeToken', async () => {
    const email = freshEmail('ajs');
    await postJson(`${d.url}/v1/signup`, { email, password: PASSWORD, confirm_password: PASSWORD }, { origin: d.url });
    const login = await postJson(`${d.url}/v1/login`, { email, password: PASSWORD, scope: ['openid', 'email', 'profile', 'offline_access'] }, { origin: d.url });
    const refresh = login.body.refresh_token as string;
    expect(refresh).toEqual(expect.any(String));
    const ajs = new Authorizer({ authorizerURL: d.url, redirectURL: `${d.url}/app`, clientID: d.clientId });
    const got = await ajs.getToken({ grant_type: 'refresh_token', refresh_token: refresh });
    expect(got.errors).toEqual([]);
    const rotated = got.data!.refresh_token!;
    expect(rotated).not.toBe(refresh);
    expect(got.data!.access_token).toEqual(expect.any(String));
    const revoked = await ajs.revokeToken({ refresh_token: rotated });
    expect(revoked.errors).toEqual([]);
    const after = await ajs.getToken({ grant_type: 'refresh_token', refresh_token: rotated });
    expect(after.errors.length).toBe(1);
  });

  it('clients and trusted issuers (behaviour.md §5.8) answer alike on REST, GraphQL and gRPC, with the §5.8 messages', async () => {
    const grpc = createGrpcClient(serviceDescriptor('authn'), { address: d.grpcAddress });
    const grpcCall = (rpc: string, req: unknown) => grpc.call(rpc, req, createCallContext({ protocol: 'grpc', headers: { 'x-service-admin-secret': d.adminSecret } }))
      .then((v): { ok: boolean; v?: unknown; code?: string; message?: string } => ({ ok: true, v }), (e: { code: string; message: string }) => ({ ok: false, code: e.code, message: e.message }));
    try {
      const created = await adminPost('create_client', { name: ' svc ', description: 'd', allowed_scopes: [' a ', 'a', 'b'] });
      expect(created.body.client).toMatchObject({ name: 'svc', allowed_scopes: ['a', 'b'], is_active: true });
      expect(created.body.client_secret).toMatch(/^[A-Za-z0-9_-]{43}$/);
      const id = created.body.client.id as string;
      const rest = await adminPost('client', { id });
      const g = await gql(d.url, 'query($p: ClientRequest!) { _client(params: $p) { id client_id name description allowed_scopes is_active created_at updated_at } }', { p: { id } }, admin());
      const viaGrpc = await grpcCall('Client', { id });
      expect(g.body.data._client).toEqual({ id, client_id: id, name: 'svc', description: 'd', allowed_scopes: ['a', 'b'], is_active: true, created_at: rest.body.created_at, updated_at: rest.body.updated_at });
      expect(viaGrpc).toEqual({ ok: true, v: rest.body });
      expect(rest.body).not.toHaveProperty('client_secret');
      // the server's own client is listed and immutable
      const list = await adminPost('clients', { pagination: { limit: 1000 } });
      expect(list.body.clients.map((c: { client_id: string }) => c.client_id)).toContain(d.clientId);
      for (const [route, body] of [['update_client', { id: d.clientId, name: 'x' }], ['rotate_client_secret', { id: d.clientId }], ['delete_client', { id: d.clientId }]] as const) {
        const res = await adminPost(route, body);
        expect({ route, status: res.status, body: res.body }).toEqual({ route, status: 400, body: { code: 'failed_precondition', message: "the server's own client is configured by flags and cannot be modified" } });
      }
      // §5.8 messages, identical on the three surfaces
      const cases: Array<[string, string, string, unknown]> = [
        ['create_client', 'CreateClient', 'mutation($p: CreateClientRequest!) { _create_client(params: $p) { client_secret } }', { name: ' ', allowed_scopes: ['a'] }],
        ['create_client', 'CreateClient', 'mutation($p: CreateClientRequest!) { _create_client(params: $p) { client_secret } }', { name: 'n', allowed_scopes: [' '] }],
        ['delete_client', 'DeleteClient', 'mutation($p: ClientRequest!) { _delete_client(params: $p) { message } }', { id: '' }],
        ['delete_client', 'DeleteClient', 'mutation($p: ClientRequest!) { _delete_client(params: $p) { message } }', { id: randomUUID() }],
        ['add_trusted_issuer', 'AddTrustedIssuer', 'mutation($p: AddTrustedIssuerRequest!) { _add_trusted_issuer(params: $p) { id } }',
          { service_account_id: randomUUID(), name: 'i', issuer_url: 'https://i.example', key_source_type: 'oidc_discovery', expected_aud: 'a', issuer_type: 'oidc' }],
        ['add_trusted_issuer', 'AddTrustedIssuer', 'mutation($p: AddTrustedIssuerRequest!) { _add_trusted_issuer(params: $p) { id } }',
          { service_account_id: id, name: 'i', issuer_url: 'https://i.example', key_source_type: 'oidc_discovery', expected_aud: 'a', issuer_type: 'oidc', enable_token_review: true }],
      ];
      const seen: string[] = [];
      for (const [route, rpc, query, body] of cases) {
        const r = await adminPost(route, body);
        const q = await gql(d.url, query, { p: body }, admin());
        const gr = await grpcCall(rpc, body);
        expect({ route, graphql: [q.body.errors?.[0]?.extensions?.code, q.body.errors?.[0]?.message], grpc: [gr.code, gr.message] })
          .toEqual({ route, graphql: [String(r.body.code).toUpperCase(), r.body.message], grpc: [r.body.code, r.body.message] });
        seen.push(`${r.status} ${r.body.message}`);
      }
      expect(seen).toEqual([
        '400 name is required', '400 at least one allowed scope is required', '400 service account ID required', '404 client not found',
        `404 service account not found: ${(cases[4]![3] as { service_account_id: string }).service_account_id}`,
        '400 kubernetes_api_server_url is required when enable_token_review is true',
      ]);
      const issuer = await adminPost('add_trusted_issuer', { service_account_id: id, name: 'i', issuer_url: 'https://i.example', key_source_type: 'oidc_discovery', expected_aud: 'a', issuer_type: 'oidc' });
      expect(issuer.body).toMatchObject({ service_account_id: id, subject_claim: 'sub', is_active: true, enable_token_review: false });
      const dup = await adminPost('add_trusted_issuer', { service_account_id: id, name: 'j', issuer_url: 'https://i.example', key_source_type: 'oidc_discovery', expected_aud: 'a', issuer_type: 'oidc' });
      expect({ status: dup.status, body: dup.body }).toEqual({ status: 409, body: { code: 'already_exists', message: 'issuer_url already registered: https://i.example' } });
      expect((await adminPost('update_trusted_issuer', { id: issuer.body.id, expected_aud: ' ' })).body.message).toBe('expected_aud cannot be empty');
      expect((await adminPost('trusted_issuers', { service_account_id: id })).body.pagination.total).toBe(1);
      // deletion cascades to the client's issuers
      expect((await adminPost('delete_client', { id })).body).toEqual({ message: 'Service account deleted successfully' });
      expect((await adminPost('trusted_issuer', { id: issuer.body.id })).status).toBe(404);
    } finally {
      grpc.close();
    }
  });
});
