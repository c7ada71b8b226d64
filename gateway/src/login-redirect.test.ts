/**
 * @module login-redirect.test: the social routes (issue 20) behind the real HTTP layer: 302 to the
 * RPC's `redirect_url` with its cookies, Apple's cross-site form_post accepted (CSRF-exempt, §2.5),
 * `{code, message}` 4xx for a refused provider, HEAD without a call.
 */
import { describe, it, expect, beforeAll, afterAll } from '@jest/globals';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { AppError } from '@gatehouse/errors';
import { createLogger, createMetricsRegistry } from '@gatehouse/observability';
import type { CallContext, ServiceClient } from '@gatehouse/rpc';
import { createHttpLayer } from './http/index.ts';
import { mountSocialRoutes } from './login-redirect.ts';
import { send } from './http/test-server.ts';

const URL_FLAG = 'http://auth.example.com';

function fakeAuthn(): ServiceClient & { calls: Array<{ rpc: string; req: Record<string, unknown>; ctx: CallContext }> } {
  const calls: Array<{ rpc: string; req: Record<string, unknown>; ctx: CallContext }> = [];
  return {
    calls,
    async call(rpc, req, ctx) {
      calls.push({ rpc, req: req as Record<string, unknown>, ctx });
      const provider = (req as { provider: string }).provider;
      if (provider === 'myspace') throw new AppError('not_found', 'unknown social provider: myspace');
      if (provider === 'github') throw new AppError('failed_precondition', 'github login is not enabled for this instance');
      ctx.setCookies.push('gatehouse_social=sealed; Path=/; HttpOnly');
      return { redirect_url: `https://idp.example/auth?from=${rpc}` };
    },
    close() {},
  };
}

/** One raw request to the test server (./http/test-server.ts), its body as text. */
async function request(port: number, method: string, path: string, body?: string, headers: Record<string, string> = {}): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }> {
  const res = await send(`http://127.0.0.1:${port}`, method, path, { headers, ...(body === undefined ? {} : { body }) });
  return { status: res.status, headers: res.headers, body: res.text };
}

describe('the social login routes', () => {
  let server: http.Server;
  let port: number;
  const authn = fakeAuthn();

  beforeAll(async () => {
    const logger = createLogger('silent');
    const layer = createHttpLayer(
      { allowedOrigins: ['*'], trustedProxies: [], url: URL_FLAG, enableHsts: false, rateLimitRps: 0, rateLimitBurst: 0 },
      { logger, registry: createMetricsRegistry({ defaultMetrics: false }) },
    );
    const app = express();
    for (const mw of layer.before) app.use(mw);
    mountSocialRoutes(app, { authn }, { url: URL_FLAG, deadlineMs: 30_000 }, logger);
    app.use(layer.notFound);
    app.use(layer.errorHandler);
    server = http.createServer(app);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    await new Promise((r) => server.close(r));
  });

  it('GET /oauth_login/<provider>: 302 to the RPC\'s URL with its cookie, the query as the request', async () => {
    const res = await request(port, 'GET', '/oauth_login/google?redirect_uri=https%3A%2F%2Fapp.example%2Fcb&state=s1&roles=user&scope=openid&junk=1');
    expect(res.status).toBe(302);
    expect(res.headers.location).toBe('https://idp.example/auth?from=SocialLogin');
    expect(res.headers['set-cookie']).toEqual(['gatehouse_social=sealed; Path=/; HttpOnly']);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(authn.calls.at(-1)).toMatchObject({ rpc: 'SocialLogin', req: { provider: 'google', redirect_uri: 'https://app.example/cb', state: 's1', roles: 'user', scope: 'openid' } });
    expect(authn.calls.at(-1)!.req).not.toHaveProperty('junk');
  });

  it('POST /oauth_callback/apple: a cross-site form_post (Origin appleid.apple.com) is not refused by CSRF', async () => {
    const res = await request(port, 'POST', '/oauth_callback/apple', 'code=c1&state=st&user=%7B%22name%22%3A%7B%7D%7D&iss=https%3A%2F%2Fappleid.apple.com', {
      'content-type': 'application/x-www-form-urlencoded', origin: 'https://appleid.apple.com',
    });
    expect(res.status).toBe(302);
    expect(authn.calls.at(-1)).toMatchObject({ rpc: 'SocialCallback', req: { provider: 'apple', code: 'c1', state: 'st', user: '{"name":{}}', iss: 'https://appleid.apple.com' } });
  });

  it('an unknown or disabled provider answers its {code, message} and status, not a redirect', async () => {
    const unknown = await request(port, 'GET', '/oauth_login/myspace');
    expect({ status: unknown.status, body: JSON.parse(unknown.body) }).toEqual({ status: 404, body: { code: 'not_found', message: 'unknown social provider: myspace' } });
    const disabled = await request(port, 'GET', '/oauth_callback/github?code=x');
    expect({ status: disabled.status, body: JSON.parse(disabled.body) }).toEqual({ status: 400, body: { code: 'failed_precondition', message: 'github login is not enabled for this instance' } });
  });

  it('HEAD answers 200 without calling authn (a prefetcher must not use the code)', async () => {
    const before = authn.calls.length;
    expect((await request(port, 'HEAD', '/oauth_callback/google?code=x&state=y')).status).toBe(200);
    expect(authn.calls.length).toBe(before);
  });
});
