/**
 * @module @gatehouse/authn/domain/par.test
 * RFC 9126 pushed authorization requests (issue 34 §4) through authn's RPCs on memory storage and a
 * fake clock: client authentication as at the token endpoint, the request checked as /authorize
 * checks it, 201 `{request_uri, expires_in: 60}`; at /authorize the request_uri is single use, expires,
 * is bound to its client, and only the pushed parameters count; it survives the login page and the
 * consent page; `--require-pushed-authorization-requests` refuses plain /authorize (not the server's
 * own client); discovery advertises the endpoint.
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from '@jest/globals';
import { makeAuthn } from '../fixture.ts';
import type { AuthnOptions } from './options.ts';
import { PAR_TTL_SECONDS, REQUEST_URI_PREFIX } from './par.ts';

const CB = 'https://rp.example/cb';
const VERIFIER = 'v'.repeat(43);
const CHALLENGE = createHash('sha256').update(VERIFIER).digest('base64url');
const ADMIN = { 'x-service-admin-secret': 'admin-secret' };

async function setup(over: Partial<AuthnOptions> = {}, firstParty = true) {
  const a = makeAuthn(over);
  const make = async (name: string) => {
    const { res } = await a.call('CreateClient', {
      name, allowed_scopes: ['openid', 'profile', 'email'], redirect_uris: [CB], grant_types: ['authorization_code'], is_first_party: firstParty,
    }, ADMIN);
    const id = res.client.client_id as string;
    return { id, basic: { authorization: `Basic ${Buffer.from(`${id}:${res.client_secret as string}`).toString('base64')}` } };
  };
  const client = await make('rp');
  const other = await make('other');
  const user = await a.signup('ada@example.com');
  const http = async (rpc: string, params: Record<string, string>, headers: Record<string, string> = {}, method = 'POST') =>
    (await a.call(rpc, { params, method }, headers)).res;
  const request = { redirect_uri: CB, response_type: 'code', scope: 'openid email', code_challenge: CHALLENGE, code_challenge_method: 'S256', state: 's1' };
  const push = (params: Record<string, string> = {}, headers: Record<string, string> = client.basic) => http('PushedAuthorizationRequest', { ...request, ...params }, headers);
  const authorize = (params: Record<string, string>, cookie: Record<string, string> = user.cookie) => http('Authorize', params, cookie, 'GET');
  return { a, client, other, user, http, push, authorize };
}

describe('pushed authorization requests (RFC 9126)', () => {
  it('answers 201 {request_uri, expires_in: 60}; /authorize takes it once and uses only the pushed parameters', async () => {
    const { push, authorize, client, http } = await setup();
    const pushed = await push();
    expect(pushed.status).toBe(201);
    expect(pushed.body).toEqual({ request_uri: expect.stringMatching(new RegExp(`^${REQUEST_URI_PREFIX}[A-Za-z0-9_-]{43}$`)), expires_in: PAR_TTL_SECONDS });
    // a state given beside request_uri is ignored (RFC 9126 §4): the pushed one comes back
    const first = await authorize({ client_id: client.id, request_uri: pushed.body.request_uri, state: 'forged' });
    expect(first.status).toBe(302);
    const loc = new URL(first.location);
    expect({ at: loc.origin + loc.pathname, state: loc.searchParams.get('state') }).toEqual({ at: CB, state: 's1' });
    const tokens = await http('OauthToken', { grant_type: 'authorization_code', code: loc.searchParams.get('code')!, redirect_uri: CB, code_verifier: VERIFIER }, client.basic);
    expect({ status: tokens.status, scope: tokens.body.scope }).toEqual({ status: 200, scope: 'openid email' });
    const again = await authorize({ client_id: client.id, request_uri: pushed.body.request_uri });
    expect({ status: again.status, location: again.location ?? null }).toEqual({ status: 400, location: null });
    expect(again.html).toContain('invalid_request_uri');
    expect(again.html).toContain('unknown, expired or already used');
  });

  it('a request_uri expires after 60 s and is bound to the client that pushed it', async () => {
    const { a, push, authorize, client, other } = await setup();
    const late = (await push()).body.request_uri as string;
    a.advance(PAR_TTL_SECONDS + 1);
    expect((await authorize({ client_id: client.id, request_uri: late })).html).toContain('unknown, expired or already used');
    const foreign = (await push()).body.request_uri as string;
    const stolen = await authorize({ client_id: other.id, request_uri: foreign });
    expect(stolen.status).toBe(400);
    expect(stolen.html).toContain('pushed by another client');
    expect((await authorize({ client_id: client.id, request_uri: 'urn:example:not-ours' })).html).toContain('was not issued by this server');
  });

  it('authenticates the client as the token endpoint does and checks the request as /authorize does', async () => {
    const { push, client, other } = await setup();
    const bad = await push({}, { authorization: `Basic ${Buffer.from(`${client.id}:wrong`).toString('base64')}` });
    expect({ status: bad.status, error: bad.body.error }).toEqual({ status: 401, error: 'invalid_client' });
    const refusals: [Record<string, string>, number, string, string][] = [
      [{ redirect_uri: 'https://evil.example/cb' }, 400, 'invalid_request', 'redirect_uri is not registered for this client'],
      [{ scope: 'openid admin' }, 400, 'invalid_scope', 'scope is not allowed for this client'],
      [{ response_type: 'token' }, 400, 'unauthorized_client', 'only the code flow is available to this client'],
      [{ code_challenge_method: 'plain' }, 400, 'invalid_request', 'code_challenge_method must be S256'],
      [{ request_uri: `${REQUEST_URI_PREFIX}x` }, 400, 'invalid_request', 'request_uri must not be pushed (RFC 9126 §2.1)'],
      [{ client_id: other.id }, 400, 'invalid_request', 'client_id does not match the Authorization header'],
    ];
    for (const [params, status, error, description] of refusals) {
      const r = await push(params);
      expect({ params, status: r.status, body: r.body }).toEqual({ params, status, body: { error, error_description: description } });
    }
    expect((await push({}, {})).status).toBe(401);
  });

  it('survives the login page: return_to names a fresh request_uri, never the pushed parameters', async () => {
    const { push, authorize, client } = await setup();
    const pushed = (await push({ state: 'secret-state' })).body.request_uri as string;
    const toLogin = await authorize({ client_id: client.id, request_uri: pushed }, {});
    expect(toLogin.status).toBe(302);
    const returnTo = new URL(toLogin.location).searchParams.get('return_to')!;
    expect(returnTo).not.toContain('secret-state');
    const back = new URL(returnTo, 'https://x');
    expect(back.searchParams.get('request_uri')).toMatch(new RegExp(`^${REQUEST_URI_PREFIX}`));
    expect(back.searchParams.get('request_uri')).not.toBe(pushed);
    const done = await authorize(Object.fromEntries(back.searchParams));
    expect(new URL(done.location).searchParams.get('state')).toBe('secret-state');
    expect(new URL(done.location).searchParams.get('code')).toBeTruthy();
  });

  it('survives the consent page of a third-party client', async () => {
    const { push, authorize, client, http, user } = await setup({}, false);
    const page = await authorize({ client_id: client.id, request_uri: (await push()).body.request_uri });
    expect(page.status).toBe(200);
    const ticket = /name="consent_ticket" value="([^"]+)"/.exec(page.html)![1]!;
    const allowed = await http('Authorize', { consent_ticket: ticket, decision: 'allow' }, user.cookie, 'POST');
    expect(new URL(allowed.location).searchParams.get('code')).toBeTruthy();
  });

  it('--require-pushed-authorization-requests refuses a plain /authorize at the redirect URI, except for the server\'s own client', async () => {
    const { push, authorize, client, a } = await setup({ requirePushedAuthorizationRequests: true });
    const plain = await authorize({ client_id: client.id, redirect_uri: CB, response_type: 'code', scope: 'openid', code_challenge: CHALLENGE, code_challenge_method: 'S256', state: 's1' });
    const loc = new URL(plain.location);
    expect({ error: loc.searchParams.get('error'), state: loc.searchParams.get('state') }).toEqual({ error: 'invalid_request', state: 's1' });
    expect(loc.searchParams.get('error_description')).toContain('/oauth/par');
    expect(new URL((await authorize({ client_id: client.id, request_uri: (await push()).body.request_uri })).location).searchParams.get('code')).toBeTruthy();
    const own = await authorize({ client_id: a.options.clientId, redirect_uri: a.options.url, response_type: 'code', scope: 'openid' });
    expect(new URL(own.location).searchParams.get('error')).toBeNull();
    const discovery = (await a.call('GetOpenidConfiguration', {})).res;
    expect(discovery).toMatchObject({ pushed_authorization_request_endpoint: `${a.options.url}/oauth/par`, require_pushed_authorization_requests: true });
  });

  it('a client\'s require_pushed_authorization_requests (RFC 9126 §6): set on create, update and registration; only that client is refused a plain /authorize', async () => {
    const { push, authorize, client, other, a } = await setup();
    const plainFor = (id: string) => authorize({ client_id: id, redirect_uri: CB, response_type: 'code', scope: 'openid', code_challenge: CHALLENGE, code_challenge_method: 'S256', state: 's2' });
    expect(new URL((await plainFor(client.id)).location).searchParams.get('code')).toBeTruthy();
    const updated = (await a.call('UpdateClient', { id: client.id, require_pushed_authorization_requests: true }, ADMIN)).res;
    expect(updated).toMatchObject({ require_pushed_authorization_requests: true });
    expect((await a.call('Client', { id: client.id }, ADMIN)).res).toMatchObject({ require_pushed_authorization_requests: true });
    const loc = new URL((await plainFor(client.id)).location);
    expect({ error: loc.searchParams.get('error'), state: loc.searchParams.get('state'), code: loc.searchParams.get('code') }).toEqual({ error: 'invalid_request', state: 's2', code: null });
    expect(loc.searchParams.get('error_description')).toContain('RFC 9126 §6');
    expect(new URL((await authorize({ client_id: client.id, request_uri: (await push()).body.request_uri })).location).searchParams.get('code')).toBeTruthy();
    // the other client is untouched, and the server-wide flag stays off in discovery
    expect(new URL((await plainFor(other.id)).location).searchParams.get('code')).toBeTruthy();
    expect((await a.call('GetOpenidConfiguration', {})).res).toMatchObject({ require_pushed_authorization_requests: false });
    const created = (await a.call('CreateClient', {
      name: 'par only', allowed_scopes: ['openid'], redirect_uris: [CB], require_pushed_authorization_requests: true, is_first_party: true,
    }, ADMIN)).res;
    expect(created.client).toMatchObject({ require_pushed_authorization_requests: true });
    expect(new URL((await plainFor(created.client.client_id)).location).searchParams.get('error')).toBe('invalid_request');
    expect((await a.call('UpdateClient', { id: client.id, require_pushed_authorization_requests: false }, ADMIN)).res).toMatchObject({ require_pushed_authorization_requests: false });
    expect(new URL((await plainFor(client.id)).location).searchParams.get('code')).toBeTruthy();
  });

  it('RFC 7591 registration takes require_pushed_authorization_requests as a boolean and returns it', async () => {
    const { a } = await setup();
    const register = async (params: Record<string, unknown>) => (await a.call('RegisterClient', { params, method: 'POST' })).res;
    const on = await register({ redirect_uris: [CB], require_pushed_authorization_requests: true });
    expect({ status: on.status, flag: on.body.require_pushed_authorization_requests }).toEqual({ status: 201, flag: true });
    expect((await register({ redirect_uris: [CB] })).body.require_pushed_authorization_requests).toBe(false);
    expect(await register({ redirect_uris: [CB], require_pushed_authorization_requests: 'yes' })).toMatchObject({ status: 400, body: { error: 'invalid_client_metadata' } });
    const plain = await a.call('Authorize', { params: { client_id: on.body.client_id, redirect_uri: CB, response_type: 'code', scope: 'openid', code_challenge: CHALLENGE, code_challenge_method: 'S256' }, method: 'GET' });
    expect(new URL(plain.res.location).searchParams.get('error')).toBe('invalid_request');
  });
});
