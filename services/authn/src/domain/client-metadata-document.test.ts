/**
 * @module @gatehouse/authn/domain/client-metadata-document.test
 * OAuth Client ID Metadata Documents (issue 34 §2) without a network: the client_id URL rules, the
 * document's checks (client_id equal to its URL, public clients only, redirect URIs, size, status,
 * content type), the cache lifetime from Cache-Control, the outbound guard refusing private and
 * loopback addresses, and what /authorize and discovery answer with the flag on and off. The fetch
 * over https from a real server is test/e2e/oauth-client-metadata.e2e.test.ts.
 */
import { describe, expect, it } from '@jest/globals';
import { createLogger } from '@gatehouse/observability';
import { T0, makeAuthn, testOptions } from '../fixture.ts';
import type { AuthnContext } from './deps.ts';
import {
  DEFAULT_CACHE_SECONDS, MAX_CACHE_SECONDS, MAX_DOCUMENT_BYTES, MIN_CACHE_SECONDS, cacheSecondsOf, clientFromDocument, clientFromResponse,
  clientIdUrlProblem, resolveDocumentClient,
} from './client-metadata-document.ts';

const URL_ID = 'https://app.example/oauth/client.json';
const doc = (over: Record<string, unknown> = {}): string => JSON.stringify({ client_id: URL_ID, client_name: 'Example App', redirect_uris: ['https://app.example/cb'], ...over });
/** What resolveDocumentClient reads of the context: the flags, the clock and the logger. */
const context = (): AuthnContext => ({ options: testOptions({ enableClientIdMetadataDocuments: true }), now: () => T0, logger: createLogger('silent') }) as unknown as AuthnContext;
const problemOf = (r: ReturnType<typeof clientFromDocument>): string | null => (r.ok ? null : r.problem);

describe('client_id URLs (draft §3)', () => {
  it('must be https with a host and a path, without fragment, user info or dot segments, at most 255 characters', () => {
    expect(clientIdUrlProblem(URL_ID)).toBeNull();
    expect(clientIdUrlProblem('https://app.example/c?v=1')).toBeNull();
    expect(clientIdUrlProblem('http://app.example/client.json')).toBe('a client_id URL must use https');
    expect(clientIdUrlProblem('https://app.example')).toBe('a client_id URL must have a path');
    expect(clientIdUrlProblem('https://app.example/')).toBe('a client_id URL must have a path');
    expect(clientIdUrlProblem('https://app.example/a/../client.json')).toContain('. or ..');
    expect(clientIdUrlProblem('https://app.example/a/%2e%2e/client.json')).toContain('. or ..');
    expect(clientIdUrlProblem('https://app.example/client.json#x')).toContain('fragment');
    expect(clientIdUrlProblem('https://u:p@app.example/client.json')).toContain('user information');
    expect(clientIdUrlProblem(`https://app.example/${'a'.repeat(300)}`)).toContain('255');
  });
});

describe('the document (draft §4.1)', () => {
  it('describes a public client that is never first-party, with the document\'s redirect URIs, name and scopes', () => {
    const r = clientFromDocument(URL_ID, doc({ scope: 'openid email', grant_types: ['authorization_code', 'refresh_token'] }), 1000);
    expect(r).toEqual({
      ok: true,
      client: expect.objectContaining({
        id: URL_ID, name: 'Example App', isPublic: true, secretHash: null, isFirstParty: false, isActive: true,
        redirectUris: ['https://app.example/cb'], allowedScopes: ['openid', 'email'], grantTypes: ['authorization_code', 'refresh_token'],
      }),
    });
    const unnamed = clientFromDocument(URL_ID, JSON.stringify({ client_id: URL_ID, redirect_uris: ['http://127.0.0.1/cb'] }), 1000);
    expect(unnamed.ok && { name: unnamed.client.name, scopes: unnamed.client.allowedScopes, grants: unnamed.client.grantTypes })
      .toEqual({ name: 'app.example', scopes: ['openid', 'profile', 'email', 'phone', 'offline_access'], grants: ['authorization_code'] });
  });

  it('with private_key_jwt and a jwks of public keys, describes a confidential client and carries its keys', () => {
    const jwks = { keys: [{ kty: 'EC', crv: 'P-256', x: 'f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU', y: 'x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0', kid: 'k1' }] };
    const r = clientFromDocument(URL_ID, doc({ token_endpoint_auth_method: 'private_key_jwt', jwks }), 0);
    expect(r.ok && { isPublic: r.client.isPublic, secretHash: r.client.secretHash, jwks: r.jwks }).toEqual({ isPublic: false, secretHash: null, jwks });
    const none = clientFromDocument(URL_ID, doc(), 0);
    expect(none.ok && { isPublic: none.client.isPublic, jwks: none.jwks }).toEqual({ isPublic: true, jwks: undefined });
  });

  it('is refused when its client_id is not exactly its URL', () => {
    expect(problemOf(clientFromDocument(URL_ID, doc({ client_id: 'https://evil.example/oauth/client.json' }), 0))).toBe('the client metadata document\'s client_id does not equal its URL');
    expect(problemOf(clientFromDocument(URL_ID, doc({ client_id: `${URL_ID}/` }), 0))).toContain('does not equal its URL');
    expect(problemOf(clientFromDocument(URL_ID, JSON.stringify({ redirect_uris: ['https://app.example/cb'] }), 0))).toContain('does not equal its URL');
  });

  it('is refused when it is not a JSON object, holds a secret, asks for another authentication than none, or has bad metadata', () => {
    expect(problemOf(clientFromDocument(URL_ID, '<html>', 0))).toBe('the client metadata document is not JSON');
    expect(problemOf(clientFromDocument(URL_ID, '[1]', 0))).toContain('not a JSON object');
    expect(problemOf(clientFromDocument(URL_ID, doc({ client_secret: 's' }), 0))).toContain('client_secret');
    expect(problemOf(clientFromDocument(URL_ID, doc({ token_endpoint_auth_method: 'client_secret_basic' }), 0))).toContain('"none" (a public client with PKCE) or "private_key_jwt"');
    expect(problemOf(clientFromDocument(URL_ID, doc({ token_endpoint_auth_method: 'private_key_jwt' }), 0))).toContain('private_key_jwt needs jwks');
    expect(problemOf(clientFromDocument(URL_ID, doc({ token_endpoint_auth_method: 'private_key_jwt', jwks: { keys: [] } }), 0))).toContain('private_key_jwt needs jwks');
    expect(problemOf(clientFromDocument(URL_ID, doc({ token_endpoint_auth_method: 'private_key_jwt', jwks_uri: 'https://app.example/jwks' }), 0))).toContain('jwks_uri is not served');
    expect(problemOf(clientFromDocument(URL_ID, doc({ token_endpoint_auth_method: 'private_key_jwt', jwks: { keys: [{ kty: 'EC', crv: 'P-256', x: 'x', y: 'y', d: 'secret' }] } }), 0))).toBe('jwks must hold public keys only');
    expect(problemOf(clientFromDocument(URL_ID, doc({ redirect_uris: [] }), 0))).toContain('needs redirect_uris');
    expect(problemOf(clientFromDocument(URL_ID, doc({ redirect_uris: ['http://app.example/cb'] }), 0))).toContain('loopback');
    expect(problemOf(clientFromDocument(URL_ID, doc({ grant_types: ['client_credentials'] }), 0))).toContain('grant_types');
    expect(problemOf(clientFromDocument(URL_ID, doc({ response_types: ['token'] }), 0))).toContain('response_types');
    expect(problemOf(clientFromDocument(URL_ID, doc({ scope: 'openid admin' }), 0))).toContain('scope must be among');
    expect(problemOf(clientFromDocument(URL_ID, doc({ client_name: '' }), 0))).toContain('client_name');
  });

  it('is refused when the answer is not 200, is larger than 5 KiB, or is not JSON by its content type', () => {
    const res = (over: Partial<Parameters<typeof clientFromResponse>[1]> = {}) =>
      clientFromResponse(URL_ID, { status: 200, body: doc(), truncated: false, headers: { 'content-type': 'application/json; charset=utf-8' }, ...over }, 0);
    expect(res().ok).toBe(true);
    expect(problemOf(res({ status: 404 }))).toBe('the client metadata document answered HTTP 404');
    expect(problemOf(res({ status: 302 }))).toContain('HTTP 302');
    expect(problemOf(res({ truncated: true, body: 'x'.repeat(MAX_DOCUMENT_BYTES) }))).toBe(`the client metadata document is larger than ${MAX_DOCUMENT_BYTES} bytes`);
    expect(problemOf(res({ headers: { 'content-type': 'text/html' } }))).toContain('application/json');
    expect(res({ headers: {} }).ok).toBe(true);
  });

  it('is kept for its max-age within [60 s, 1 day], 5 min without one, not at all with no-store', () => {
    expect(cacheSecondsOf(undefined)).toBe(DEFAULT_CACHE_SECONDS);
    expect(cacheSecondsOf('public, max-age=600')).toBe(600);
    expect(cacheSecondsOf('max-age=5')).toBe(MIN_CACHE_SECONDS);
    expect(cacheSecondsOf('max-age=99999999')).toBe(MAX_CACHE_SECONDS);
    expect(cacheSecondsOf('no-store')).toBe(0);
    expect(cacheSecondsOf('max-age=600, no-cache')).toBe(0);
  });
});

describe('fetching through the outbound guard', () => {
  it('refuses private, loopback and link-local targets (IP literals and names) before any connection', async () => {
    const c = context();
    for (const url of ['https://10.0.0.1/client.json', 'https://127.0.0.1:1/client.json', 'https://169.254.169.254/latest', 'https://[::1]/client.json', 'https://localhost/client.json']) {
      expect({ url, r: await resolveDocumentClient(c, url) }).toEqual({ url, r: { ok: false, problem: 'the client_id URL points to a private or internal network address' } });
    }
    expect(await resolveDocumentClient(c, 'http://app.example/client.json')).toEqual({ ok: false, problem: 'a client_id URL must use https' });
  });

  it('/authorize shows why a client_id URL is refused, and treats it as an unknown client when the flag is off; discovery advertises the feature only when on', async () => {
    const params = { client_id: 'https://10.0.0.1/client.json', redirect_uri: 'https://app.example/cb', response_type: 'code', scope: 'openid', code_challenge: 'c'.repeat(43), code_challenge_method: 'S256' };
    const on = makeAuthn({ enableClientIdMetadataDocuments: true });
    const page = (await on.call('Authorize', { params, method: 'GET' })).res;
    expect({ status: page.status, location: page.location ?? null }).toEqual({ status: 400, location: null });
    expect(page.html).toContain('invalid_client');
    expect(page.html).toContain('private or internal network');
    const http = (await on.call('Authorize', { params: { ...params, client_id: 'http://app.example/client.json' }, method: 'GET' })).res;
    expect(http.html).toContain('must use https');
    const off = makeAuthn();
    const unknown = (await off.call('Authorize', { params, method: 'GET' })).res;
    expect({ status: unknown.status, unknown: String(unknown.html).includes('unknown or inactive client') }).toEqual({ status: 400, unknown: true });
    expect((await on.call('GetOpenidConfiguration')).res).toMatchObject({ client_id_metadata_document_supported: true });
    expect((await off.call('GetOpenidConfiguration')).res).not.toHaveProperty('client_id_metadata_document_supported');
    expect((await off.call('GetOpenidConfiguration')).res.scopes_supported).toContain('gatehouse:write');
  });

  it('the token endpoint refuses a refused document\'s client as invalid_client', async () => {
    const a = makeAuthn({ enableClientIdMetadataDocuments: true });
    const res = (await a.call('OauthToken', { params: { grant_type: 'authorization_code', code: 'x', client_id: 'https://192.168.1.1/client.json', redirect_uri: 'https://app.example/cb', code_verifier: 'v'.repeat(43) }, method: 'POST' })).res;
    expect(res).toMatchObject({ status: 401, body: { error: 'invalid_client' } });
  });
});
