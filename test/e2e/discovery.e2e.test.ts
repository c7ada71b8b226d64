/**
 * @module test/e2e/discovery
 * Discovery and Meta state only what this build serves (issue 15 "what was seen" 1 and 2): an OIDC
 * client library follows the discovery document, and a client offers the MFA methods Meta reports, so
 * an advertised endpoint that answers 404, or a reported method whose routes answer 501, breaks them.
 * The test follows both against a running deployment: it keeps holding as features land.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { SignJWT, exportJWK, generateKeyPair } from 'jose';
import { startDeployment, type Deployment } from '@gatehouse/testing';
import { postJson, raw } from '../support/http.ts';
import { PASSWORD, freshEmail } from '../support/scenario.ts';

/** Each Meta MFA flag and a route that must answer (not 501) when the flag is true. */
const MFA_ROUTES: Record<string, string> = {
  is_totp_mfa_enabled: '/v1/totp_mfa_setup',
  is_email_otp_mfa_enabled: '/v1/email_otp_mfa_setup',
  is_sms_otp_mfa_enabled: '/v1/sms_otp_mfa_setup',
  is_webauthn_enabled: '/v1/webauthn_registration_options',
};

describe('discovery and Meta state only what is served (all)', () => {
  let d: Deployment;
  beforeAll(async () => {
    // every MFA method the flags allow: SMTP for email OTP, TOTP and passkeys on by default, the gate on
    // and dynamic client registration (issue 34), so its registration_endpoint is advertised and must answer,
    // and the MCP endpoint (issue 34 §7), whose RFC 9728 metadata must name what answers
    d = await startDeployment('all', { mfa: true, flags: ['--smtp-host=127.0.0.1', '--smtp-port=2525', '--smtp-sender-email=noreply@example.com', '--enable-dynamic-client-registration', '--mcp-enabled'] });
  }, 60_000);
  afterAll(async () => { await d?.stop(); });

  it('every endpoint the OpenID discovery document advertises answers (no 404)', async () => {
    const disc = (await raw(`${d.url}/.well-known/openid-configuration`)).body as Record<string, unknown>;
    const endpoints = Object.entries(disc).filter(([k, v]) => (k.endsWith('_endpoint') || k.endsWith('_uri')) && typeof v === 'string');
    expect(endpoints.map(([k]) => k)).toEqual(expect.arrayContaining(['jwks_uri', 'registration_endpoint', 'pushed_authorization_request_endpoint', 'device_authorization_endpoint']));
    for (const [key, url] of endpoints) {
      expect(String(url).startsWith(`${d.url}/`)).toBe(true);
      const res = await raw(String(url));
      expect({ key, status: res.status }).not.toEqual({ key, status: 404 });
    }
    // no grant or response type is advertised while no authorization or token endpoint is served
    if (!('authorization_endpoint' in disc)) expect(disc).not.toHaveProperty('response_types_supported');
    if (!('token_endpoint' in disc)) expect(disc).not.toHaveProperty('grant_types_supported');
  });

  it('the RFC 9728 metadata of /mcp names a resource that answers and an authorization server whose RFC 8414 metadata is the discovery document', async () => {
    const meta = (await raw(`${d.url}/.well-known/oauth-protected-resource/mcp`)).body as { resource: string; authorization_servers: string[]; scopes_supported: string[] };
    expect(meta.resource).toBe(`${d.url}/mcp`);
    // served: it asks for a token (401), it is not missing (404)
    const mcp = await fetch(meta.resource, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(mcp.status).toBe(401);
    expect(mcp.headers.get('www-authenticate')).toContain(`resource_metadata="${d.url}/.well-known/oauth-protected-resource/mcp"`);
    const disc = (await raw(`${d.url}/.well-known/openid-configuration`)).body as { scopes_supported: string[] };
    for (const server of meta.authorization_servers) {
      expect((await raw(`${server}/.well-known/oauth-authorization-server`)).body).toEqual(disc);
    }
    // every scope a client is told to ask for is one the server knows
    expect(disc.scopes_supported).toEqual(expect.arrayContaining(meta.scopes_supported));
  });

  it('every DPoP algorithm advertised is accepted by the token endpoint (RFC 9449 §5.1)', async () => {
    const disc = (await raw(`${d.url}/.well-known/openid-configuration`)).body as { dpop_signing_alg_values_supported: string[]; token_endpoint: string };
    expect(disc.dpop_signing_alg_values_supported.length).toBeGreaterThan(0);
    for (const alg of disc.dpop_signing_alg_values_supported) {
      const { publicKey, privateKey } = await generateKeyPair(alg, alg.startsWith('RS') || alg.startsWith('PS') ? { modulusLength: 2048 } : {});
      const proof = await new SignJWT({ jti: randomUUID(), htm: 'POST', htu: disc.token_endpoint, iat: Math.floor(Date.now() / 1000) })
        .setProtectedHeader({ alg, typ: 'dpop+jwt', jwk: await exportJWK(publicKey) }).sign(privateKey);
      const res = await fetch(disc.token_endpoint, {
        method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', dpop: proof }, body: 'grant_type=client_credentials',
      });
      // the proof passed every check up to the server nonce, which it was asked for (§8)
      expect({ alg, status: res.status, error: ((await res.json()) as { error: string }).error, nonce: res.headers.has('dpop-nonce') })
        .toEqual({ alg, status: 400, error: 'use_dpop_nonce', nonce: true });
    }
  });

  it('client ID metadata documents are advertised only when served, and every advertised scope is granted (issue 34)', async () => {
    const disc = (await raw(`${d.url}/.well-known/openid-configuration`)).body as { scopes_supported: string[]; token_endpoint: string };
    // the flag is off here: not advertised, and an https client_id is an unknown client (nothing is fetched)
    expect(disc).not.toHaveProperty('client_id_metadata_document_supported');
    const page = await fetch(`${d.url}/authorize?${new URLSearchParams({ client_id: 'https://app.example/client.json', response_type: 'code', redirect_uri: 'https://app.example/cb' })}`, { redirect: 'manual' });
    expect({ status: page.status, unknown: (await page.text()).includes('unknown or inactive client') }).toEqual({ status: 400, unknown: true });
    // gatehouse:write (RFC 8414 §2 scopes_supported) is granted by the token endpoint to a client allowed it
    expect(disc.scopes_supported).toContain('gatehouse:write');
    const created = await postJson(`${d.url}/v1/admin/create_client`, { name: 'scopes', allowed_scopes: ['gatehouse:write'] }, { origin: d.url, 'x-service-admin-secret': d.adminSecret });
    expect(created.status).toBe(200);
    const token = await fetch(disc.token_endpoint, {
      method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'client_credentials', scope: 'gatehouse:write', client_id: created.body.client.client_id, client_secret: created.body.client_secret }),
    });
    expect({ status: token.status, scope: ((await token.json()) as { scope?: string }).scope }).toEqual({ status: 200, scope: 'gatehouse:write' });
  });

  it('every MFA method Meta reports has routes that answer (not 501) for a signed-in user', async () => {
    const meta = (await raw(`${d.url}/v1/meta`)).body as Record<string, boolean>;
    const signup = await postJson(`${d.url}/v1/signup`, { email: freshEmail('discovery'), password: PASSWORD, confirm_password: PASSWORD }, { origin: d.url });
    // the gate offers MFA at signup (G7); skipping it issues the tokens
    const mfa = (signup.headers.get('set-cookie') ?? '').split(';')[0]!;
    const skipped = await postJson(`${d.url}/v1/skip_mfa_setup`, {}, { origin: d.url, cookie: mfa });
    const token = (skipped.body as { access_token: string }).access_token;
    expect(token).toEqual(expect.any(String));
    for (const [flag, route] of Object.entries(MFA_ROUTES)) {
      expect(typeof meta[flag]).toBe('boolean');
      const res = await postJson(`${d.url}${route}`, {}, { origin: d.url, authorization: `Bearer ${token}` });
      // a method is reported exactly when its route is served: not 501, and not refused as a method
      // the flags make unusable (behaviour.md §4.3 `... is not available on this server`)
      const message = String((res.body as { message?: string } | null)?.message ?? '');
      const served = res.status !== 501 && !(res.status === 400 && message.endsWith('not available on this server'));
      expect({ flag, reported: meta[flag] }).toEqual({ flag, reported: served });
    }
    const anyMethod = Object.keys(MFA_ROUTES).some((f) => meta[f]);
    expect(meta.is_multi_factor_auth_enabled).toBe(anyMethod);
    if (!anyMethod) expect(meta.is_mfa_enforced).toBe(false);
  });
});
