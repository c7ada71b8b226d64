/**
 * @module test/e2e/oauth-logout
 * Issue 34 §6, logout that reaches relying parties, with openid-client as the relying party and a test
 * RP server on 127.0.0.1 (the deployment runs with --allow-private-webhook-targets so the outbound guard
 * lets the worker reach it): the ID token's `sid` names the browser's sign-on session; `/v1/logout` and
 * RP-initiated `/logout` queue an OIDC Back-Channel Logout 1.0 logout token that the notifications
 * worker POSTs as `logout_token` (verified here with jose against the JWKS: typ, iss, aud, sub, sid,
 * events, no nonce); the end-session page frames the client's `frontchannel_logout_uri` with `iss` and
 * `sid` (Front-Channel Logout 1.0 §4) and its CSP admits that origin; discovery advertises both.
 */
import { generateKeyPairSync } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import * as oidc from 'openid-client';
import { createRemoteJWKSet, decodeJwt, jwtVerify } from 'jose';
import { startDeployment, type Deployment } from '@gatehouse/testing';
import { postJson } from '../support/http.ts';
import { PASSWORD, freshEmail } from '../support/scenario.ts';

const CALLBACK = 'http://127.0.0.1:9/rp/callback';
const BYE = 'http://127.0.0.1:9/rp/bye';
const EVENT = 'http://schemas.openid.net/event/backchannel-logout';

describe.each(['all', 'split'] as const)('OIDC back-channel and front-channel logout (%s)', (mode) => {
  let d: Deployment;
  let rpServer: Server;
  let rpUrl: string;
  const received: { contentType: string; body: URLSearchParams }[] = [];
  let rp: { id: string; secret: string };
  let config: oidc.Configuration;

  async function loggedIn(): Promise<{ cookie: string; userId: string; v1Token: string }> {
    const email = freshEmail('logout');
    expect((await postJson(`${d.url}/v1/signup`, { email, password: PASSWORD, confirm_password: PASSWORD }, { origin: d.url })).status).toBe(200);
    const login = await postJson(`${d.url}/v1/login`, { email, password: PASSWORD }, { origin: d.url });
    const cookie = login.headers.getSetCookie().map((c) => c.split(';')[0]!).find((c) => c.startsWith('cookie_session='))!;
    return { cookie, userId: login.body.user.id, v1Token: login.body.access_token };
  }

  async function codeFlow(cookie: string) {
    const verifier = oidc.randomPKCECodeVerifier();
    const state = oidc.randomState();
    const nonce = oidc.randomNonce();
    const url = oidc.buildAuthorizationUrl(config, {
      redirect_uri: CALLBACK, scope: 'openid email', state, nonce, code_challenge: await oidc.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256',
    });
    const res = await fetch(url, { redirect: 'manual', headers: { cookie } });
    return oidc.authorizationCodeGrant(config, new URL(res.headers.get('location') ?? ''), { pkceCodeVerifier: verifier, expectedState: state, expectedNonce: nonce });
  }

  /** Waits (up to 60 s) for the RP server to receive a logout token for `sid`. */
  async function logoutTokenFor(sid: string): Promise<{ contentType: string; token: string }> {
    const deadline = Date.now() + 60_000;
    for (;;) {
      const hit = received.find((r) => { const t = r.body.get('logout_token'); return t !== null && decodeJwt(t).sid === sid; });
      if (hit) return { contentType: hit.contentType, token: hit.body.get('logout_token')! };
      if (Date.now() > deadline) throw new Error(`no logout token for sid ${sid}; received ${received.length}`);
      await new Promise((r) => setTimeout(r, 250));
    }
  }

  beforeAll(async () => {
    rpServer = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => { body += c.toString('utf8'); });
      req.on('end', () => {
        if (req.method === 'POST' && req.url === '/backchannel') received.push({ contentType: String(req.headers['content-type']), body: new URLSearchParams(body) });
        res.writeHead(200, { 'cache-control': 'no-store' }).end();
      });
    });
    await new Promise<void>((r) => rpServer.listen(0, '127.0.0.1', r));
    rpUrl = `http://127.0.0.1:${(rpServer.address() as AddressInfo).port}`;
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
    const pem = privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();
    const pub = publicKey.export({ format: 'pem', type: 'spki' }).toString();
    d = await startDeployment(mode, {
      readyTimeoutMs: 240_000, flags: ['--jwt-type=ES256', `--jwt-private-key=${pem}`, `--jwt-public-key=${pub}`, '--allow-private-webhook-targets'],
    });
    const created = await postJson(`${d.url}/v1/admin/create_client`, {
      name: 'logout rp', allowed_scopes: ['openid', 'email'], redirect_uris: [CALLBACK], post_logout_redirect_uris: [BYE],
      grant_types: ['authorization_code'], is_first_party: true,
      backchannel_logout_uri: `${rpUrl}/backchannel`, backchannel_logout_session_required: true,
      frontchannel_logout_uri: `${rpUrl}/frontchannel`, frontchannel_logout_session_required: true,
    }, { origin: d.url, 'x-service-admin-secret': d.adminSecret });
    expect(created.status).toBe(200);
    expect(created.body.client).toMatchObject({ backchannel_logout_uri: `${rpUrl}/backchannel`, frontchannel_logout_session_required: true });
    rp = { id: created.body.client.client_id, secret: created.body.client_secret };
    config = await oidc.discovery(new URL(d.url), rp.id, { redirect_uris: [CALLBACK] }, oidc.ClientSecretBasic(rp.secret), { execute: [oidc.allowInsecureRequests] });
  }, 300_000);
  afterAll(async () => {
    await d?.stop();
    await new Promise((r) => rpServer?.close(r));
  });

  it('discovery advertises back-channel and front-channel logout with sid', () => {
    expect(config.serverMetadata()).toMatchObject({
      backchannel_logout_supported: true, backchannel_logout_session_supported: true, frontchannel_logout_supported: true, frontchannel_logout_session_supported: true,
    });
  });

  it('/v1/logout: the RP server receives a logout token for the sign-on session, verified against the JWKS; the grant ends', async () => {
    const user = await loggedIn();
    const tokens = await codeFlow(user.cookie);
    const sid = tokens.claims()!.sid as string;
    // the grant's sid is the browser's sign-on session: the /v1 login's own token carries the same
    expect(decodeJwt(user.v1Token).nonce).toBe(sid);
    expect((await postJson(`${d.url}/v1/logout`, {}, { origin: d.url, authorization: `Bearer ${user.v1Token}` })).status).toBe(200);
    const { contentType, token } = await logoutTokenFor(sid);
    expect(contentType).toBe('application/x-www-form-urlencoded');
    const jwks = createRemoteJWKSet(new URL(String(config.serverMetadata().jwks_uri)));
    const { payload } = await jwtVerify(token, jwks, { typ: 'logout+jwt', issuer: d.url, audience: rp.id, maxTokenAge: 120 });
    expect(payload).toMatchObject({ sub: user.userId, sid, events: { [EVENT]: {} }, jti: expect.any(String) });
    expect(payload).not.toHaveProperty('nonce');
    expect((await oidc.tokenIntrospection(config, tokens.access_token)).active).toBe(false);
  });

  it('RP-initiated /logout frames the frontchannel_logout_uri with iss and sid, then continues; the back channel hears it too', async () => {
    const user = await loggedIn();
    const tokens = await codeFlow(user.cookie);
    const sid = tokens.claims()!.sid as string;
    const url = oidc.buildEndSessionUrl(config, { id_token_hint: tokens.id_token!, post_logout_redirect_uri: BYE, state: 'bye' });
    const res = await fetch(url, { redirect: 'manual', headers: { cookie: user.cookie } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-security-policy')).toContain(`frame-src ${rpUrl}`);
    const html = await res.text();
    const srcs = [...html.matchAll(/<iframe class="rp-logout" src="([^"]+)"/g)].map((m) => new URL(m[1]!.replaceAll('&#38;', '&')));
    expect(srcs.map((u) => [u.origin + u.pathname, u.searchParams.get('iss'), u.searchParams.get('sid')])).toEqual([[`${rpUrl}/frontchannel`, d.url, sid]]);
    expect(html).toContain(`${BYE}?state=bye`);
    const { token } = await logoutTokenFor(sid);
    expect(decodeJwt(token)).toMatchObject({ aud: rp.id, sub: user.userId, sid });
    expect((await oidc.tokenIntrospection(config, tokens.access_token)).active).toBe(false);
  });
});
