/**
 * @module @gatehouse/authn/domain/rp-logout.test
 * Logout that reaches relying parties (issue 34 §6) through authn's RPCs on memory storage: `sid`
 * names the browser's sign-on session (shared by the grants made in it, kept across refresh); the
 * logout token (OIDC Back-Channel Logout 1.0 §2.4) queued in the outbox on /v1/logout, RP-initiated
 * logout, revoke_access and password reset; the front-channel iframes of the end-session page
 * (Front-Channel Logout 1.0 §4); the client metadata on create/update and RFC 7591 registration.
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from '@jest/globals';
import { createLocalJWKSet, decodeJwt, jwtVerify } from 'jose';
import { cookieHeader, makeAuthn, URL_ } from '../fixture.ts';
import { BACKCHANNEL_LOGOUT_EVENT, LOGOUT_TOKEN_TTL_SECONDS } from './rp-logout.ts';

const CB = 'https://rp.example/cb';
const BACK = 'https://rp.example/backchannel';
const FRONT = 'https://rp.example/frontchannel?x=1';
const VERIFIER = 'v'.repeat(43);
const CHALLENGE = createHash('sha256').update(VERIFIER).digest('base64url');
const ADMIN = { 'x-service-admin-secret': 'admin-secret' };

async function setup(logout: Record<string, unknown> = {}) {
  const a = makeAuthn();
  const create = async (name: string, extra: Record<string, unknown>) => {
    const { res } = await a.call('CreateClient', {
      name, allowed_scopes: ['openid', 'email', 'offline_access'], redirect_uris: [CB], post_logout_redirect_uris: ['https://rp.example/bye'],
      grant_types: ['authorization_code', 'refresh_token'], is_first_party: true, ...extra,
    }, ADMIN);
    const basic = { authorization: `Basic ${Buffer.from(`${res.client.client_id}:${res.client_secret}`).toString('base64')}` };
    return { id: res.client.client_id as string, basic, wire: res.client };
  };
  const rp = await create('rp', {
    backchannel_logout_uri: BACK, backchannel_logout_session_required: true, frontchannel_logout_uri: FRONT, frontchannel_logout_session_required: true, ...logout,
  });
  const other = await create('other', { backchannel_logout_uri: 'https://other.example/bc' });
  const user = await a.signup('ada@example.com');
  const http = async (rpc: string, params: Record<string, string>, headers: Record<string, string> = {}, method = 'POST') =>
    (await a.call(rpc, { params, method }, headers)).res;
  /** a code flow of `client` in the browser session of `cookie`: the token response */
  const grant = async (client: { id: string; basic: Record<string, string> }, cookie = user.cookie) => {
    const r = await http('Authorize', {
      client_id: client.id, redirect_uri: CB, response_type: 'code', scope: 'openid email offline_access', code_challenge: CHALLENGE,
      code_challenge_method: 'S256', state: 's', nonce: 'n',
    }, cookie, 'GET');
    const code = new URL(r.location).searchParams.get('code')!;
    return (await http('OauthToken', { grant_type: 'authorization_code', code, redirect_uri: CB, code_verifier: VERIFIER }, client.basic)).body;
  };
  const jobs = () => a.storage.published.filter((e) => e.name === 'oauth.backchannel_logout').map((e) => e.data as Record<string, string>);
  const active = async (client: { basic: Record<string, string> }, token: string) => (await http('OauthIntrospect', { token }, client.basic)).body.active;
  return { a, rp, other, user, http, grant, jobs, active };
}

describe('sid names the browser sign-on session (issue 34 §6)', () => {
  it('is the login session for first-party tokens, shared by every grant made in it, and kept across refresh', async () => {
    const { a, rp, other, user, grant, http } = await setup();
    const loginSid = decodeJwt(user.res.id_token).sid;
    const first = await grant(rp);
    const second = await grant(other);
    expect(decodeJwt(first.id_token).sid).toBe(loginSid);
    expect(decodeJwt(second.id_token).sid).toBe(loginSid);
    // each grant is a session of its own (its access token's nonce), not the browser's
    expect(decodeJwt(first.access_token).nonce).not.toBe(loginSid);
    const refreshed = (await http('OauthToken', { grant_type: 'refresh_token', refresh_token: first.refresh_token }, rp.basic)).body;
    expect(decodeJwt(refreshed.id_token).sid).toBe(loginSid);
    // another login is another sign-on session
    const again = await a.call('Login', { email: 'ada@example.com', password: 'Str0ng!pass' });
    expect(decodeJwt(again.res.id_token).sid).not.toBe(loginSid);
  });
});

describe('OIDC Back-Channel Logout 1.0', () => {
  it('/v1/logout queues one signed logout token per relying party of the session, and ends their grants', async () => {
    const { a, rp, other, user, grant, jobs, active } = await setup();
    const sid = decodeJwt(user.res.id_token).sid;
    const tokens = await grant(rp);
    await grant(rp);
    const theirs = await grant(other);
    expect(jobs()).toEqual([]);
    await a.call('Logout', {}, user.bearer);
    const queued = jobs();
    expect(queued.map((j) => [j.client_id, j.backchannel_logout_uri]).sort()).toEqual([[other.id, 'https://other.example/bc'], [rp.id, BACK]].sort());
    const job = queued.find((j) => j.client_id === rp.id)!;
    // §2.4: verified against the published JWKS; typ logout+jwt; no nonce
    const { payload, protectedHeader } = await jwtVerify(job.logout_token!, createLocalJWKSet(a.jwt.jwks()), { issuer: URL_, audience: rp.id, currentDate: new Date(a.now() * 1000) });
    expect(protectedHeader.typ).toBe('logout+jwt');
    expect(payload).toEqual({
      iss: URL_, aud: rp.id, sub: user.res.user.id, sid, iat: a.now(), exp: a.now() + LOGOUT_TOKEN_TTL_SECONDS, jti: expect.any(String),
      events: { [BACKCHANNEL_LOGOUT_EVENT]: {} },
    });
    expect(payload).not.toHaveProperty('nonce');
    // the grants made in the session end with it
    expect(await active(rp, tokens.access_token)).toBe(false);
    expect(await active(other, theirs.access_token)).toBe(false);
  });

  it('a grant made in another browser session is not logged out, and a client is told once', async () => {
    const { a, rp, user, grant, jobs, active } = await setup();
    const elsewhere = await a.call('Login', { email: 'ada@example.com', password: 'Str0ng!pass' });
    const kept = await grant(rp, cookieHeader(elsewhere.cookies));
    await grant(rp);
    await a.call('Logout', {}, user.bearer);
    expect(jobs()).toHaveLength(1);
    expect(decodeJwt(jobs()[0]!.logout_token!).sid).toBe(decodeJwt(user.res.id_token).sid);
    expect(await active(rp, kept.access_token)).toBe(true);
  });

  it('revoke_access tells the relying parties of every sign-on session of the user', async () => {
    const { a, rp, user, grant, jobs } = await setup();
    const elsewhere = await a.call('Login', { email: 'ada@example.com', password: 'Str0ng!pass' });
    await grant(rp);
    await grant(rp, cookieHeader(elsewhere.cookies));
    await a.call('RevokeAccess', { user_id: user.res.user.id }, ADMIN);
    const sids = jobs().map((j) => decodeJwt(j.logout_token!).sid);
    expect(new Set(sids)).toEqual(new Set([decodeJwt(user.res.id_token).sid, decodeJwt(elsewhere.res.id_token).sid]));
  });

  it('a client without a backchannel_logout_uri gets no job', async () => {
    const { a, rp, user, grant, jobs } = await setup({ backchannel_logout_uri: '' });
    expect(rp.wire.backchannel_logout_uri ?? null).toBeNull();
    await grant(rp);
    await a.call('Logout', {}, user.bearer);
    expect(jobs()).toEqual([]);
  });
});

describe('OIDC Front-Channel Logout 1.0 and RP-initiated logout', () => {
  it('the end-session page frames the frontchannel_logout_uri with iss and sid, then goes on to post_logout_redirect_uri', async () => {
    const { rp, user, grant, http, jobs, active } = await setup();
    const tokens = await grant(rp);
    const sid = decodeJwt(tokens.id_token).sid as string;
    const res = await http('EndSession', { id_token_hint: tokens.id_token, post_logout_redirect_uri: 'https://rp.example/bye', state: 'st' }, user.cookie, 'GET');
    expect(res.status).toBe(200);
    expect(res.frame_src).toBe('https://rp.example');
    const srcs = [...(res.html as string).matchAll(/<iframe class="rp-logout" src="([^"]+)"/g)].map((m) => new URL(m[1]!.replaceAll('&#38;', '&')));
    expect(srcs.map((u) => [u.origin + u.pathname, u.searchParams.get('x'), u.searchParams.get('iss'), u.searchParams.get('sid')]))
      .toEqual([['https://rp.example/frontchannel', '1', URL_, sid]]);
    expect(res.html).toContain('https://rp.example/bye?state=st');
    expect(jobs().map((j) => j.client_id)).toEqual([rp.id]);
    expect(await active(rp, tokens.access_token)).toBe(false);
  });

  it('without front-channel clients RP-initiated logout still redirects at once', async () => {
    const { rp, user, grant, http } = await setup({ frontchannel_logout_uri: '' });
    const tokens = await grant(rp);
    const res = await http('EndSession', { id_token_hint: tokens.id_token, post_logout_redirect_uri: 'https://rp.example/bye' }, user.cookie, 'GET');
    expect({ status: res.status, location: res.location }).toEqual({ status: 302, location: 'https://rp.example/bye' });
  });
});

describe('client logout metadata', () => {
  it('admin create/update validate and clear the URIs; RFC 7591 registration echoes them', async () => {
    const { a, rp } = await setup();
    expect(rp.wire).toMatchObject({ backchannel_logout_uri: BACK, backchannel_logout_session_required: true, frontchannel_logout_uri: FRONT, frontchannel_logout_session_required: true });
    await expect(a.call('UpdateClient', { id: rp.id, backchannel_logout_uri: 'https://rp.example/b#frag' }, ADMIN))
      .rejects.toMatchObject({ code: 'invalid_argument', message: 'backchannel_logout_uri must be an absolute http(s) URL without a fragment' });
    await expect(a.call('UpdateClient', { id: rp.id, frontchannel_logout_uri: 'javascript:alert(1)' }, ADMIN)).rejects.toMatchObject({ code: 'invalid_argument' });
    const cleared = (await a.call('UpdateClient', { id: rp.id, frontchannel_logout_uri: '' }, ADMIN)).res;
    expect(cleared.frontchannel_logout_uri ?? null).toBeNull();
    expect(cleared.backchannel_logout_uri).toBe(BACK);
    const reg = (await a.call('RegisterClient', { params: {
      redirect_uris: ['http://127.0.0.1/cb'], backchannel_logout_uri: 'http://127.0.0.1:9/bc', backchannel_logout_session_required: true,
    }, method: 'POST' }, { 'x-forwarded-for': '203.0.113.9' })).res;
    expect(reg.status).toBe(201);
    expect(reg.body).toMatchObject({ backchannel_logout_uri: 'http://127.0.0.1:9/bc', backchannel_logout_session_required: true });
    const refused = (await a.call('RegisterClient', { params: { redirect_uris: ['http://127.0.0.1/cb'], frontchannel_logout_uri: 'http://evil.example/f' }, method: 'POST' })).res;
    expect(refused.body.error).toBe('invalid_client_metadata');
  });
});
