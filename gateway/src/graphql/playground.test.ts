import { describe, it, expect, beforeAll, afterAll } from '@jest/globals';
import express from 'express';
import { AppError } from '@gatehouse/errors';
import { createLogger } from '@gatehouse/observability';
import { createErrorHandler, sendErrorFor } from '../http/index.ts';
import { listen, send, type RunningApp } from '../http/test-server.ts';
import { mountPlayground, type PlaygroundOptions } from './playground.ts';

const SECRET = 'playground-admin-secret-0123456789';
const BROWSER = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8';
const UNAUTHORIZED = { errors: [{ message: 'unauthorized', extensions: { code: 'UNAUTHENTICATED' } }] };

/**
 * Admits what the admin service's guard admits for the header alone (the gateway asks that guard; the
 * cookie and the lockout are covered end to end in test/e2e/graphql-playground.e2e.test.ts).
 */
const headerAdmit = (headerAuth: boolean): PlaygroundOptions['admit'] => async (req) => {
  if (!headerAuth || req.headers['x-service-admin-secret'] !== SECRET) throw new AppError('unauthenticated', 'unauthorized');
};

/** The gateway's /graphql GET routes: the playground, then the 405 fallback and the error handler of app.ts. */
async function start(opts: Partial<PlaygroundOptions> = {}): Promise<RunningApp> {
  const app = express();
  mountPlayground(app, { admit: headerAdmit(true), basePath: '', ...opts });
  app.all('/graphql', (req, res) => sendErrorFor(req, res, new AppError('method_not_allowed', 'Method Not Allowed')));
  app.use(createErrorHandler(createLogger('silent')));
  return listen(app);
}

const page = (s: RunningApp, headers: Record<string, string> = { accept: BROWSER, 'x-service-admin-secret': SECRET }) => send(s.base, 'GET', '/graphql', { headers });
/** every `href`/`src` of the page */
const references = (html: string): string[] => [...html.matchAll(/\s(?:href|src)="([^"]*)"/g)].map((m) => m[1]!);

describe('GraphQL playground (graphql.md §1.1, behaviour.md §1.3)', () => {
  let s: RunningApp;
  beforeAll(async () => { s = await start(); });
  afterAll(async () => { await s.close(); });

  it('serves GraphiQL to a browser with the admin secret, under a CSP with a fresh style nonce', async () => {
    const [a, b] = [await page(s), await page(s)];
    expect(a.status).toBe(200);
    expect(a.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(a.headers['cache-control']).toBe('no-store');
    expect(a.headers.vary).toContain('Accept');
    expect(a.text).toContain('<div id="graphiql" data-endpoint="/graphql"');
    const nonce = /'nonce-([^']+)'/.exec(String(a.headers['content-security-policy']))![1]!;
    // hex: a base64 nonce can hold '//', which reads as a URL in the page (a fresh-clone CI run caught it)
    expect(nonce).toMatch(/^[0-9a-f]{32}$/);
    expect(a.text).toContain(`data-style-nonce="${nonce}"`);
    expect(b.headers['content-security-policy']).not.toContain(nonce);
    expect(a.headers['content-security-policy']).toBe(`default-src 'none'; script-src 'self'; style-src 'self' 'nonce-${nonce}'; font-src 'self' data:; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`);
  });

  it('serves every script and stylesheet the page references itself, with hashed names cached for good', async () => {
    const refs = references((await page(s)).text);
    const local = refs.filter((r) => r !== 'data:,');
    expect(local).toHaveLength(6);
    for (const ref of local) {
      expect(ref).toMatch(/^\/graphql\/playground\/[a-z.-]+\.[0-9a-f]{16}\.(js|css)$/);
      const asset = await send(s.base, 'GET', ref);
      expect([ref, asset.status]).toEqual([ref, 200]);
      expect(asset.headers['content-type']).toBe(ref.endsWith('.js') ? 'text/javascript; charset=utf-8' : 'text/css; charset=utf-8');
      expect(asset.headers['cache-control']).toBe('public, max-age=31536000, immutable');
      expect(asset.text.length).toBeGreaterThan(50);
    }
    expect((await send(s.base, 'GET', '/graphql/playground/graphiql.min.0000000000000000.js')).status).toBe(404);
  });

  it('refuses a browser without super-admin credentials with 401 unauthorized', async () => {
    expect([(await page(s, { accept: BROWSER })).status, (await page(s, { accept: BROWSER })).json]).toEqual([401, UNAUTHORIZED]);
    const wrong = await page(s, { accept: BROWSER, 'x-service-admin-secret': `${SECRET}x` });
    expect([wrong.status, wrong.json]).toEqual([401, UNAUTHORIZED]);
    const off = await start({ admit: headerAdmit(false) });
    try {
      expect((await page(off)).status).toBe(401);
    } finally {
      await off.close();
    }
  });

  it('leaves GETs that do not prefer HTML to the 405 answer (no GraphQL over GET, graphql.md §1.1)', async () => {
    for (const accept of ['application/json', '*/*', 'application/graphql-response+json, text/html;q=0.5']) {
      const r = await page(s, { accept, 'x-service-admin-secret': SECRET });
      expect([accept, r.status, r.json]).toEqual([accept, 405, { errors: [{ message: 'Method Not Allowed', extensions: { code: 'METHOD_NOT_ALLOWED' } }] }]);
    }
  });

  it('prefixes the endpoint and the assets with the path of --url', async () => {
    const prefixed = await start({ basePath: '/auth' });
    try {
      const html = (await page(prefixed)).text;
      expect(html).toContain('data-endpoint="/auth/graphql"');
      expect(references(html).filter((r) => r !== 'data:,').every((r) => r.startsWith('/auth/graphql/playground/'))).toBe(true);
    } finally {
      await prefixed.close();
    }
  });
});
