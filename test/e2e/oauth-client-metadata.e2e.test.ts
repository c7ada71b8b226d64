/**
 * @module test/e2e/oauth-client-metadata
 * Issue 34 §2, both modes: OAuth Client ID Metadata Documents behind
 * `--enable-client-id-metadata-documents`. The client is a test https server on 127.0.0.1 (a test CA
 * the deployment trusts through NODE_EXTRA_CA_CERTS, so the https rule is not weakened) serving its
 * document at the URL that is its `client_id`; the outbound guard lets the server fetch it only because
 * the deployment runs with `--allow-private-webhook-targets`, the guard's existing switch for
 * loopback targets in tests. openid-client, as a public client (`none` authentication), discovers the
 * feature and runs code + PKCE with that client_id; the user answers the consent page (which names
 * the client_id's host) through its form; the document is fetched once and then served from the cache
 * (`Cache-Control: max-age`); a document whose client_id is not its URL, an oversized one and an http
 * client_id are refused on the error page.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import * as oidc from 'openid-client';
import { decodeJwt, exportJWK, generateKeyPair } from 'jose';
import { caAndServer, startDeployment, type Deployment, type Mode } from '@gatehouse/testing';
import { signedInUser } from './oauth-support.ts';

const CALLBACK = 'http://127.0.0.1:9/cimd/callback';
const APP = 'Metadata Test App';

/** The client's own https server: its metadata documents, and how often each was fetched. */
async function startDocumentServer(tls: { key: string; cert: string }, jwk: Record<string, unknown>) {
  const hits = new Map<string, number>();
  let base = '';
  const server = https.createServer({ key: tls.key, cert: tls.cert }, (req, res) => {
    const path = req.url ?? '/';
    hits.set(path, (hits.get(path) ?? 0) + 1);
    const json = (body: unknown, headers: Record<string, string> = {}) => {
      res.writeHead(200, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));
    };
    if (path === '/client.json') {
      return json({ client_id: `${base}/client.json`, client_name: APP, redirect_uris: [CALLBACK], grant_types: ['authorization_code'], scope: 'openid email profile' }, { 'cache-control': 'max-age=600' });
    }
    if (path === '/pkjwt.json') {
      return json({ client_id: `${base}/pkjwt.json`, client_name: APP, redirect_uris: [CALLBACK], token_endpoint_auth_method: 'private_key_jwt', jwks: { keys: [jwk] } });
    }
    if (path === '/mismatch.json') return json({ client_id: `${base}/client.json`, redirect_uris: [CALLBACK] });
    if (path === '/big.json') return json({ client_id: `${base}/big.json`, redirect_uris: [CALLBACK], padding: 'x'.repeat(8000) });
    res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { base, hits, close: () => new Promise<void>((resolve) => { server.close(() => resolve()); }) };
}

describe.each(['all', 'split'] as Mode[])('OAuth Client ID Metadata Documents (%s)', (mode) => {
  let d: Deployment;
  let docs: Awaited<ReturnType<typeof startDocumentServer>>;
  /** the private_key_jwt client's key pair; its public half is in /pkjwt.json */
  let keys: Awaited<ReturnType<typeof generateKeyPair>>;

  const loggedIn = () => signedInUser(d.url, 'cimd');

  /** A code + PKCE (S256) authorization request for `config`'s client, and what redeeming its code needs. */
  async function codeRequest(config: oidc.Configuration) {
    const verifier = oidc.randomPKCECodeVerifier();
    const state = oidc.randomState();
    const nonce = oidc.randomNonce();
    const url = oidc.buildAuthorizationUrl(config, {
      redirect_uri: CALLBACK, scope: 'openid email', state, nonce, code_challenge: await oidc.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256',
    });
    return { url, verifier, state, nonce };
  }

  /** GET an authorization URL with the session cookie: the consent page's HTML and its ticket. */
  async function consentPage(url: URL, cookie: string): Promise<{ html: string; ticket: string }> {
    const res = await fetch(url, { redirect: 'manual', headers: { cookie } });
    const html = await res.text();
    expect({ status: res.status, title: /<h1>([^<]*)<\/h1>/.exec(html)?.[1] }).toEqual({ status: 200, title: `${APP} wants to access your account` });
    return { html, ticket: /name="consent_ticket" value="([^"]+)"/.exec(html)![1]! };
  }

  /** Posts the consent form (Allow) as the browser would: the redirect to the RP with the code. */
  async function allow(ticket: string, cookie: string): Promise<URL> {
    const res = await fetch(`${d.url}/authorize`, {
      method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded', cookie, origin: d.url },
      body: new URLSearchParams({ consent_ticket: ticket, decision: 'allow' }),
    });
    const location = res.headers.get('location') ?? '';
    expect({ status: res.status, callback: location.startsWith(`${CALLBACK}?`) }).toEqual({ status: 302, callback: true });
    return new URL(location);
  }

  beforeAll(async () => {
    const { ca, server } = caAndServer();
    const caFile = join(mkdtempSync(join(tmpdir(), 'gatehouse-cimd-')), 'ca.pem');
    writeFileSync(caFile, ca.cert);
    keys = await generateKeyPair('ES256');
    docs = await startDocumentServer(server, { ...(await exportJWK(keys.publicKey)), alg: 'ES256', use: 'sig' });
    d = await startDeployment(mode, {
      readyTimeoutMs: 240_000, env: { NODE_EXTRA_CA_CERTS: caFile },
      flags: ['--enable-client-id-metadata-documents', '--allow-private-webhook-targets'],
    });
  }, 300_000);
  afterAll(async () => {
    await d?.stop();
    await docs?.close();
  });

  it('openid-client runs code + PKCE with an https client_id; the consent page names its host; the document is fetched once and cached', async () => {
    const clientId = `${docs.base}/client.json`;
    const config = await oidc.discovery(new URL(d.url), clientId, { redirect_uris: [CALLBACK] }, oidc.None(), { execute: [oidc.allowInsecureRequests] });
    expect(config.serverMetadata()).toMatchObject({ client_id_metadata_document_supported: true });
    expect(config.serverMetadata().scopes_supported).toContain('gatehouse:write');
    const user = await loggedIn();

    for (const round of [1, 2]) {
      const { url, verifier, state, nonce } = await codeRequest(config);
      // such a client is asked about every time, and the page names the client_id's host and the redirect host
      const page = await consentPage(url, user.cookie);
      expect(page.html).toContain(`describes itself at <strong>${new URL(clientId).host}</strong>`);
      expect(page.html).toContain('sent back to <strong>127.0.0.1:9</strong>');
      const callback = await allow(page.ticket, user.cookie);
      const tokens = await oidc.authorizationCodeGrant(config, callback, { pkceCodeVerifier: verifier, expectedState: state, expectedNonce: nonce });
      expect({ round, sub: tokens.claims()!.sub, aud: tokens.claims()!.aud }).toEqual({ round, sub: user.userId, aud: clientId });
      expect(decodeJwt(tokens.access_token)).toMatchObject({ client_id: clientId, sub: user.userId });
      expect(await oidc.fetchUserInfo(config, tokens.access_token, user.userId)).toMatchObject({ sub: user.userId });
    }
    // /authorize twice and the token endpoint twice: one fetch (max-age=600)
    expect(docs.hits.get('/client.json')).toBe(1);

    // a public client: PKCE is required at /authorize
    const noPkce = await fetch(oidc.buildAuthorizationUrl(config, { redirect_uri: CALLBACK, scope: 'openid', state: 's' }), { redirect: 'manual', headers: { cookie: user.cookie } });
    expect(new URL(noPkce.headers.get('location')!).searchParams.get('error')).toBe('invalid_request');
    // the document's redirect URIs are the only ones
    const elsewhere = await fetch(`${d.url}/authorize?${new URLSearchParams({ client_id: clientId, redirect_uri: 'http://127.0.0.1:9/elsewhere', response_type: 'code', scope: 'openid', code_challenge: 'c'.repeat(43), code_challenge_method: 'S256' })}`, { redirect: 'manual' });
    expect({ status: elsewhere.status, location: elsewhere.headers.get('location') }).toEqual({ status: 400, location: null });
  });

  it('refuses a document whose client_id is not its URL, one over 5 KiB, and an http client_id, on the error page', async () => {
    const authorize = (clientId: string) => fetch(`${d.url}/authorize?${new URLSearchParams({
      client_id: clientId, redirect_uri: CALLBACK, response_type: 'code', scope: 'openid', code_challenge: 'c'.repeat(43), code_challenge_method: 'S256',
    })}`, { redirect: 'manual' });
    for (const [clientId, why] of [
      [`${docs.base}/mismatch.json`, 'client_id does not equal its URL'],
      [`${docs.base}/big.json`, 'larger than 5120 bytes'],
      [`${docs.base.replace('https:', 'http:')}/client.json`, 'must use https'],
      [`${docs.base}/missing.json`, 'answered HTTP 404'],
    ]) {
      const res = await authorize(clientId!);
      const html = await res.text();
      expect({ clientId, status: res.status, location: res.headers.get('location'), invalidClient: html.includes('invalid_client'), why: html.includes(why!) })
        .toEqual({ clientId, status: 400, location: null, invalidClient: true, why: true });
    }
    // the token endpoint refuses such a client too
    const token = await fetch(`${d.url}/oauth/token`, {
      method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'authorization_code', code: 'x', redirect_uri: CALLBACK, code_verifier: 'v'.repeat(43), client_id: `${docs.base}/mismatch.json` }),
    });
    expect({ status: token.status, error: ((await token.json()) as { error: string }).error }).toEqual({ status: 401, error: 'invalid_client' });
  });

  it('a document with private_key_jwt and a jwks: openid-client authenticates with an assertion signed by that key; another key is refused', async () => {
    const clientId = `${docs.base}/pkjwt.json`;
    const config = await oidc.discovery(new URL(d.url), clientId, { redirect_uris: [CALLBACK] }, oidc.PrivateKeyJwt(keys.privateKey), { execute: [oidc.allowInsecureRequests] });
    const user = await loggedIn();
    const { url, verifier, state, nonce } = await codeRequest(config);
    const page = await consentPage(url, user.cookie);
    const callback = await allow(page.ticket, user.cookie);
    // the code is not redeemable by client_id alone: the client is confidential
    const bare = await fetch(`${d.url}/oauth/token`, {
      method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'authorization_code', code: callback.searchParams.get('code')!, redirect_uri: CALLBACK, code_verifier: verifier, client_id: clientId }),
    });
    expect({ status: bare.status, error: ((await bare.json()) as { error: string }).error }).toEqual({ status: 401, error: 'invalid_client' });
    const tokens = await oidc.authorizationCodeGrant(config, callback, { pkceCodeVerifier: verifier, expectedState: state, expectedNonce: nonce });
    expect(tokens.claims()).toMatchObject({ sub: user.userId, aud: clientId });
    // introspection needs client authentication: the assertion works there too
    expect(await oidc.tokenIntrospection(config, tokens.access_token)).toMatchObject({ active: true, client_id: clientId, sub: user.userId });
    const stranger = await generateKeyPair('ES256');
    const forged = await oidc.discovery(new URL(d.url), clientId, { redirect_uris: [CALLBACK] }, oidc.PrivateKeyJwt(stranger.privateKey), { execute: [oidc.allowInsecureRequests] });
    await expect(oidc.tokenIntrospection(forged, tokens.access_token)).rejects.toMatchObject({ error: 'invalid_client' });
  });
});
