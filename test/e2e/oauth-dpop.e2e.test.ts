/**
 * @module test/e2e/oauth-dpop
 * Issue 34 §4, DPoP (RFC 9449), driven by openid-client as the relying party with its DPoP handle
 * (`randomDPoPKeyPair`, `getDPoPHandle`): the code flow with PKCE and a proof answers a DPoP-bound access
 * token (`token_type: DPoP`, `cnf.jkt` the RFC 7638 thumbprint of the client's key) after the server's
 * nonce challenge (§8); refresh with the same key, /userinfo with `Authorization: DPoP`, introspection
 * reporting `cnf`; and the refusals: a replayed proof (at another replica in all-in-one mode: the replay
 * store is the database), a proof for another URI, a bound token sent as a bearer token, a refresh with
 * another key. Hand-made proofs (jose, signed with the same key) show the refusals the library never sends.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import * as oidc from 'openid-client';
import { SignJWT, calculateJwkThumbprint, decodeJwt, exportJWK, type JWK } from 'jose';
import { createHash, randomUUID } from 'node:crypto';
import { startDeployment, type Deployment } from '@gatehouse/testing';
import { postJson } from '../support/http.ts';
import { PASSWORD, freshEmail } from '../support/scenario.ts';

const CALLBACK = 'http://127.0.0.1:9/rp/callback';
const TOKEN_EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange';
const ACCESS_TOKEN_TYPE = 'urn:ietf:params:oauth:token-type:access_token';

/** One request openid-client made and what it was answered (recorded by a customFetch). */
interface Exchange { url: string; status: number; dpopNonce: string | null; error: string | null; hadProof: boolean }

const MODES = [
  // all-in-one: two `gatehouse all` replicas on one PostgreSQL, so a proof replays at the other one
  { mode: 'all' as const, options: { database: 'postgres' as const, replicas: 2 } },
  { mode: 'split' as const, options: {} },
];

describe.each(MODES)('DPoP, RFC 9449 ($mode)', ({ mode, options }) => {
  let d: Deployment;
  let publicRp: oidc.Configuration;
  let confidentialRp: oidc.Configuration;
  const exchanges: Exchange[] = [];
  const admin = (): Record<string, string> => ({ origin: d.url, 'x-service-admin-secret': d.adminSecret });

  /** A user with a browser session (the `cookie_session` cookie of POST /v1/login). */
  async function loggedIn(): Promise<{ cookie: string; userId: string }> {
    const email = freshEmail('dpop');
    expect((await postJson(`${d.url}/v1/signup`, { email, password: PASSWORD, confirm_password: PASSWORD }, { origin: d.url })).status).toBe(200);
    const login = await postJson(`${d.url}/v1/login`, { email, password: PASSWORD }, { origin: d.url });
    const cookie = login.headers.getSetCookie().map((c) => c.split(';')[0]!).find((c) => c.startsWith('cookie_session='))!;
    return { cookie, userId: login.body.user.id };
  }

  /**
   * The code flow with PKCE for `cfg`, the code redeemed with the DPoP handle `dpop` (or none).
   * `authorization`: extra authorization request parameters (`dpop_jkt`), or `par` to push the request
   * with that handle's proof (RFC 9449 §10.1).
   */
  async function codeFlow(cfg: oidc.Configuration, dpop: oidc.DPoPHandle | undefined, scope = 'openid email offline_access',
    authorization: { extra?: Record<string, string>; par?: oidc.DPoPHandle } = {}) {
    const user = await loggedIn();
    const verifier = oidc.randomPKCECodeVerifier();
    const state = oidc.randomState();
    const nonce = oidc.randomNonce();
    const params = { redirect_uri: CALLBACK, scope, state, nonce, code_challenge: await oidc.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256', ...authorization.extra };
    const url = authorization.par ? await oidc.buildAuthorizationUrlWithPAR(cfg, params, { DPoP: authorization.par }) : oidc.buildAuthorizationUrl(cfg, params);
    const res = await fetch(url, { redirect: 'manual', headers: { cookie: user.cookie } });
    const location = res.headers.get('location') ?? '';
    expect({ status: res.status, callback: location.startsWith(`${CALLBACK}?`) }).toEqual({ status: 302, callback: true });
    const tokens = await oidc.authorizationCodeGrant(cfg, new URL(location), { pkceCodeVerifier: verifier, expectedState: state, expectedNonce: nonce }, undefined, dpop ? { DPoP: dpop } : {});
    return { user, tokens };
  }

  /** A key pair as openid-client makes one, its handle for `cfg`, and its RFC 7638 thumbprint. */
  async function dpopKey(cfg: oidc.Configuration = publicRp) {
    const pair = await oidc.randomDPoPKeyPair('ES256');
    const jwk = await exportJWK(pair.publicKey);
    return { pair, jwk, handle: oidc.getDPoPHandle(cfg, pair), jkt: await calculateJwkThumbprint(jwk, 'sha256') };
  }

  /** A proof by hand (RFC 9449 §4.2), signed with `pair`'s private key. */
  function proof(pair: CryptoKeyPair, jwk: JWK, claims: { htm: string; htu: string; nonce?: string; ath?: string; jti?: string }): Promise<string> {
    return new SignJWT({ jti: randomUUID(), iat: Math.floor(Date.now() / 1000), ...claims })
      .setProtectedHeader({ alg: 'ES256', typ: 'dpop+jwt', jwk })
      .sign(pair.privateKey);
  }

  const ath = (token: string): string => createHash('sha256').update(token).digest('base64url');

  /** A nonce of the server: the `DPoP-Nonce` of a proof without one (RFC 9449 §8). */
  async function serverNonce(pair: CryptoKeyPair, jwk: JWK): Promise<string> {
    const res = await fetch(`${d.url}/oauth/token`, {
      method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', dpop: await proof(pair, jwk, { htm: 'POST', htu: `${d.url}/oauth/token` }) },
      body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: 'x', client_id: publicRp.clientMetadata().client_id }),
    });
    expect({ status: res.status, error: ((await res.json()) as { error: string }).error }).toEqual({ status: 400, error: 'use_dpop_nonce' });
    return res.headers.get('dpop-nonce')!;
  }

  beforeAll(async () => {
    d = await startDeployment(mode, { readyTimeoutMs: 240_000, ...options });
    const create = async (body: Record<string, unknown>) => {
      const res = await postJson(`${d.url}/v1/admin/create_client`, {
        allowed_scopes: ['openid', 'profile', 'email', 'offline_access'], redirect_uris: [CALLBACK], is_first_party: true, ...body,
      }, admin());
      expect(res.status).toBe(200);
      return res.body as { client: { client_id: string }; client_secret: string };
    };
    const pub = await create({ name: 'dpop native app', is_public: true, grant_types: ['authorization_code', 'refresh_token'] });
    const conf = await create({ name: 'dpop web app', grant_types: ['authorization_code', 'refresh_token', 'client_credentials', TOKEN_EXCHANGE] });
    const insecure = { execute: [oidc.allowInsecureRequests] };
    publicRp = await oidc.discovery(new URL(d.url), pub.client.client_id, { redirect_uris: [CALLBACK], token_endpoint_auth_method: 'none' }, oidc.None(), insecure);
    confidentialRp = await oidc.discovery(new URL(d.url), conf.client.client_id, { redirect_uris: [CALLBACK] }, oidc.ClientSecretBasic(conf.client_secret), insecure);
    // every exchange openid-client makes, with its status, error and DPoP-Nonce
    publicRp[oidc.customFetch] = async (url, init) => {
      const res = await fetch(url, init as RequestInit);
      const copy = res.clone();
      const body = copy.headers.get('content-type')?.includes('json') ? ((await copy.json()) as { error?: string }) : {};
      const headers = new Headers(init.headers as HeadersInit);
      exchanges.push({ url: String(url), status: res.status, dpopNonce: res.headers.get('dpop-nonce'), error: body.error ?? null, hadProof: headers.has('dpop') });
      return res;
    };
  }, 300_000);
  afterAll(async () => {
    await d?.stop();
  });

  it('discovery advertises dpop_signing_alg_values_supported (RFC 9449 §5.1)', () => {
    expect(publicRp.serverMetadata().dpop_signing_alg_values_supported).toEqual(expect.arrayContaining(['ES256', 'PS256', 'RS256', 'EdDSA']));
    expect(publicRp.serverMetadata().dpop_signing_alg_values_supported).not.toContain('HS256');
  });

  it('code + PKCE with DPoP: the nonce challenge, a DPoP-bound access token (cnf.jkt), userinfo with DPoP, refresh with the same key', async () => {
    const key = await dpopKey();
    exchanges.length = 0;
    const { user, tokens } = await codeFlow(publicRp, key.handle);
    // §8: the first proof carried no nonce; the server asked for one and openid-client retried with it
    const tokenCalls = exchanges.filter((e) => e.url === `${d.url}/oauth/token`);
    expect(tokenCalls.map((e) => ({ status: e.status, error: e.error, nonce: e.dpopNonce !== null, proof: e.hadProof }))).toEqual([
      { status: 400, error: 'use_dpop_nonce', nonce: true, proof: true },
      { status: 200, error: null, nonce: true, proof: true },
    ]);
    expect(tokens.token_type).toBe('dpop');
    const access = decodeJwt(tokens.access_token);
    expect(access).toMatchObject({ sub: user.userId, cnf: { jkt: key.jkt } });
    // a public client's refresh token is bound to the key as well (§5)
    expect(decodeJwt(tokens.refresh_token!)).toMatchObject({ cnf: { jkt: key.jkt } });

    // /userinfo with Authorization: DPoP and a proof carrying ath (§7.1)
    exchanges.length = 0;
    expect(await oidc.fetchUserInfo(publicRp, tokens.access_token, user.userId, { DPoP: key.handle })).toMatchObject({ sub: user.userId, email: expect.any(String) });
    expect(exchanges.filter((e) => e.url === `${d.url}/userinfo`).at(-1)).toMatchObject({ status: 200, hadProof: true });

    // refresh with the same key: new DPoP-bound tokens
    const refreshed = await oidc.refreshTokenGrant(publicRp, tokens.refresh_token!, undefined, { DPoP: key.handle });
    expect(refreshed.token_type).toBe('dpop');
    expect(decodeJwt(refreshed.access_token)).toMatchObject({ sub: user.userId, cnf: { jkt: key.jkt } });
    expect(decodeJwt(refreshed.refresh_token!)).toMatchObject({ cnf: { jkt: key.jkt } });
    expect(await oidc.fetchUserInfo(publicRp, refreshed.access_token, user.userId, { DPoP: key.handle })).toMatchObject({ sub: user.userId });
  });

  it('refresh with another key, or without a proof, is invalid_grant and rotates nothing (§5)', async () => {
    const key = await dpopKey();
    const { tokens } = await codeFlow(publicRp, key.handle);
    const other = await dpopKey();
    const refused = await oidc.refreshTokenGrant(publicRp, tokens.refresh_token!, undefined, { DPoP: other.handle }).then(() => null, (e: unknown) => e);
    expect(refused).toMatchObject({ error: 'invalid_grant', error_description: 'the refresh token is bound to another DPoP key' });
    const bare = await oidc.refreshTokenGrant(publicRp, tokens.refresh_token!).then(() => null, (e: unknown) => e);
    expect(bare).toMatchObject({ error: 'invalid_grant', error_description: 'the refresh token is DPoP-bound: a DPoP proof is required' });
    // the refusals rotated nothing: the right key still refreshes (no reuse detection fired)
    const ok = await oidc.refreshTokenGrant(publicRp, tokens.refresh_token!, undefined, { DPoP: key.handle });
    expect(decodeJwt(ok.access_token)).toMatchObject({ cnf: { jkt: key.jkt } });
  });

  it('dpop_jkt (§10): a code requested for one key is redeemed with it only, also when a DPoP-signed PAR sets it', async () => {
    const key = await dpopKey();
    const other = await dpopKey();
    // dpop_jkt on the authorization URL: the right key redeems the code
    const { tokens } = await codeFlow(publicRp, key.handle, 'openid', { extra: { dpop_jkt: key.jkt } });
    expect(decodeJwt(tokens.access_token)).toMatchObject({ cnf: { jkt: key.jkt } });
    // another key, or no proof at all, is invalid_grant
    const wrong = await codeFlow(publicRp, other.handle, 'openid', { extra: { dpop_jkt: key.jkt } }).then(() => null, (e: unknown) => e);
    expect(wrong).toMatchObject({ error: 'invalid_grant', error_description: 'the authorization code is bound to another DPoP key (dpop_jkt)' });
    const none = await codeFlow(publicRp, undefined, 'openid', { extra: { dpop_jkt: key.jkt } }).then(() => null, (e: unknown) => e);
    expect(none).toMatchObject({ error: 'invalid_grant' });
    // PAR with a DPoP proof: the pushed request is bound to the proof's key
    const pushed = await codeFlow(publicRp, key.handle, 'openid', { par: key.handle });
    expect(decodeJwt(pushed.tokens.access_token)).toMatchObject({ cnf: { jkt: key.jkt } });
    const stolen = await codeFlow(publicRp, other.handle, 'openid', { par: key.handle }).then(() => null, (e: unknown) => e);
    expect(stolen).toMatchObject({ error: 'invalid_grant', error_description: 'the authorization code is bound to another DPoP key (dpop_jkt)' });
    // a malformed dpop_jkt is refused at /authorize
    const user = await loggedIn();
    const bad = oidc.buildAuthorizationUrl(publicRp, {
      redirect_uri: CALLBACK, scope: 'openid', code_challenge: await oidc.calculatePKCECodeChallenge(oidc.randomPKCECodeVerifier()), code_challenge_method: 'S256', dpop_jkt: 'short',
    });
    const res = await fetch(bad, { redirect: 'manual', headers: { cookie: user.cookie } });
    expect(new URL(res.headers.get('location')!).searchParams.get('error')).toBe('invalid_request');
  });

  it('token exchange (RFC 8693): a DPoP-bound subject token needs a proof by its key; the delegated token is bound to it', async () => {
    const key = await dpopKey();
    const { user, tokens } = await codeFlow(publicRp, key.handle, 'openid email');
    const request = (dpop?: oidc.DPoPHandle) => oidc.genericGrantRequest(confidentialRp, TOKEN_EXCHANGE, {
      subject_token: tokens.access_token, subject_token_type: ACCESS_TOKEN_TYPE, scope: 'openid email',
    }, dpop ? { DPoP: dpop } : {});
    // openid-client retries on use_dpop_nonce for its named grants only; a generic grant retries here (§8)
    const exchange = (dpop?: oidc.DPoPHandle) => request(dpop).catch((e: unknown) => {
      if ((e as { error?: string }).error === 'use_dpop_nonce') return request(dpop);
      throw e;
    });
    // whoever copied the token, even with a client of their own allowed the grant, cannot exchange it
    expect(await exchange().then(() => null, (e: unknown) => e)).toMatchObject({
      error: 'invalid_grant', error_description: 'the subject token is DPoP-bound: the request needs a DPoP proof by its key',
    });
    const thief = await dpopKey(confidentialRp);
    expect(await exchange(thief.handle).then(() => null, (e: unknown) => e)).toMatchObject({ error: 'invalid_grant' });
    // the key's holder can, and the delegated token is bound to the same key
    const delegated = await exchange(oidc.getDPoPHandle(confidentialRp, key.pair));
    expect(delegated.token_type).toBe('dpop');
    expect(decodeJwt(delegated.access_token)).toMatchObject({ sub: user.userId, cnf: { jkt: key.jkt }, act: { sub: expect.stringMatching(/^service_account:/) } });
  });

  it('refusals at /userinfo: a bound token as Bearer, a replayed proof, a proof for another URI or by another key', async () => {
    const key = await dpopKey();
    const { user, tokens } = await codeFlow(publicRp, key.handle);
    const at = tokens.access_token;
    const userinfo = (base: string, authorization: string, dpop?: string) =>
      fetch(`${base}/userinfo`, { headers: { authorization, ...(dpop ? { dpop } : {}) } });

    // a DPoP-bound token presented as a bearer token: refused here and on the /v1 API
    const asBearer = await userinfo(d.url, `Bearer ${at}`);
    expect({ status: asBearer.status, error: ((await asBearer.json()) as { error: string }).error }).toEqual({ status: 401, error: 'invalid_token' });
    const profile = await fetch(`${d.url}/v1/profile`, { headers: { authorization: `Bearer ${at}`, origin: d.url } });
    expect(profile.status).toBe(401);
    // no proof with the DPoP scheme
    const noProof = await userinfo(d.url, `DPoP ${at}`);
    expect({ status: noProof.status, challenge: noProof.headers.get('www-authenticate') }).toEqual({ status: 401, challenge: expect.stringMatching(/^DPoP error="invalid_dpop_proof"/) });

    const nonce = await serverNonce(key.pair, key.jwk);
    const good = await proof(key.pair, key.jwk, { htm: 'GET', htu: `${d.url}/userinfo`, nonce, ath: ath(at) });
    const first = await userinfo(d.url, `DPoP ${at}`, good);
    expect({ status: first.status, sub: ((await first.json()) as { sub: string }).sub }).toEqual({ status: 200, sub: user.userId });
    // the same proof again, at the other replica when there is one: the jti store is shared
    const replayAt = d.replicaUrls.at(-1)!;
    if (mode === 'all') expect(replayAt).not.toBe(d.url);
    const replay = await userinfo(replayAt, `DPoP ${at}`, good);
    expect({ status: replay.status, challenge: replay.headers.get('www-authenticate'), body: await replay.json() }).toEqual({
      status: 401, challenge: expect.stringMatching(/^DPoP error="invalid_dpop_proof"/),
      body: { error: 'invalid_dpop_proof', error_description: 'the DPoP proof was already used' },
    });
    // a nonce issued by one replica is accepted by the other (stateless nonces)
    const elsewhere = await userinfo(replayAt, `DPoP ${at}`, await proof(key.pair, key.jwk, { htm: 'GET', htu: `${d.url}/userinfo`, nonce, ath: ath(at) }));
    expect(elsewhere.status).toBe(200);

    // a proof for the token endpoint's URI, or for POST
    const wrongHtu = await userinfo(d.url, `DPoP ${at}`, await proof(key.pair, key.jwk, { htm: 'GET', htu: `${d.url}/oauth/token`, nonce, ath: ath(at) }));
    expect({ status: wrongHtu.status, body: await wrongHtu.json() }).toEqual({
      status: 401, body: { error: 'invalid_dpop_proof', error_description: 'the DPoP proof\'s htu does not match the request URI' },
    });
    const wrongHtm = await userinfo(d.url, `DPoP ${at}`, await proof(key.pair, key.jwk, { htm: 'POST', htu: `${d.url}/userinfo`, nonce, ath: ath(at) }));
    expect(wrongHtm.status).toBe(401);
    // a valid proof by another key: the token is not bound to it
    const other = await dpopKey();
    const otherProof = await proof(other.pair, other.jwk, { htm: 'GET', htu: `${d.url}/userinfo`, nonce, ath: ath(at) });
    const stolen = await userinfo(d.url, `DPoP ${at}`, otherProof);
    expect({ status: stolen.status, error: ((await stolen.json()) as { error: string }).error }).toEqual({ status: 401, error: 'invalid_token' });
    // a proof without a nonce: use_dpop_nonce and a fresh one in DPoP-Nonce (§9)
    const noNonce = await userinfo(d.url, `DPoP ${at}`, await proof(key.pair, key.jwk, { htm: 'GET', htu: `${d.url}/userinfo`, ath: ath(at) }));
    expect({ status: noNonce.status, challenge: noNonce.headers.get('www-authenticate'), nonce: noNonce.headers.get('dpop-nonce') })
      .toEqual({ status: 401, challenge: expect.stringMatching(/^DPoP error="use_dpop_nonce"/), nonce: expect.any(String) });
  });

  it('refusals at the token endpoint: a proof for another URI, a replayed proof (400 invalid_dpop_proof)', async () => {
    const key = await dpopKey();
    const { tokens } = await codeFlow(publicRp, key.handle);
    const nonce = await serverNonce(key.pair, key.jwk);
    const refresh = (base: string, dpop: string) => fetch(`${base}/oauth/token`, {
      method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', dpop },
      body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: tokens.refresh_token!, client_id: publicRp.clientMetadata().client_id }),
    });
    const wrongHtu = await refresh(d.url, await proof(key.pair, key.jwk, { htm: 'POST', htu: `${d.url}/userinfo`, nonce }));
    expect({ status: wrongHtu.status, body: await wrongHtu.json() }).toEqual({
      status: 400, body: { error: 'invalid_dpop_proof', error_description: 'the DPoP proof\'s htu does not match the request URI' },
    });
    const good = await proof(key.pair, key.jwk, { htm: 'POST', htu: `${d.url}/oauth/token`, nonce });
    const first = await refresh(d.url, good);
    expect({ status: first.status, type: ((await first.json()) as { token_type: string }).token_type, nonce: first.headers.get('dpop-nonce') })
      .toEqual({ status: 200, type: 'DPoP', nonce: expect.any(String) });
    const replay = await refresh(d.replicaUrls.at(-1)!, good);
    expect({ status: replay.status, body: await replay.json() }).toEqual({
      status: 400, body: { error: 'invalid_dpop_proof', error_description: 'the DPoP proof was already used' },
    });
  });

  it('a confidential client: DPoP-bound access token, introspection reports cnf.jkt and token_type DPoP, validate_jwt_token checks the resource server\'s proof; without a proof tokens stay Bearer', async () => {
    const key = await dpopKey(confidentialRp);
    const { user, tokens } = await codeFlow(confidentialRp, key.handle, 'openid email');
    expect(tokens.token_type).toBe('dpop');
    expect(await oidc.tokenIntrospection(confidentialRp, tokens.access_token)).toMatchObject({
      active: true, sub: user.userId, token_type: 'DPoP', cnf: { jkt: key.jkt },
    });
    // RFC 9449 §7.1 at validate_jwt_token: the resource server passes the proof it received (key, ath, its method and URL)
    const api = 'https://api.example/docs/1';
    const validate = (extra: Record<string, unknown>) => postJson(`${d.url}/v1/validate_jwt_token`, { token_type: 'access_token', token: tokens.access_token, ...extra }, { origin: d.url });
    const noProof = await validate({});
    expect({ status: noProof.status, message: noProof.body.message }).toEqual({ status: 401, message: expect.stringContaining('needs its DPoP proof') });
    const rsProof = await proof(key.pair, key.jwk, { htm: 'GET', htu: api, ath: ath(tokens.access_token) });
    const valid = await validate({ dpop_proof: rsProof, dpop_method: 'GET', dpop_url: api });
    expect({ status: valid.status, is_valid: valid.body.is_valid, cnf: valid.body.claims?.cnf }).toEqual({ status: 200, is_valid: true, cnf: { jkt: key.jkt } });
    expect((await validate({ dpop_proof: rsProof, dpop_method: 'GET', dpop_url: api })).status).toBe(401);
    const stranger = await dpopKey(confidentialRp);
    const foreign = await validate({ dpop_proof: await proof(stranger.pair, stranger.jwk, { htm: 'GET', htu: api, ath: ath(tokens.access_token) }), dpop_method: 'GET', dpop_url: api });
    expect({ status: foreign.status, message: foreign.body.message }).toEqual({ status: 401, message: expect.stringContaining('another key') });
    const cc = await oidc.clientCredentialsGrant(confidentialRp, {}, { DPoP: key.handle });
    expect({ type: cc.token_type, cnf: decodeJwt(cc.access_token).cnf }).toEqual({ type: 'dpop', cnf: { jkt: key.jkt } });

    const bearer = await codeFlow(confidentialRp, undefined, 'openid email');
    expect(bearer.tokens.token_type).toBe('bearer');
    expect(decodeJwt(bearer.tokens.access_token).cnf).toBeUndefined();
    expect(await oidc.fetchUserInfo(confidentialRp, bearer.tokens.access_token, bearer.user.userId)).toMatchObject({ sub: bearer.user.userId });
    expect(await oidc.tokenIntrospection(confidentialRp, bearer.tokens.access_token)).toMatchObject({ active: true, token_type: 'Bearer' });
    expect(await oidc.tokenIntrospection(confidentialRp, bearer.tokens.access_token)).not.toHaveProperty('cnf');
  });
});
