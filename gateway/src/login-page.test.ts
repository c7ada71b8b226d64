import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import express from 'express';
import { createLogger, createMetricsRegistry } from '@gatehouse/observability';
import { createHttpLayer } from './http/layer.ts';
import { listen, type RunningApp } from './http/test-server.ts';
import { loginPageCsp, mountLoginPage, type LoginPageOptions } from './login-page.ts';

const INDEX = '<!doctype html><html><head><title>Sign in</title><script type="module" crossorigin src="/app/assets/index-abc.js"></script></head>'
  + '<body><div id="app" data-gatehouse-config=""></div></body></html>';

/** An express app with the HTTP layer (security headers, error answers) and the page mounted on `dist`. */
async function serve(dist: string, opts: Partial<LoginPageOptions> = {}): Promise<RunningApp> {
  const logger = createLogger('silent');
  const layer = createHttpLayer({ allowedOrigins: ['*'], trustedProxies: [], url: 'http://127.0.0.1', enableHsts: false, rateLimitRps: 1000, rateLimitBurst: 1000 },
    { logger, registry: createMetricsRegistry({ defaultMetrics: false }) });
  const app = express();
  app.use(...layer.before);
  mountLoginPage(app, { organizationName: 'Acme <&> "Co"', organizationLogo: 'https://cdn.example.com/logo.svg', basePath: '', distDir: dist, ...opts }, logger);
  app.use(layer.notFound);
  app.use((_req, _res, next) => { next(new Error('unmatched')); });
  app.use(layer.errorHandler);
  return listen(app);
}

describe('the login page route (gateway/login-page)', () => {
  let dist: string;
  beforeAll(() => {
    dist = mkdtempSync(path.join(os.tmpdir(), 'gh-login-dist-'));
    mkdirSync(path.join(dist, 'assets'));
    writeFileSync(path.join(dist, 'index.html'), INDEX);
    writeFileSync(path.join(dist, 'assets', 'index-abc.js'), 'console.log(1)');
  });
  afterAll(() => rmSync(dist, { recursive: true, force: true }));

  it('serves index.html for /app and any path under it, with the config escaped into the attribute and the CSP', async () => {
    const srv = await serve(dist);
    for (const p of ['/app', '/app/', '/app/login', '/app/a/b/c?x=1']) {
      const res = await fetch(`${srv.base}${p}`);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-security-policy')).toBe(loginPageCsp('https://cdn.example.com/logo.svg'));
      const html = await res.text();
      expect(html).toContain('data-gatehouse-config="{&quot;organization_name&quot;:&quot;Acme &lt;&amp;&gt; \\&quot;Co\\&quot;&quot;,');
      expect(html).toContain('<title>Sign in · Acme &lt;&amp;&gt; &quot;Co&quot;</title>');
    }
    const js = await fetch(`${srv.base}/app/assets/index-abc.js`);
    expect([js.status, js.headers.get('content-type'), await js.text()]).toEqual([200, 'text/javascript; charset=utf-8', 'console.log(1)']);
    expect((await fetch(`${srv.base}/app/assets/other.js`)).status).toBe(404);
    // not under /app: not the page
    expect((await fetch(`${srv.base}/application`)).status).not.toBe(200);
    await srv.close();
  });

  it('puts the asset URLs under the --url path prefix', async () => {
    const srv = await serve(dist, { basePath: '/auth' });
    const html = await (await fetch(`${srv.base}/app/login`)).text();
    expect(html).toContain('src="/auth/app/assets/index-abc.js"');
    expect(html).toContain('&quot;base_path&quot;:&quot;/auth&quot;');
    await srv.close();
  });

  it('the CSP allows images from the logo origin only when the logo is an http(s) URL; never inline scripts', () => {
    expect(loginPageCsp('')).toContain("img-src 'self' data:;");
    expect(loginPageCsp('javascript:alert(1)')).toContain("img-src 'self' data:;");
    expect(loginPageCsp('https://cdn.example.com:8443/x/logo.png')).toContain("img-src 'self' data: https://cdn.example.com:8443;");
    expect(loginPageCsp('https://x')).not.toMatch(/unsafe-inline|unsafe-eval/);
  });

  it('without a build: /app answers 503 naming the build command, the rest is unaffected', async () => {
    const srv = await serve(path.join(dist, 'missing'));
    const res = await fetch(`${srv.base}/app/login`);
    expect([res.status, await res.json()]).toEqual([503, { code: 'unavailable', message: 'the login page is not built: run `npm run build:login`' }]);
    await srv.close();
  });
});
