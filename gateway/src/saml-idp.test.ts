/**
 * @module saml-idp.test: the gateway's SAML IdP routes (issue 20) with an orgs stand-in: what reaches
 * `SamlIdpRequest` (org, endpoint, method, raw query and form body, cookies), and how its answers are
 * written (XML, the HTML page with its CSP, a 302), an SP's cross-origin POST passing the CSRF check,
 * and errors as HTML, never a 5xx for a refusal.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { AppError } from '@gatehouse/errors';
import { createLogger, createMetricsRegistry } from '@gatehouse/observability';
import type { CallContext, ServiceClient } from '@gatehouse/rpc';
import { createHttpLayer } from './http/index.ts';
import type { ServiceClients } from './rest.ts';
import { mountSamlIdp } from './saml-idp.ts';
import { send } from './http/test-server.ts';

const URL_FLAG = 'http://auth.example.com';

function fakeOrgs(): ServiceClient & { calls: Array<{ rpc: string; req: Record<string, unknown>; ctx: CallContext }> } {
  const calls: Array<{ rpc: string; req: Record<string, unknown>; ctx: CallContext }> = [];
  return {
    calls,
    async call(rpc, req, ctx) {
      const r = req as Record<string, unknown>;
      calls.push({ rpc, req: r, ctx });
      if (r['org'] === 'down') throw new AppError('unavailable', 'authn service unavailable');
      if (r['org'] === 'boom') throw new Error('storage exploded');
      if (r['endpoint'] === 'metadata') return { status: 200, content_type: 'application/samlmetadata+xml; charset=utf-8', body: '<EntityDescriptor/>', location: null };
      if (String(r['query']).includes('login')) return { status: 302, content_type: '', body: '', location: `${URL_FLAG}/app/login?return_to=x` };
      return { status: 200, content_type: 'text/html; charset=utf-8', body: '<form></form>', location: null };
    },
    close() {},
  };
}

/** One raw request to the test server (./http/test-server.ts), its body as text. */
async function request(port: number, method: string, path: string, body?: string, headers: Record<string, string> = {}): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }> {
  const res = await send(`http://127.0.0.1:${port}`, method, path, { headers, ...(body === undefined ? {} : { body }) });
  return { status: res.status, headers: res.headers, body: res.text };
}

describe('the SAML IdP routes of the gateway', () => {
  let server: http.Server;
  let port: number;
  const orgs = fakeOrgs();

  beforeAll(async () => {
    const logger = createLogger('silent');
    const layer = createHttpLayer(
      { allowedOrigins: ['*'], trustedProxies: [], url: URL_FLAG, enableHsts: false, rateLimitRps: 0, rateLimitBurst: 0 },
      { logger, registry: createMetricsRegistry({ defaultMetrics: false }) },
    );
    const clients: ServiceClients = { orgs };
    const app = express();
    for (const mw of layer.before) app.use(mw);
    mountSamlIdp(app, clients, { deadlineMs: 5_000, logger });
    app.use(layer.notFound);
    server = http.createServer(app);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    await new Promise<void>((resolve) => { server.close(() => resolve()); });
  });

  it('forwards the metadata request and writes the XML as given, not cached', async () => {
    const res = await request(port, 'GET', '/oauth/saml/acme/idp/metadata');
    expect([res.status, res.headers['content-type'], res.body, res.headers['cache-control']]).toEqual([200, 'application/samlmetadata+xml; charset=utf-8', '<EntityDescriptor/>', 'no-store']);
    expect(orgs.calls.at(-1)?.req).toEqual({ org: 'acme', endpoint: 'metadata', method: 'GET', query: '', body: '' });
  });

  it('forwards an SP\'s cross-origin POST (raw form body) with the cookies, and writes the page under its CSP', async () => {
    const form = 'SAMLRequest=PHg%2B&RelayState=%2Fhome';
    const res = await request(port, 'POST', '/oauth/saml/acme/idp/sso?x=1', form, {
      origin: 'https://sp.elsewhere.example', 'content-type': 'application/x-www-form-urlencoded', cookie: 'cookie_session=abc',
    });
    expect(res.status).toBe(200);
    expect(res.headers['content-security-policy']).toContain("form-action *");
    expect(res.headers['content-security-policy']).toContain("frame-ancestors 'none'");
    expect(orgs.calls.at(-1)?.req).toEqual({ org: 'acme', endpoint: 'sso', method: 'POST', query: 'x=1', body: form });
    expect(orgs.calls.at(-1)?.ctx.headers.cookie).toBe('cookie_session=abc');
  });

  it('writes a 302 to the login page', async () => {
    const res = await request(port, 'GET', '/oauth/saml/acme/idp/sso?login=1');
    expect([res.status, res.headers.location]).toEqual([302, `${URL_FLAG}/app/login?return_to=x`]);
  });

  it('answers unknown endpoints 404 and a failing service as an HTML page: 503 when unavailable, 500 without details otherwise', async () => {
    expect((await request(port, 'GET', '/oauth/saml/acme/idp/other')).status).toBe(404);
    const down = await request(port, 'GET', '/oauth/saml/down/idp/metadata');
    expect([down.status, down.body]).toEqual([503, expect.stringContaining('authn service unavailable')]);
    const boom = await request(port, 'GET', '/oauth/saml/boom/idp/metadata');
    expect([boom.status, boom.body.includes('storage exploded')]).toEqual([500, false]);
  });
});
