/**
 * @module test/e2e/mcp
 * Issue 34 §7, both modes: the MCP endpoint behind `--mcp-enabled`, driven by the official MCP TypeScript
 * SDK's client (`@modelcontextprotocol/sdk`: StreamableHTTPClientTransport with an OAuthClientProvider) as
 * an agent would use it. Its first POST /mcp gets 401 with `WWW-Authenticate: Bearer resource_metadata`;
 * the SDK reads the RFC 9728 metadata, then the RFC 8414 metadata of the authorization server it names,
 * registers itself (RFC 7591, `--enable-dynamic-client-registration`), and sends the user to `/authorize`
 * with PKCE S256 and RFC 8707 `resource`. Debian's chromium (playwright-core) signs in on the hosted login
 * page and allows the consent page; the SDK exchanges the code for a token whose `aud` is the /mcp URL
 * and calls the tools, which answer the user's permissions and profile. Refused: no token (401 and the
 * metadata's URL), a token of the same client and user issued for another resource, a first-party token
 * and a forged one (401 `invalid_token`). With the flag off, /mcp and its metadata are 404.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { decodeJwt } from 'jose';
import * as oidc from 'openid-client';
import type { Browser } from 'playwright-core';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { UnauthorizedError, type OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import { startDeployment, startSmtpSink, type Deployment, type Mode, type SmtpSink } from '@gatehouse/testing';
import { launchChromium } from './passkey-browser.ts';
import { address, bearer, PASSWORD, post } from './email-support.ts';
import { DriverPool, type LoginPageDriver, loginPageFlags, startLogoServer, TITLES } from './login-page-support.ts';
import { mfaDeclinedUser, startRpServer } from './oauth-support.ts';
import { DOCS_MODEL } from '../support/authz-fixtures.ts';
import { until } from '../support/until.ts';

const ORG = 'Acme MCP Test';
const AGENT = 'Desk Agent';
const INITIALIZE = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } };
const MCP_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

/** The SDK's OAuth client provider, kept in memory; the authorization URL is handed to the test's browser. */
class BrowserAgentProvider implements OAuthClientProvider {
  info: OAuthClientInformationMixed | undefined;
  saved: OAuthTokens | undefined;
  verifier = '';
  authorizationUrl: URL | undefined;
  readonly stateValue = oidc.randomState();
  private readonly callback: string;
  constructor(callback: string) {
    this.callback = callback;
  }
  get redirectUrl(): string { return this.callback; }
  get clientMetadata(): OAuthClientMetadata {
    return { client_name: AGENT, redirect_uris: [this.callback], grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'], token_endpoint_auth_method: 'none' };
  }
  state(): string { return this.stateValue; }
  clientInformation(): OAuthClientInformationMixed | undefined { return this.info; }
  saveClientInformation(info: OAuthClientInformationMixed): void { this.info = info; }
  tokens(): OAuthTokens | undefined { return this.saved; }
  saveTokens(tokens: OAuthTokens): void { this.saved = tokens; }
  redirectToAuthorization(url: URL): void { this.authorizationUrl = url; }
  saveCodeVerifier(verifier: string): void { this.verifier = verifier; }
  codeVerifier(): string { return this.verifier; }
}

describe.each(['all', 'split'] as Mode[])('the MCP endpoint with the MCP SDK client (%s)', (mode) => {
  let d: Deployment;
  let sink: SmtpSink;
  let browser: Browser;
  let logo: { url: string; close(): Promise<void> };
  let rpServer: Awaited<ReturnType<typeof startRpServer>>;
  const drivers = new DriverPool();
  const admin = (): Record<string, string> => ({ 'x-service-admin-secret': d.adminSecret });
  const mcpUrl = (): string => `${d.url}/mcp`;
  const metadataUrl = (): string => `${d.url}/.well-known/oauth-protected-resource/mcp`;
  // what the flow learned, for the refusals that follow it
  let user: { email: string; id: string; token: string };
  let agent: BrowserAgentProvider;

  beforeAll(async () => {
    [sink, logo, browser, rpServer] = await Promise.all([startSmtpSink(), startLogoServer(), launchChromium(), startRpServer()]);
    d = await startDeployment(mode, {
      urlHost: 'localhost', mfa: true, readyTimeoutMs: 120_000,
      flags: [...loginPageFlags(sink, ORG, logo.url), '--enable-dynamic-client-registration', '--mcp-enabled'],
    });
    // split mode: the gateway's channel to authz may still be connecting on a busy machine (503 until it is)
    const model = await until('the authorization model written', () => post(d.url, '/v1/admin/fga/model', { dsl: DOCS_MODEL }, admin()), (r) => r.status !== 503);
    expect(model.status).toBe(200);
  }, 180_000);
  afterAll(async () => {
    for (const close of [() => browser?.close(), () => d?.stop()]) await close();
    await Promise.all([sink, logo, rpServer].map((s) => s?.close()));
  });
  afterEach(() => drivers.checkAndClose());

  /** A password user who declined MFA, owner of doc:roadmap (setup through /v1). */
  async function documentOwner(): Promise<{ email: string; id: string; token: string }> {
    const owner = await mfaDeclinedUser(d.url, address('mcp'));
    expect((await post(d.url, '/v1/admin/fga/tuples', { tuples: [{ user: `user:${owner.id}`, relation: 'owner', object: 'doc:roadmap' }] }, admin())).status).toBe(200);
    return owner;
  }

  async function signIn(drv: LoginPageDriver): Promise<void> {
    await drv.screen(TITLES.login(ORG));
    await drv.fill('Email or phone number', user.email);
    await drv.fill('Password', PASSWORD);
    await drv.click('Sign in');
  }

  async function landed(drv: LoginPageDriver): Promise<URL> {
    await drv.page.waitForURL((u) => u.href.startsWith(`${rpServer.callback}?`), { timeout: 15_000 });
    return new URL(drv.page.url());
  }

  /** A raw MCP initialize request with `headers`. */
  const rawInitialize = (headers: Record<string, string> = {}): Promise<Response> =>
    fetch(mcpUrl(), { method: 'POST', headers: { ...MCP_HEADERS, ...headers }, body: JSON.stringify(INITIALIZE) });

  it('the SDK discovers (RFC 9728, RFC 8414), registers (RFC 7591), authorizes with PKCE and resource through consent in Chromium, then calls the tools', async () => {
    user = await documentOwner();
    agent = new BrowserAgentProvider(rpServer.callback);
    const seen: string[] = [];
    const recording = (url: string | URL, init?: RequestInit): Promise<Response> => {
      seen.push(`${init?.method ?? 'GET'} ${new URL(String(url)).pathname}`);
      return fetch(url, init);
    };
    const first = new StreamableHTTPClientTransport(new URL(mcpUrl()), { authProvider: agent, fetch: recording });
    await expect(new Client({ name: 'gatehouse-e2e', version: '1.0.0' }).connect(first)).rejects.toBeInstanceOf(UnauthorizedError);
    // the discovery path the SDK took, in order: the 401, the resource's metadata, the server's, registration
    expect(seen).toEqual(['POST /mcp', 'GET /.well-known/oauth-protected-resource/mcp', 'GET /.well-known/oauth-authorization-server', 'POST /oauth/register']);
    expect(agent.info).toMatchObject({ client_name: AGENT, token_endpoint_auth_method: 'none', client_id: expect.any(String) });
    const authorization = agent.authorizationUrl!;
    expect(authorization.origin + authorization.pathname).toBe(`${d.url}/authorize`);
    expect(Object.fromEntries(authorization.searchParams)).toMatchObject({
      client_id: agent.info!.client_id, response_type: 'code', code_challenge_method: 'S256', resource: mcpUrl(), scope: 'openid profile email offline_access',
    });

    // the person: signs in on the hosted page and allows the agent on the consent page
    const drv = await drivers.open(browser, d.url);
    await drv.goto(authorization.href);
    await signIn(drv);
    await drv.screen(`${AGENT} wants to access your account`);
    expect(await drv.page.locator('main').innerText()).toContain('127.0.0.1');
    await drv.click('Allow');
    const callback = await landed(drv);
    expect(callback.searchParams.get('state')).toBe(agent.stateValue);
    await first.finishAuth(callback.searchParams.get('code')!);
    expect(decodeJwt(agent.saved!.access_token)).toMatchObject({ aud: mcpUrl(), sub: user.id, client_id: agent.info!.client_id });
    expect(agent.saved!.refresh_token).toEqual(expect.any(String));

    const client = new Client({ name: 'gatehouse-e2e', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(mcpUrl()), { authProvider: agent, fetch: recording }));
    try {
      expect(client.getServerVersion()).toMatchObject({ name: 'gatehouse' });
      expect((await client.listTools()).tools.map((t) => t.name).sort()).toEqual(['check_permissions', 'list_permissions', 'meta', 'profile']);
      const checked = await client.callTool({ name: 'check_permissions', arguments: { checks: [{ relation: 'viewer', object: 'doc:roadmap' }, { relation: 'owner', object: 'doc:secret' }] } });
      expect(checked.isError).toBeFalsy();
      expect(checked.structuredContent).toEqual({ results: [
        { relation: 'viewer', object: 'doc:roadmap', allowed: true },
        { relation: 'owner', object: 'doc:secret', allowed: false },
      ] });
      const profile = await client.callTool({ name: 'profile', arguments: {} });
      expect(profile.structuredContent).toMatchObject({ id: user.id, email: user.email });
      expect(JSON.parse((profile.content as Array<{ text: string }>)[0]!.text)).toMatchObject({ id: user.id, email: user.email });
      const listed = await client.callTool({ name: 'list_permissions', arguments: { relation: 'viewer', object_type: 'doc' } });
      expect(listed.structuredContent).toMatchObject({ objects: ['doc:roadmap'] });
      expect((await client.callTool({ name: 'meta', arguments: {} })).structuredContent).toMatchObject({ client_id: d.clientId });
      // a refusal of the operation is a tool error with its {code, message}, not a transport failure
      const bad = await client.callTool({ name: 'check_permissions', arguments: { checks: [{ relation: 'viewer', object: 'no-colon' }] } });
      expect(bad.isError).toBe(true);
      expect(JSON.parse((bad.content as Array<{ text: string }>)[0]!.text)).toMatchObject({ code: 'invalid_argument' });
    } finally {
      await client.close();
    }
    // the same token is an ordinary access token of the user elsewhere
    expect((await fetch(`${d.url}/v1/profile`, { headers: bearer(agent.saved!.access_token) })).status).toBe(200);
  }, 180_000);

  it('no token → 401 with resource_metadata, whose document names the resource, the issuer and the scopes', async () => {
    const res = await rawInitialize();
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toBe(`Bearer resource_metadata="${metadataUrl()}"`);
    const meta = await fetch(metadataUrl());
    expect(meta.status).toBe(200);
    expect(await meta.json()).toEqual({
      resource: mcpUrl(), authorization_servers: [d.url], scopes_supported: ['openid', 'profile', 'email', 'offline_access'],
      bearer_methods_supported: ['header'], resource_name: 'Gatehouse MCP server',
    });
    const as = await fetch(`${d.url}/.well-known/oauth-authorization-server`);
    expect(await as.json()).toMatchObject({ issuer: d.url, registration_endpoint: `${d.url}/oauth/register`, code_challenge_methods_supported: ['S256'] });
    expect((await fetch(mcpUrl())).status).toBe(405);
  });

  it('refuses a token of the same client and user issued for another resource, a first-party token and a forged one (401 invalid_token)', async () => {
    // the agent's own registration, with openid-client: after sign-in the consent is remembered, so no page
    const rp = await oidc.discovery(new URL(d.url), agent.info!.client_id, { redirect_uris: [agent.redirectUrl], token_endpoint_auth_method: 'none' }, oidc.None(), { execute: [oidc.allowInsecureRequests] });
    const verifier = oidc.randomPKCECodeVerifier();
    const state = oidc.randomState();
    const nonce = oidc.randomNonce();
    const challenge = await oidc.calculatePKCECodeChallenge(verifier);
    const drv = await drivers.open(browser, d.url);
    await drv.goto(oidc.buildAuthorizationUrl(rp, {
      redirect_uri: agent.redirectUrl, scope: 'openid profile email', state, nonce, resource: 'https://api.example.com/', code_challenge: challenge, code_challenge_method: 'S256',
    }).href);
    await signIn(drv);
    const tokens = await oidc.authorizationCodeGrant(rp, await landed(drv), { pkceCodeVerifier: verifier, expectedState: state, expectedNonce: nonce }, { resource: 'https://api.example.com/' });
    expect(decodeJwt(tokens.access_token).aud).toBe('https://api.example.com/');
    expect((await fetch(`${d.url}/v1/profile`, { headers: bearer(tokens.access_token) })).status).toBe(200);

    for (const token of [tokens.access_token, user.token, `${tokens.access_token.slice(0, -4)}AAAA`]) {
      const res = await rawInitialize(bearer(token));
      expect(res.status).toBe(401);
      const header = res.headers.get('www-authenticate') ?? '';
      expect(header).toMatch(/^Bearer error="invalid_token", error_description="[^"]+", resource_metadata="[^"]+"$/);
      expect(header).toContain(`resource_metadata="${metadataUrl()}"`);
    }
    expect((await rawInitialize(bearer(tokens.access_token))).headers.get('www-authenticate')).toContain(`the access token is not for ${mcpUrl()}`);
    // the token endpoint refuses a resource the authorization request did not name (RFC 8707 §2.2)
    await drv.goto(oidc.buildAuthorizationUrl(rp, { redirect_uri: agent.redirectUrl, scope: 'openid', state, nonce, code_challenge: challenge, code_challenge_method: 'S256' }).href);
    await expect(oidc.authorizationCodeGrant(rp, await landed(drv), { pkceCodeVerifier: verifier, expectedState: state, expectedNonce: nonce }, { resource: mcpUrl() }))
      .rejects.toMatchObject({ error: 'invalid_target' });
  }, 120_000);

  it('with --mcp-enabled off, /mcp and its metadata are not served (404)', async () => {
    const command = mode === 'all' ? 'all' : 'gateway';
    // the last test: the deployment stays so until afterAll stops it
    await d.restart(command, ['--mcp-enabled=false']);
    expect((await rawInitialize(bearer(agent.saved!.access_token))).status).toBe(404);
    expect((await fetch(metadataUrl())).status).toBe(404);
    // the authorization server's own metadata does not depend on it
    expect((await fetch(`${d.url}/.well-known/oauth-authorization-server`)).status).toBe(200);
  }, 120_000);
});
