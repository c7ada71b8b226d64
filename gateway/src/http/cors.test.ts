import { describe, it, expect, beforeAll, afterAll } from '@jest/globals';
import express from 'express';
import { cors, CORS_ALLOWED_HEADERS, CORS_EXPOSED_HEADERS } from './cors.ts';
import { compileOriginPolicy } from './origins.ts';
import { securityHeaders } from './security-headers.ts';
import { listen, send, type RunningApp } from './test-server.ts';

function app(allowed: string[], enableHsts = false) {
  const a = express();
  a.use(securityHeaders({ enableHsts }), cors(compileOriginPolicy(allowed)));
  a.use((_req, res) => {
    res.json({ ok: true });
  });
  return a;
}

describe('CORS (behaviour.md §2.5, graphql.md O2)', () => {
  let star: RunningApp;
  let list: RunningApp;
  beforeAll(async () => {
    star = await listen(app(['*'], true));
    list = await listen(app(['https://app.example.com', '*.example.org']));
  });
  afterAll(async () => {
    await star.close();
    await list.close();
  });
  const preflight = (base: string, origin: string, headers = 'content-type, x-authorizer-url') =>
    send(base, 'OPTIONS', '/graphql', { headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': headers } });

  it('with * sends Access-Control-Allow-Origin: * and no credentials', async () => {
    const res = await send(star.base, 'GET', '/v1/meta', { headers: { origin: 'https://any.example' } });
    expect(res.headers['access-control-allow-origin']).toBe('*');
    expect(res.headers['access-control-allow-credentials']).toBeUndefined();
  });

  it('answers a preflight with 204, Max-Age 600 and the allowed headers incl. X-Authorizer-*', async () => {
    const res = await preflight(star.base, 'https://any.example');
    expect(res.status).toBe(204);
    expect(res.text).toBe('');
    expect(res.headers['access-control-max-age']).toBe('600');
    expect(res.headers['access-control-allow-headers']).toBe(CORS_ALLOWED_HEADERS);
    expect(CORS_ALLOWED_HEADERS).toContain('X-Authorizer-URL');
    expect(CORS_ALLOWED_HEADERS).toContain('X-Authorizer-Client-ID');
    expect(res.headers['access-control-allow-methods']).toContain('POST');
  });

  it('lets a browser DPoP client send its proof and read the nonce and the challenge (RFC 9449 §8, §7.1)', async () => {
    const pre = await preflight(star.base, 'https://spa.example', 'dpop, authorization');
    expect(pre.headers['access-control-allow-headers']).toContain('DPoP');
    for (const base of [star.base, list.base]) {
      const res = await send(base, 'POST', '/oauth/token', { headers: { origin: 'https://app.example.com' } });
      expect(res.headers['access-control-expose-headers']).toBe(CORS_EXPOSED_HEADERS);
    }
    expect(CORS_EXPOSED_HEADERS).toBe('DPoP-Nonce, WWW-Authenticate');
    // an unlisted origin is granted nothing, exposed headers included
    const evil = await send(list.base, 'POST', '/oauth/token', { headers: { origin: 'https://evil.example' } });
    expect(evil.headers['access-control-expose-headers']).toBeUndefined();
  });

  it('never allows the admin-secret header cross-origin', () => {
    expect(CORS_ALLOWED_HEADERS.toLowerCase()).not.toContain('x-service-admin-secret');
  });

  it('with an explicit list echoes a listed origin with credentials and Vary: Origin', async () => {
    const res = await send(list.base, 'POST', '/v1/login', { headers: { origin: 'https://app.example.com' } });
    expect(res.headers['access-control-allow-origin']).toBe('https://app.example.com');
    expect(res.headers['access-control-allow-credentials']).toBe('true');
    expect(res.headers.vary).toBe('Origin');
    const sub = await send(list.base, 'GET', '/v1/meta', { headers: { origin: 'https://a.example.org' } });
    expect(sub.headers['access-control-allow-origin']).toBe('https://a.example.org');
  });

  it('with an explicit list sends no CORS grant to an unlisted origin', async () => {
    const res = await send(list.base, 'GET', '/v1/meta', { headers: { origin: 'https://evil.example' } });
    expect(res.headers['access-control-allow-origin']).toBeUndefined();
    expect(res.headers['access-control-allow-credentials']).toBeUndefined();
    expect(res.headers.vary).toBe('Origin');
    const pre = await preflight(list.base, 'https://example.org');
    expect(pre.status).toBe(204);
    expect(pre.headers['access-control-allow-origin']).toBeUndefined();
    expect(pre.headers['access-control-allow-headers']).toBeUndefined();
  });

  it('answers a listed preflight with the echoed origin', async () => {
    const res = await preflight(list.base, 'https://app.example.com');
    expect(res.status).toBe(204);
    expect(res.headers['access-control-allow-origin']).toBe('https://app.example.com');
    expect(res.headers['access-control-allow-credentials']).toBe('true');
    expect(res.headers['access-control-max-age']).toBe('600');
  });

  it('passes a plain OPTIONS (no Access-Control-Request-Method) through', async () => {
    const res = await send(star.base, 'OPTIONS', '/v1/meta');
    expect(res.status).toBe(200);
    expect(res.json).toEqual({ ok: true });
  });
});

describe('security headers (behaviour.md §2.5, §1.2)', () => {
  let plain: RunningApp;
  let hsts: RunningApp;
  beforeAll(async () => {
    plain = await listen(app(['*']));
    hsts = await listen(app(['*'], true));
  });
  afterAll(async () => {
    await plain.close();
    await hsts.close();
  });

  it('sends nosniff, DENY, the referrer policy and a CSP on every response', async () => {
    const res = await send(plain.base, 'GET', '/anything');
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(res.headers['x-frame-options']).toBe('DENY');
    expect(res.headers['referrer-policy']).toBe('strict-origin-when-cross-origin');
    expect(res.headers['content-security-policy']).toContain("frame-ancestors 'none'");
    expect(res.headers['strict-transport-security']).toBeUndefined();
  });

  it('adds HSTS only with --enable-hsts', async () => {
    const res = await send(hsts.base, 'GET', '/anything');
    expect(res.headers['strict-transport-security']).toBe('max-age=31536000; includeSubDomains');
  });
});
