/**
 * @module test/e2e/oauth-par
 * Issue 34 §4 (part), driven by openid-client as the relying party and jose as a resource server:
 * RFC 9068 JWT access tokens (header `typ: at+jwt`, §2.2 claims, a unique `jti`) from every OAuth
 * grant, still accepted by `/userinfo`, introspection and `validate_jwt_token`, while the first-party
 * `/v1` tokens keep their plain `JWT` header; RFC 9126 pushed authorization requests through
 * openid-client's `buildAuthorizationUrlWithPAR`: discovery, the code flow on the request_uri, single
 * use, the login page in between, client authentication at `/oauth/par`.
 */
import { generateKeyPairSync } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import * as oidc from 'openid-client';
import { createRemoteJWKSet, decodeProtectedHeader, jwtVerify } from 'jose';
import { startDeployment, type Deployment } from '@gatehouse/testing';
import { postJson } from '../support/http.ts';
import { PASSWORD, freshEmail } from '../support/scenario.ts';

const CALLBACK = 'http://127.0.0.1:9/rp/callback';

describe.each(['all', 'split'] as const)('RFC 9068 JWT access tokens and RFC 9126 PAR (%s)', (mode) => {
  let d: Deployment;
  let rp: { id: string; secret: string };
  let config: oidc.Configuration;
  const admin = (): Record<string, string> => ({ origin: d.url, 'x-service-admin-secret': d.adminSecret });
  const adminPost = (route: string, body: unknown) => postJson(`${d.url}/v1/admin/${route}`, body, admin());

  /** A user with a browser session: the `cookie_session` cookie of POST /v1/login, and the /v1 access token. */
  async function loggedIn(): Promise<{ cookie: string; userId: string; v1Token: string }> {
    const email = freshEmail('par');
    expect((await postJson(`${d.url}/v1/signup`, { email, password: PASSWORD, confirm_password: PASSWORD }, { origin: d.url })).status).toBe(200);
    const login = await postJson(`${d.url}/v1/login`, { email, password: PASSWORD }, { origin: d.url });
    const cookie = login.headers.getSetCookie().map((c) => c.split(';')[0]!).find((c) => c.startsWith('cookie_session='))!;
    return { cookie, userId: login.body.user.id, v1Token: login.body.access_token };
  }

  /** Follows an authorization URL with the session cookie and redeems the code at the callback. */
  async function redeem(url: URL, cookie: string, verifier: string, state: string, nonce: string, cfg: oidc.Configuration = config) {
    const res = await fetch(url, { redirect: 'manual', headers: { cookie } });
    const location = res.headers.get('location') ?? '';
    expect({ status: res.status, callback: location.startsWith(`${CALLBACK}?`), location }).toEqual({ status: 302, callback: true, location });
    return oidc.authorizationCodeGrant(cfg, new URL(location), { pkceCodeVerifier: verifier, expectedState: state, expectedNonce: nonce });
  }

  beforeAll(async () => {
    // an asymmetric key, so the test verifies tokens as a resource server would: through the JWKS
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
    const pem = privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();
    const pub = publicKey.export({ format: 'pem', type: 'spki' }).toString();
    d = await startDeployment(mode, { readyTimeoutMs: 240_000, flags: ['--jwt-type=ES256', `--jwt-private-key=${pem}`, `--jwt-public-key=${pub}`] });
    const created = await adminPost('create_client', {
      name: 'par rp', allowed_scopes: ['openid', 'profile', 'email', 'offline_access', 'read:docs'],
      redirect_uris: [CALLBACK], grant_types: ['authorization_code', 'refresh_token', 'client_credentials'], is_first_party: true,
    });
    expect(created.status).toBe(200);
    rp = { id: created.body.client.client_id, secret: created.body.client_secret };
    config = await oidc.discovery(new URL(d.url), rp.id, { redirect_uris: [CALLBACK] }, oidc.ClientSecretBasic(rp.secret), { execute: [oidc.allowInsecureRequests] });
  }, 300_000);
  afterAll(async () => {
    await d?.stop();
  });

  it('RFC 9068: code, refresh and client_credentials tokens are at+jwt with iss, exp, aud, sub, client_id, iat, a unique jti and scope; /v1 tokens stay JWT', async () => {
    const jwks = createRemoteJWKSet(new URL(String(config.serverMetadata().jwks_uri)));
    // RFC 9068 §4: the resource server checks typ, iss, aud, exp and the signature
    const verify = async (token: string) => (await jwtVerify(token, jwks, { typ: 'at+jwt', issuer: d.url, audience: rp.id })).payload;
    const user = await loggedIn();
    const verifier = oidc.randomPKCECodeVerifier();
    const state = oidc.randomState();
    const nonce = oidc.randomNonce();
    const url = oidc.buildAuthorizationUrl(config, {
      redirect_uri: CALLBACK, scope: 'openid email offline_access', state, nonce, code_challenge: await oidc.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256',
    });
    const tokens = await redeem(url, user.cookie, verifier, state, nonce);
    const code = await verify(tokens.access_token);
    const required = { iss: d.url, aud: rp.id, sub: user.userId, client_id: rp.id, iat: expect.any(Number), exp: expect.any(Number), jti: expect.any(String) };
    expect(code).toMatchObject({ ...required, scope: 'openid email offline_access' });

    const refreshed = await oidc.refreshTokenGrant(config, tokens.refresh_token!);
    const again = await verify(refreshed.access_token);
    expect(again).toMatchObject(required);
    expect(again.jti).not.toBe(code.jti);

    const cc = await verify((await oidc.clientCredentialsGrant(config, { scope: 'read:docs' })).access_token);
    expect(cc).toMatchObject({ ...required, sub: `service_account:${rp.id}`, scope: 'read:docs' });

    // the ID token and the first-party /v1 access token keep the plain JWT header
    expect(decodeProtectedHeader(tokens.id_token!).typ).toBe('JWT');
    expect(decodeProtectedHeader(user.v1Token).typ).toBe('JWT');

    // at+jwt tokens are accepted where access tokens are: userinfo, introspection, validate_jwt_token
    expect(await oidc.fetchUserInfo(config, refreshed.access_token, user.userId)).toMatchObject({ sub: user.userId });
    expect(await oidc.tokenIntrospection(config, refreshed.access_token)).toMatchObject({ active: true, client_id: rp.id, sub: user.userId });
    const valid = await postJson(`${d.url}/v1/validate_jwt_token`, { token_type: 'access_token', token: refreshed.access_token }, { origin: d.url });
    expect({ status: valid.status, is_valid: valid.body.is_valid, jti: valid.body.claims?.jti }).toEqual({ status: 200, is_valid: true, jti: again.jti });
  });

  it('RFC 9126: discovery advertises /oauth/par; openid-client pushes, the browser runs the code flow on the request_uri, once', async () => {
    const m = config.serverMetadata();
    expect(m).toMatchObject({ pushed_authorization_request_endpoint: `${d.url}/oauth/par`, require_pushed_authorization_requests: false });
    const user = await loggedIn();
    const verifier = oidc.randomPKCECodeVerifier();
    const state = oidc.randomState();
    const nonce = oidc.randomNonce();
    const url = await oidc.buildAuthorizationUrlWithPAR(config, {
      redirect_uri: CALLBACK, scope: 'openid email', state, nonce, code_challenge: await oidc.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256',
    });
    expect([...url.searchParams.keys()].sort()).toEqual(['client_id', 'request_uri']);
    expect(url.searchParams.get('request_uri')).toMatch(/^urn:ietf:params:oauth:request_uri:[A-Za-z0-9_-]{43}$/);
    const tokens = await redeem(url, user.cookie, verifier, state, nonce);
    expect(tokens.claims()).toMatchObject({ sub: user.userId, aud: rp.id, nonce });
    // single use (RFC 9126 §4): the same request_uri again is refused on an error page, not redirected
    const again = await fetch(url, { redirect: 'manual', headers: { cookie: user.cookie } });
    expect({ status: again.status, location: again.headers.get('location') }).toEqual({ status: 400, location: null });
    expect(await again.text()).toContain('invalid_request_uri');
  });

  it('RFC 9126: a pushed request survives the login page, and /oauth/par authenticates the client and checks the request', async () => {
    const verifier = oidc.randomPKCECodeVerifier();
    const state = oidc.randomState();
    const nonce = oidc.randomNonce();
    const url = await oidc.buildAuthorizationUrlWithPAR(config, {
      redirect_uri: CALLBACK, scope: 'openid', state, nonce, code_challenge: await oidc.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256',
    });
    const toLogin = await fetch(url, { redirect: 'manual' });
    expect(toLogin.status).toBe(302);
    const login = new URL(toLogin.headers.get('location')!);
    expect(login.pathname).toBe('/app/login');
    const returnTo = login.searchParams.get('return_to')!;
    expect(returnTo).not.toContain(state);
    const user = await loggedIn();
    const tokens = await redeem(new URL(returnTo, d.url), user.cookie, verifier, state, nonce);
    expect(tokens.claims()).toMatchObject({ sub: user.userId });

    const par = (body: Record<string, string>, headers: Record<string, string>) =>
      fetch(`${d.url}/oauth/par`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers }, body: new URLSearchParams(body) });
    const basic = (secret: string) => ({ authorization: `Basic ${Buffer.from(`${rp.id}:${secret}`).toString('base64')}` });
    const wrong = await par({ redirect_uri: CALLBACK, response_type: 'code', scope: 'openid' }, basic('wrong'));
    expect({ status: wrong.status, error: (await wrong.json()).error }).toEqual({ status: 401, error: 'invalid_client' });
    const foreign = await par({ redirect_uri: 'https://evil.example/cb', response_type: 'code', scope: 'openid' }, basic(rp.secret));
    expect({ status: foreign.status, body: await foreign.json() }).toEqual({ status: 400, body: { error: 'invalid_request', error_description: 'redirect_uri is not registered for this client' } });
    const ok = await par({ redirect_uri: CALLBACK, response_type: 'code', scope: 'openid', client_id: rp.id, client_secret: rp.secret }, {});
    expect({ status: ok.status, cache: ok.headers.get('cache-control'), expires_in: (await ok.json()).expires_in }).toEqual({ status: 201, cache: 'no-store', expires_in: 60 });
  });

  it('RFC 9126 §6: a client created with require_pushed_authorization_requests gets invalid_request for a plain /authorize, and runs through PAR', async () => {
    const created = await adminPost('create_client', {
      name: 'par-only rp', allowed_scopes: ['openid', 'email'], redirect_uris: [CALLBACK], grant_types: ['authorization_code'],
      is_first_party: true, require_pushed_authorization_requests: true,
    });
    expect({ status: created.status, flag: created.body.client?.require_pushed_authorization_requests }).toEqual({ status: 200, flag: true });
    const strict = await oidc.discovery(new URL(d.url), created.body.client.client_id, { redirect_uris: [CALLBACK] },
      oidc.ClientSecretPost(created.body.client_secret), { execute: [oidc.allowInsecureRequests] });
    // the server-wide value stays false: the requirement is this client's
    expect(strict.serverMetadata().require_pushed_authorization_requests).toBe(false);
    const user = await loggedIn();
    const verifier = oidc.randomPKCECodeVerifier();
    const params = { redirect_uri: CALLBACK, scope: 'openid email', state: oidc.randomState(), nonce: oidc.randomNonce(), code_challenge: await oidc.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256' };
    const plain = await fetch(oidc.buildAuthorizationUrl(strict, params), { redirect: 'manual', headers: { cookie: user.cookie } });
    const refused = new URL(plain.headers.get('location') ?? `${CALLBACK}?`);
    expect({ status: plain.status, error: refused.searchParams.get('error'), state: refused.searchParams.get('state'), code: refused.searchParams.get('code') })
      .toEqual({ status: 302, error: 'invalid_request', state: params.state, code: null });
    const tokens = await redeem(await oidc.buildAuthorizationUrlWithPAR(strict, params), user.cookie, verifier, params.state, params.nonce, strict);
    expect(tokens.claims()).toMatchObject({ sub: user.userId, aud: created.body.client.client_id });
    // update_client turns it off again
    expect((await adminPost('update_client', { id: created.body.client.client_id, require_pushed_authorization_requests: false })).body)
      .toMatchObject({ require_pushed_authorization_requests: false });
    const again = await fetch(oidc.buildAuthorizationUrl(strict, { ...params, state: oidc.randomState() }), { redirect: 'manual', headers: { cookie: user.cookie } });
    expect(new URL(again.headers.get('location')!).searchParams.get('code')).toEqual(expect.any(String));
  });
});
