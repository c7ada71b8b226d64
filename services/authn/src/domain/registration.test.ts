/**
 * @module @gatehouse/authn/domain/registration.test
 * Registration without an admin (issue 34 §2) through authn's RPCs on memory storage: RFC 7591
 * registration of public clients (metadata rules and errors of §3.2.2, the per-address limit and the
 * registry ceiling, off by default), RFC 7592 read/update/delete with the registration access token,
 * and the RFC 8252 redirect URI rules (loopback on any port, private-use schemes).
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from '@jest/globals';
import { makeAuthn } from '../fixture.ts';
import { REGISTRATIONS_PER_ADDRESS_PER_HOUR, redirectUriMatches, redirectUriProblem } from './registration.ts';

const CHALLENGE = createHash('sha256').update('v'.repeat(43)).digest('base64url');

function setup(options: Parameters<typeof makeAuthn>[0] = {}) {
  const a = makeAuthn(options);
  const register = async (params: Record<string, unknown>) => (await a.call('RegisterClient', { params, method: 'POST' })).res;
  const manage = async (method: string, id: string, token: string | null, params: Record<string, unknown> = {}) =>
    (await a.call('ManageRegisteredClient', { params, method, resource_id: id }, token ? { authorization: `Bearer ${token}` } : {})).res;
  return { a, register, manage };
}

describe('RFC 8252 redirect URIs', () => {
  it('a registered loopback http URI matches any port; anything else matches exactly', () => {
    expect(redirectUriMatches('http://127.0.0.1/cb', 'http://127.0.0.1:53124/cb')).toBe(true);
    expect(redirectUriMatches('http://127.0.0.1:8080/cb', 'http://127.0.0.1:9/cb')).toBe(true);
    expect(redirectUriMatches('http://[::1]/cb', 'http://[::1]:4000/cb')).toBe(true);
    expect(redirectUriMatches('http://127.0.0.1/cb', 'http://127.0.0.1:53124/other')).toBe(false);
    expect(redirectUriMatches('http://127.0.0.1/cb', 'http://127.0.0.2:53124/cb')).toBe(false);
    expect(redirectUriMatches('https://app.example/cb', 'https://app.example:444/cb')).toBe(false);
    expect(redirectUriMatches('http://127.0.0.1/cb?x=1', 'http://127.0.0.1:5/cb?x=2')).toBe(false);
  });

  it('self-registered clients use https, loopback http or a reverse-domain private-use scheme', () => {
    expect(redirectUriProblem('https://app.example/cb')).toBeNull();
    expect(redirectUriProblem('http://127.0.0.1:3000/cb')).toBeNull();
    expect(redirectUriProblem('http://localhost/cb')).toBeNull();
    expect(redirectUriProblem('com.example.app:/oauth2redirect')).toBeNull();
    expect(redirectUriProblem('http://app.example/cb')).toContain('loopback');
    expect(redirectUriProblem('https://app.example/cb#x')).toContain('fragment');
    expect(redirectUriProblem('myapp:/cb')).toContain('private-use scheme');
    expect(redirectUriProblem('javascript:alert(1)')).toContain('private-use scheme');
    expect(redirectUriProblem('https://u:p@app.example/cb')).toContain('user information');
    expect(redirectUriProblem('not a uri')).toContain('not an absolute URI');
  });
});

describe('RFC 7591 registration', () => {
  it('discovery lists registration_endpoint (RFC 8414 §2) only when registration is on, and prompt=consent', async () => {
    const on = setup();
    expect((await on.a.call('GetOpenidConfiguration')).res).toMatchObject({ registration_endpoint: `${on.a.options.url}/oauth/register`, prompt_values_supported: ['none', 'login', 'consent'] });
    expect((await setup({ enableDynamicClientRegistration: false }).a.call('GetOpenidConfiguration')).res).not.toHaveProperty('registration_endpoint');
  });

  it('is off unless --enable-dynamic-client-registration', async () => {
    const { register, manage } = setup({ enableDynamicClientRegistration: false });
    expect(await register({ redirect_uris: ['https://app.example/cb'] })).toMatchObject({ status: 404 });
    expect(await manage('GET', 'x', 't')).toMatchObject({ status: 404 });
  });

  it('registers a public client that then runs the code flow with PKCE on a loopback port of its choosing', async () => {
    const { a, register } = setup();
    const r = await register({ client_name: 'CLI tool', redirect_uris: ['http://127.0.0.1/callback'], grant_types: ['authorization_code', 'refresh_token'], scope: 'openid email' });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({
      client_name: 'CLI tool', redirect_uris: ['http://127.0.0.1/callback'], grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'],
      token_endpoint_auth_method: 'none', scope: 'openid email', client_id_issued_at: expect.any(Number),
      registration_access_token: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/), registration_client_uri: `${a.options.url}/oauth/register/${r.body.client_id}`,
    });
    const client = (await a.call('Client', { id: r.body.client_id }, { 'x-service-admin-secret': 'admin-secret' })).res;
    expect(client).toMatchObject({ is_public: true, is_first_party: false, allowed_scopes: ['openid', 'email'] });

    const user = await a.signup('ada@example.com');
    const authorize = (params: Record<string, string>) => a.call('Authorize', {
      params: { client_id: r.body.client_id, response_type: 'code', scope: 'openid', state: 's', code_challenge: CHALLENGE, code_challenge_method: 'S256', ...params }, method: 'GET',
    }, user.cookie);
    // any port on the registered loopback URI (RFC 8252 §7.3): the consent page, not an error
    expect((await authorize({ redirect_uri: 'http://127.0.0.1:53124/callback' })).res).toMatchObject({ status: 200, html: expect.stringContaining('<strong>127.0.0.1:53124</strong>') });
    expect((await authorize({ redirect_uri: 'http://127.0.0.1:53124/other' })).res.html).toContain('redirect_uri is not registered');
    // a public client: PKCE is required
    const noPkce = (await authorize({ redirect_uri: 'http://127.0.0.1:9/callback', code_challenge: '', code_challenge_method: '' })).res;
    expect(new URL(noPkce.location).searchParams.get('error')).toBe('invalid_request');
  });

  it('refuses what RFC 7591 §3.2.2 names: bad redirect URIs, secrets, other grants and response types, unknown scopes', async () => {
    const { register } = setup();
    const err = async (params: Record<string, unknown>) => (await register(params)).body;
    expect(await err({})).toMatchObject({ error: 'invalid_redirect_uri' });
    expect(await err({ redirect_uris: 'https://app.example/cb' })).toMatchObject({ error: 'invalid_redirect_uri' });
    expect(await err({ redirect_uris: ['http://app.example/cb'] })).toMatchObject({ error: 'invalid_redirect_uri', error_description: expect.stringContaining('loopback') });
    expect(await err({ redirect_uris: ['https://app.example/cb'], token_endpoint_auth_method: 'client_secret_basic' })).toMatchObject({ error: 'invalid_client_metadata' });
    expect(await err({ redirect_uris: ['https://app.example/cb'], grant_types: ['client_credentials'] })).toMatchObject({ error: 'invalid_client_metadata' });
    expect(await err({ redirect_uris: ['https://app.example/cb'], response_types: ['token'] })).toMatchObject({ error: 'invalid_client_metadata' });
    expect(await err({ redirect_uris: ['https://app.example/cb'], scope: 'openid admin' })).toMatchObject({ error: 'invalid_client_metadata' });
    expect(await err({ redirect_uris: ['https://app.example/cb'], client_name: 7 })).toMatchObject({ error: 'invalid_client_metadata' });
    // defaults: the code grant, every OIDC scope, the redirect host as the name
    expect((await register({ redirect_uris: ['com.example.app:/cb', 'https://app.example/cb'] })).body).toMatchObject({
      client_name: 'com.example.app:/cb', grant_types: ['authorization_code'], scope: 'openid profile email phone offline_access',
    });
  });

  it('limits registrations per address per hour, and the registry by its ceiling', async () => {
    const { a, register } = setup({ dynamicClientRegistrationMaxClients: REGISTRATIONS_PER_ADDRESS_PER_HOUR + 2 });
    const meta = { redirect_uris: ['https://app.example/cb'] };
    for (let i = 0; i < REGISTRATIONS_PER_ADDRESS_PER_HOUR; i += 1) expect((await register(meta)).status).toBe(201);
    expect(await register(meta)).toMatchObject({ status: 429, body: { error: 'too_many_requests' } });
    a.advance(3601);
    expect((await register(meta)).status).toBe(201);
    expect((await register(meta)).status).toBe(201);
    expect(await register(meta)).toMatchObject({ status: 403, body: { error: 'access_denied', error_description: 'the client registry is full' } });
  });
});

describe('RFC 7592 management', () => {
  it('reads, replaces and deletes with the registration access token; anything else is 401 invalid_token', async () => {
    const { a, register, manage } = setup();
    const { body } = await register({ client_name: 'App', redirect_uris: ['https://app.example/cb'] });
    const id = body!.client_id as string;
    const token = body!.registration_access_token as string;
    expect((await manage('GET', id, token)).body).toMatchObject({ client_id: id, client_name: 'App' });
    expect((await manage('GET', id, token)).body).not.toHaveProperty('registration_access_token');
    expect(await manage('GET', id, 'wrong')).toMatchObject({ status: 401, body: { error: 'invalid_token' }, www_authenticate: 'Bearer error="invalid_token"' });
    expect(await manage('GET', id, null)).toMatchObject({ status: 401 });
    // an admin's client is not managed here
    const admins = (await a.call('CreateClient', { name: 'x', allowed_scopes: ['openid'], redirect_uris: ['https://x.example/cb'] }, { 'x-service-admin-secret': 'admin-secret' })).res;
    expect(await manage('GET', admins.client.client_id, token)).toMatchObject({ status: 401 });

    const put = await manage('PUT', id, token, { client_id: id, client_name: 'App 2', redirect_uris: ['https://app.example/cb2'] });
    expect(put).toMatchObject({ status: 200, body: { client_name: 'App 2', redirect_uris: ['https://app.example/cb2'] } });
    expect(await manage('PUT', id, token, { client_name: 'no id', redirect_uris: ['https://app.example/cb'] })).toMatchObject({ status: 400, body: { error: 'invalid_client_metadata' } });
    expect(await manage('PUT', id, token, { client_id: id, redirect_uris: ['http://evil.example/cb'] })).toMatchObject({ status: 400, body: { error: 'invalid_redirect_uri' } });
    expect(await manage('DELETE', id, token)).toMatchObject({ status: 204 });
    expect(await manage('GET', id, token)).toMatchObject({ status: 401 });
  });
});
