/**
 * @module @gatehouse/authn/domain/oauth.test
 * The OAuth 2.0 / OIDC domain through authn's RPCs on memory storage and a fake clock (issue 18):
 * clients (§5.8), /authorize (RFC 6749 §4.1, RFC 7636), the token endpoint's grants (rotation and
 * reuse rules of behaviour.md §2.2), client_credentials, revocation, introspection and userinfo.
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from '@jest/globals';
import { decodeJwt } from 'jose';
import { makeAuthn, URL_ } from '../fixture.ts';
import { DOUBLE_SUBMIT_SECONDS, pkceMatches } from './oauth-token.ts';
import { parseBasic } from './oauth-client-auth.ts';

const CB = 'https://rp.example/cb';
const VERIFIER = 'v'.repeat(43);
const CHALLENGE = createHash('sha256').update(VERIFIER).digest('base64url');
const ADMIN = { 'x-service-admin-secret': 'admin-secret' };

async function setup() {
  const a = makeAuthn();
  const { res } = await a.call('CreateClient', { name: 'rp', allowed_scopes: ['openid', 'profile', 'email', 'offline_access', 'api'], redirect_uris: [CB], grant_types: ['authorization_code', 'refresh_token', 'client_credentials'], is_first_party: true }, ADMIN);
  const client = { id: res.client.client_id as string, secret: res.client_secret as string };
  const basic = { authorization: `Basic ${Buffer.from(`${client.id}:${client.secret}`).toString('base64')}` };
  const user = await a.signup('ada@example.com');
  const http = async (rpc: string, params: Record<string, string>, headers: Record<string, string> = {}, method = 'POST') =>
    (await a.call(rpc, { params, method }, headers)).res;
  const authorize = (params: Record<string, string>, cookie = user.cookie) =>
    http('Authorize', { client_id: client.id, redirect_uri: CB, response_type: 'code', scope: 'openid email offline_access', code_challenge: CHALLENGE, code_challenge_method: 'S256', state: 's1', nonce: 'n1', ...params }, cookie, 'GET');
  const codeOf = (location: string) => new URL(location).searchParams.get('code')!;
  const redeem = (code: string, extra: Record<string, string> = {}) => http('OauthToken', { grant_type: 'authorization_code', code, redirect_uri: CB, code_verifier: VERIFIER, ...extra }, basic);
  return { a, client, basic, user, http, authorize, codeOf, redeem };
}

describe('clients (behaviour.md §5.8)', () => {
  it('create returns a 43-char secret once, stored as an HMAC; the own client is listed and immutable', async () => {
    const { a, client } = await setup();
    expect(client.secret).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const list = (await a.call('Clients', {}, ADMIN)).res;
    expect(list.clients.map((c: { client_id: string }) => c.client_id)).toEqual([client.id, 'client-123']);
    expect(list.pagination.total).toBe(2);
    await expect(a.call('DeleteClient', { id: 'client-123' }, ADMIN)).rejects.toMatchObject({ code: 'failed_precondition' });
    await expect(a.call('CreateClient', { name: 'x', allowed_scopes: ['a'], grant_types: ['password'] }, ADMIN)).rejects.toMatchObject({ code: 'invalid_argument' });
  });
});

describe('/authorize and the authorization_code grant', () => {
  it('issues a single-use code bound to client, redirect URI and PKCE verifier; a replay revokes its tokens', async () => {
    const { authorize, codeOf, redeem, http, basic } = await setup();
    const r = await authorize({});
    expect(r.status).toBe(302);
    const loc = new URL(r.location);
    expect(loc.searchParams.get('state')).toBe('s1');
    expect(loc.searchParams.get('iss')).toBe(URL_);
    const code = codeOf(r.location);
    expect((await redeem(code, { code_verifier: 'w'.repeat(43) })).body.error).toBe('invalid_grant');
    // the failed attempt consumed it: single use
    expect((await redeem(code)).body.error).toBe('invalid_grant');
    const fresh = codeOf((await authorize({})).location);
    const ok = await redeem(fresh);
    expect(ok.status).toBe(200);
    expect(decodeJwt(ok.body.id_token)).toMatchObject({ nonce: 'n1', sid: expect.any(String), at_hash: expect.any(String) });
    expect((await http('OauthIntrospect', { token: ok.body.access_token }, basic)).body.active).toBe(true);
    expect((await redeem(fresh)).body.error).toBe('invalid_grant');
    expect((await http('OauthIntrospect', { token: ok.body.access_token }, basic)).body.active).toBe(false);
  });

  it('an ID token carries the nonce its request sent, none when the request sent none, and none on refresh', async () => {
    const { authorize, codeOf, redeem, http, basic } = await setup();
    const withNonce = await redeem(codeOf((await authorize({})).location));
    expect(decodeJwt(withNonce.body.id_token).nonce).toBe('n1');
    const without = await redeem(codeOf((await authorize({ nonce: '' })).location));
    expect(without.status).toBe(200);
    expect(decodeJwt(without.body.id_token)).not.toHaveProperty('nonce');
    // the access token is still tied to its session (introspection answers active)
    expect((await http('OauthIntrospect', { token: without.body.access_token }, basic)).body.active).toBe(true);
    const refreshed = await http('OauthToken', { grant_type: 'refresh_token', refresh_token: withNonce.body.refresh_token }, basic);
    expect(refreshed.status).toBe(200);
    expect(decodeJwt(refreshed.body.id_token)).not.toHaveProperty('nonce');
  });

  it('codes expire within 60 s', async () => {
    const { a, authorize, codeOf, redeem } = await setup();
    const code = codeOf((await authorize({})).location);
    a.advance(61);
    expect((await redeem(code)).body).toEqual({ error: 'invalid_grant', error_description: 'authorization code expired' });
  });

  it('never redirects to an unregistered URI; errors go to a registered one; no session → the login page', async () => {
    const { authorize } = await setup();
    const bad = await authorize({ redirect_uri: `${CB}/` });
    expect(bad).toMatchObject({ status: 400, location: null });
    expect(bad.html).toContain('redirect_uri is not registered');
    const scope = await authorize({ scope: 'openid admin' });
    expect(new URL(scope.location).searchParams.get('error')).toBe('invalid_scope');
    const none = await authorize({ prompt: 'none' }, {} as never);
    expect(new URL(none.location).searchParams.get('error')).toBe('login_required');
    const login = await authorize({}, {} as never);
    const page = new URL(login.location);
    expect(page.pathname).toBe('/app/login');
    expect(page.searchParams.get('return_to')).toMatch(/^\/authorize\?/);
    expect(page.searchParams.has('prompt')).toBe(false);
    const plain = await authorize({ code_challenge_method: 'plain' });
    expect(new URL(plain.location).searchParams.get('error')).toBe('invalid_request');
    const form = await authorize({ response_mode: 'form_post' });
    expect(form.html).toContain(`action="${CB}"`);
  });
});

describe('RFC 8707 resource indicators at /authorize and /oauth/token', () => {
  const MCP = `${URL_}/mcp`;

  it('the access token is for the requested resource (aud), its refresh keeps it; the ID token stays the client\'s', async () => {
    const { authorize, codeOf, redeem, http, basic, client } = await setup();
    const ok = await redeem(codeOf((await authorize({ resource: MCP })).location), { resource: MCP });
    expect(ok.status).toBe(200);
    expect(decodeJwt(ok.body.access_token)).toMatchObject({ aud: MCP, client_id: client.id });
    expect(decodeJwt(ok.body.id_token).aud).toBe(client.id);
    // without resource at the token endpoint, the token is for every resource of the request (§2.2)
    const implied = await redeem(codeOf((await authorize({ resource: MCP })).location));
    expect(decodeJwt(implied.body.access_token).aud).toBe(MCP);
    const refreshed = await http('OauthToken', { grant_type: 'refresh_token', refresh_token: ok.body.refresh_token }, basic);
    expect(refreshed.status).toBe(200);
    expect(decodeJwt(refreshed.body.access_token).aud).toBe(MCP);
    expect((await http('OauthToken', { grant_type: 'refresh_token', refresh_token: refreshed.body.refresh_token, resource: 'https://other.example/api' }, basic)).body)
      .toMatchObject({ error: 'invalid_target' });
    // a request without resource keeps the client as the audience
    expect(decodeJwt((await redeem(codeOf((await authorize({})).location))).body.access_token).aud).toBe(client.id);
  });

  it('refuses a resource the request did not name, a relative URI and a fragment (invalid_target)', async () => {
    const { authorize, codeOf, redeem } = await setup();
    expect((await redeem(codeOf((await authorize({ resource: MCP })).location), { resource: 'https://other.example/api' })).body)
      .toEqual({ error: 'invalid_target', error_description: 'resource was not part of the authorization request' });
    expect((await redeem(codeOf((await authorize({})).location), { resource: MCP })).body.error).toBe('invalid_target');
    for (const bad of ['/mcp', `${MCP}#x`]) {
      const r = await authorize({ resource: bad });
      expect(new URL(r.location).searchParams.get('error')).toBe('invalid_target');
    }
  });
});

describe('/authorize with prompt=login and max_age (OIDC Core §3.1.2.1)', () => {
  it('sends a browser with a live session to the page with prompt=login, and return_to without it (no loop)', async () => {
    const { a, authorize } = await setup();
    for (const params of [{ prompt: 'login' }, { max_age: '10' }] as Record<string, string>[]) {
      if (params.max_age) a.advance(11);
      const r = await authorize(params);
      const page = new URL(r.location);
      expect({ params, path: page.pathname, prompt: page.searchParams.get('prompt') }).toEqual({ params, path: '/app/login', prompt: 'login' });
      const back = new URLSearchParams(page.searchParams.get('return_to')!.split('?')[1]);
      expect({ params, prompt: back.get('prompt'), max_age: back.get('max_age'), state: back.get('state') }).toEqual({ params, prompt: null, max_age: null, state: 's1' });
    }
    // a fresh enough session: the code at once
    expect(new URL((await authorize({ max_age: '3600' })).location).searchParams.get('code')).toEqual(expect.any(String));
  });
});

describe('refresh_token grant (behaviour.md §2.2)', () => {
  it('rotates; the immediate predecessor within 10 s gets invalid_grant without revocation; later, it revokes the family', async () => {
    const { a, authorize, codeOf, redeem, http, basic } = await setup();
    const t0 = (await redeem(codeOf((await authorize({})).location))).body;
    const t1 = (await http('OauthToken', { grant_type: 'refresh_token', refresh_token: t0.refresh_token }, basic)).body;
    expect(t1.refresh_token).not.toBe(t0.refresh_token);
    expect((await http('OauthToken', { grant_type: 'refresh_token', refresh_token: t0.refresh_token }, basic)).body.error).toBe('invalid_grant');
    expect((await http('OauthIntrospect', { token: t1.refresh_token }, basic)).body.active).toBe(true);
    a.advance(DOUBLE_SUBMIT_SECONDS + 1);
    expect((await http('OauthToken', { grant_type: 'refresh_token', refresh_token: t0.refresh_token }, basic)).body.error).toBe('invalid_grant');
    expect((await http('OauthIntrospect', { token: t1.refresh_token }, basic)).body.active).toBe(false);
  });
});

describe('a deactivated or deleted client (behaviour.md §2.2, §5.8)', () => {
  it('ends the user sessions issued through it: their access tokens are refused on the next request; the user\'s own session lives', async () => {
    for (const rpc of ['UpdateClient', 'DeleteClient'] as const) {
      const { a, client, user, authorize, codeOf, redeem } = await setup();
      const issued = (await redeem(codeOf((await authorize({})).location))).body;
      const bearer = { authorization: `Bearer ${issued.access_token}` };
      expect((await a.call('Profile', {}, bearer)).res.email).toBe('ada@example.com');
      await a.call(rpc, rpc === 'UpdateClient' ? { id: client.id, is_active: false } : { id: client.id }, ADMIN);
      await expect(a.call('Profile', {}, bearer)).rejects.toMatchObject({ code: 'unauthenticated' });
      expect((await a.call('Profile', {}, user.cookie)).res.email).toBe('ada@example.com');
    }
  });
});

describe('client_credentials and the service-account token', () => {
  it('issues service_account:<id> within allowed_scopes; unknown secrets are invalid_client (401)', async () => {
    const { a, client, http, basic } = await setup();
    const ok = await http('OauthToken', { grant_type: 'client_credentials', scope: 'api' }, basic);
    expect(decodeJwt(ok.body.access_token)).toMatchObject({ sub: `service_account:${client.id}`, scope: 'api' });
    expect((await http('OauthToken', { grant_type: 'client_credentials', scope: 'root' }, basic)).body.error).toBe('invalid_scope');
    const wrong = await http('OauthToken', { grant_type: 'client_credentials', client_id: client.id, client_secret: 'nope' });
    expect(wrong).toMatchObject({ status: 401, body: { error: 'invalid_client' } });
    // refused as a user credential
    await expect(a.call('Profile', {}, { authorization: `Bearer ${ok.body.access_token}` })).rejects.toMatchObject({ code: 'unauthenticated' });
    expect((await http('Userinfo', {}, { authorization: `Bearer ${ok.body.access_token}` })).status).toBe(401);
    await a.call('UpdateClient', { id: client.id, is_active: false }, ADMIN);
    expect((await http('OauthToken', { grant_type: 'client_credentials' }, basic)).status).toBe(401);
  });

  it('unsupported grants and missing parameters are RFC 6749 §5.2 errors', async () => {
    const { http, basic } = await setup();
    expect((await http('OauthToken', { grant_type: 'password' }, basic)).body.error).toBe('unsupported_grant_type');
    expect((await http('OauthToken', {}, basic)).body.error).toBe('invalid_request');
  });
});

describe('helpers', () => {
  it('PKCE S256 (RFC 7636 appendix B) and Basic credentials (RFC 6749 §2.3.1)', () => {
    expect(pkceMatches('dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk', 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM')).toBe(true);
    expect(pkceMatches('short', 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM')).toBe(false);
    expect(parseBasic(`Basic ${Buffer.from('a%3Ab:c%20d').toString('base64')}`)).toEqual({ id: 'a:b', secret: 'c d' });
    expect(parseBasic('Bearer x')).toBeNull();
  });
});
