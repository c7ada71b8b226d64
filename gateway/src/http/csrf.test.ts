import { describe, it, expect, beforeAll, afterAll } from '@jest/globals';
import express from 'express';
import { clientIpMiddleware, compileTrustedProxies } from './client-ip.ts';
import { csrf, isCsrfExempt } from './csrf.ts';
import { compileOriginPolicy } from './origins.ts';
import { listen, send, type RunningApp } from './test-server.ts';

function appWith(allowedOrigins: string[], trustedProxies: string[] = [], url = 'https://auth.example.com') {
  const app = express();
  app.use(clientIpMiddleware(compileTrustedProxies(trustedProxies)), csrf(compileOriginPolicy(allowedOrigins), url));
  app.use((_req, res) => {
    res.json({ ok: true });
  });
  return app;
}

const MISSING = { code: 'permission_denied', message: 'origin or referer header is required for state-changing requests' };
const MISMATCH = { code: 'permission_denied', message: 'origin not allowed' };

describe('CSRF with an explicit --allowed-origins list (behaviour.md §2.5)', () => {
  let srv: RunningApp;
  beforeAll(async () => {
    srv = await listen(appWith(['https://app.example.com', 'partner.test:8443', '*.tenant.io', 'http://localhost:3000']));
  });
  afterAll(() => srv.close());
  const post = (headers: Record<string, string>, path = '/v1/login') => send(srv.base, 'POST', path, { headers, body: '{}' });

  it('rejects a state-changing POST without Origin and Referer with 403 permission_denied', async () => {
    const res = await post({});
    expect(res.status).toBe(403);
    expect(res.json).toEqual(MISSING);
  });

  it('applies to PUT, PATCH and DELETE too, but not to GET', async () => {
    for (const method of ['PUT', 'PATCH', 'DELETE']) {
      expect((await send(srv.base, method, '/v1/x')).status).toBe(403);
    }
    expect((await send(srv.base, 'GET', '/v1/meta')).status).toBe(200);
  });

  it('applies to bearer and admin-header requests (the spec requires it)', async () => {
    const res = await post({ authorization: 'Bearer abc', 'x-service-admin-secret': 's' });
    expect(res.json).toEqual(MISSING);
  });

  it('accepts an Origin listed with its scheme, with the default port normalised', async () => {
    expect((await post({ origin: 'https://app.example.com' })).status).toBe(200);
    expect((await post({ origin: 'https://app.example.com:443' })).status).toBe(200);
  });

  it('refuses a listed host under another scheme or port when the entry has a scheme', async () => {
    const refused = await post({ origin: 'http://app.example.com' });
    expect(refused.json).toEqual(MISMATCH);
    expect(refused.headers['x-gatehouse-reason']).toBe('origin http://app.example.com is not listed in --allowed-origins');
    expect((await post({ origin: 'https://app.example.com:8443' })).json).toEqual(MISMATCH);
    expect((await post({ origin: 'http://localhost:3001' })).status).toBe(403);
    expect((await post({ origin: 'http://localhost:3000' })).status).toBe(200);
  });

  it('matches a scheme-less entry host:port under any scheme', async () => {
    expect((await post({ origin: 'https://partner.test:8443' })).status).toBe(200);
    expect((await post({ origin: 'http://partner.test:8443' })).status).toBe(200);
    expect((await post({ origin: 'https://partner.test' })).status).toBe(403);
  });

  it('matches *.tenant.io subdomains but not the apex', async () => {
    expect((await post({ origin: 'https://a.tenant.io' })).status).toBe(200);
    expect((await post({ origin: 'https://deep.a.tenant.io' })).status).toBe(200);
    expect((await post({ origin: 'https://tenant.io' })).json).toEqual(MISMATCH);
    expect((await post({ origin: 'https://eviltenant.io' })).json).toEqual(MISMATCH);
  });

  it('refuses Origin: null even with a good Referer', async () => {
    const res = await post({ origin: 'null', referer: 'https://app.example.com/page' });
    expect(res.status).toBe(403);
    expect(res.json).toEqual(MISMATCH);
  });

  it('falls back to the scheme://host[:port] of Referer', async () => {
    expect((await post({ referer: 'https://app.example.com/some/page?q=1' })).status).toBe(200);
    expect((await post({ referer: 'https://evil.example.com/app.example.com' })).json).toEqual(MISMATCH);
    expect((await post({ referer: 'not a url' })).json).toEqual(MISMATCH);
  });

  it('exempts the client-authenticated and callback paths', async () => {
    for (const path of ['/oauth/token', '/oauth/revoke', '/oauth/introspect', '/oauth/saml/acme/acs', '/oauth_callback/apple', '/authorize', '/userinfo', '/oauth/register', '/oauth/par']) {
      expect((await post({}, path)).status).toBe(200);
    }
  });

  it('exempts RFC 7592 management only with a bearer registration token (issue 34)', () => {
    expect(isCsrfExempt('DELETE', '/oauth/register/abc', 'Bearer t')).toBe(true);
    expect(isCsrfExempt('PUT', '/oauth/register/abc', undefined)).toBe(false);
    expect(isCsrfExempt('PUT', '/oauth/register/abc/x', 'Bearer t')).toBe(false);
  });

  it('exempts SCIM only with a bearer token', async () => {
    expect((await post({ authorization: 'Bearer scim-token' }, '/scim/v2/Users')).status).toBe(200);
    expect((await post({}, '/scim/v2/Users')).json).toEqual(MISSING);
  });
});

describe('CSRF with the default * (same origin only)', () => {
  let direct: RunningApp;
  let proxied: RunningApp;
  beforeAll(async () => {
    direct = await listen(appWith(['*']));
    proxied = await listen(appWith(['*'], ['127.0.0.0/8']));
  });
  afterAll(async () => {
    await direct.close();
    await proxied.close();
  });

  it('accepts an Origin equal to the request Host', async () => {
    const res = await send(direct.base, 'POST', '/v1/login', { headers: { host: 'gate.local:8080', origin: 'http://gate.local:8080' } });
    expect(res.status).toBe(200);
  });

  it('normalises default ports when comparing with Host', async () => {
    const res = await send(direct.base, 'POST', '/v1/login', { headers: { host: 'gate.local:443', origin: 'https://gate.local' } });
    expect(res.status).toBe(200);
  });

  it('accepts the --url host', async () => {
    const res = await send(direct.base, 'POST', '/v1/login', { headers: { host: 'internal:8080', origin: 'https://auth.example.com' } });
    expect(res.status).toBe(200);
  });

  it('refuses a cross-origin request, saying why in X-Gatehouse-Reason (the message is the spec\'s)', async () => {
    const res = await send(direct.base, 'POST', '/v1/login', { headers: { host: 'gate.local:8080', origin: 'http://localhost:3000' } });
    expect(res.status).toBe(403);
    expect(res.json).toEqual(MISMATCH);
    expect(res.headers['x-gatehouse-reason']).toBe('origin http://localhost:3000 is not this server\'s own; with --allowed-origins=* only the server\'s origin may make state-changing calls: list your app\'s origin in --allowed-origins');
  });

  it('decides each request by its own Origin and Host, whatever the request before it was', async () => {
    const at = async (host: string, origin: string): Promise<number> =>
      (await send(direct.base, 'POST', '/v1/login', { headers: { host, origin } })).status;
    // the same Origin alternately with its own host and with another one, then a Referer of that origin
    expect(await at('gate.local:8080', 'http://gate.local:8080')).toBe(200);
    expect(await at('other.local:8080', 'http://gate.local:8080')).toBe(403);
    expect(await at('gate.local:8080', 'http://gate.local:8080')).toBe(200);
    expect(await at('gate.local:8080', 'http://evil.local:8080')).toBe(403);
    const referer = await send(direct.base, 'POST', '/v1/login', { headers: { host: 'other.local:8080', referer: 'http://gate.local:8080/app' } });
    expect(referer.status).toBe(403);
  });

  it('ignores X-Forwarded-Host from an untrusted peer', async () => {
    const res = await send(direct.base, 'POST', '/v1/login', {
      headers: { host: 'internal:8080', 'x-forwarded-host': 'evil.example', origin: 'https://evil.example' },
    });
    expect(res.json).toEqual(MISMATCH);
  });

  it('honours X-Forwarded-Host from a trusted proxy', async () => {
    const res = await send(proxied.base, 'POST', '/v1/login', {
      headers: { host: 'internal:8080', 'x-forwarded-host': 'public.example', origin: 'https://public.example' },
    });
    expect(res.status).toBe(200);
  });
});

describe('isCsrfExempt', () => {
  it('does not exempt lookalike paths', () => {
    expect(isCsrfExempt('POST', '/oauth/token/x', undefined)).toBe(false);
    expect(isCsrfExempt('POST', '/oauth/saml/acme/acs/extra', undefined)).toBe(false);
    expect(isCsrfExempt('POST', '/v1/authorize', undefined)).toBe(false);
    expect(isCsrfExempt('POST', '/scim/v2/Users', 'Basic abc')).toBe(false);
  });

  it('exempts the SAML IdP sign-on endpoint (the SP\'s page POSTs the AuthnRequest, SAML Bindings §3.5), and only it', () => {
    expect(isCsrfExempt('POST', '/oauth/saml/acme/idp/sso', undefined)).toBe(true);
    expect(isCsrfExempt('POST', '/oauth/saml/acme/idp/metadata', undefined)).toBe(false);
    // org SAML Single Logout is a POST (its GET only asks): checked, so another site cannot sign a user out
    expect(isCsrfExempt('POST', '/oauth/saml/acme/logout', undefined)).toBe(false);
    expect(isCsrfExempt('POST', '/oauth/saml/acme/idp/sso/x', undefined)).toBe(false);
    expect(isCsrfExempt('POST', '/oauth/saml/a/b/idp/sso', undefined)).toBe(false);
  });

  it('does not exempt RP-initiated logout by POST, with or without an id_token_hint (behaviour.md §2.5 lists no such exemption)', () => {
    expect(isCsrfExempt('POST', '/logout', undefined)).toBe(false);
    expect(isCsrfExempt('POST', '/logout', 'Bearer abc')).toBe(false);
  });
});
