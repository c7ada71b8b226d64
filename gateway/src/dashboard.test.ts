import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import express from 'express';
import { createLogger, createMetricsRegistry } from '@gatehouse/observability';
import { createHttpLayer } from './http/layer.ts';
import { listen, type RunningApp } from './http/test-server.ts';
import { DASHBOARD_CSP, mountDashboard, type DashboardOptions } from './dashboard.ts';

const INDEX = '<!doctype html><html><head><script type="module" crossorigin src="/dashboard/assets/index-x1.js"></script></head>'
  + '<body><div id="app" data-gatehouse-config=""></div></body></html>';

/** The console mounted on `dist` behind the HTTP layer (its error answers). */
async function serveConsole(dist: string, opts: Partial<DashboardOptions> = {}): Promise<RunningApp> {
  const logger = createLogger('silent');
  const layer = createHttpLayer({ allowedOrigins: ['*'], trustedProxies: [], url: 'http://127.0.0.1', enableHsts: false, rateLimitRps: 1000, rateLimitBurst: 1000 },
    { logger, registry: createMetricsRegistry({ defaultMetrics: false }) });
  const app = express();
  app.use(...layer.before);
  mountDashboard(app, { basePath: '', playground: true, distDir: dist, ...opts }, logger);
  app.use(layer.notFound);
  app.use(layer.errorHandler);
  return listen(app);
}

describe('the admin console route (gateway/dashboard)', () => {
  let dist: string;
  beforeAll(() => {
    dist = mkdtempSync(path.join(os.tmpdir(), 'gh-dashboard-dist-'));
    mkdirSync(path.join(dist, 'assets'));
    writeFileSync(path.join(dist, 'index.html'), INDEX);
    writeFileSync(path.join(dist, 'assets', 'index-x1.js'), 'export {}');
  });
  afterAll(() => rmSync(dist, { recursive: true, force: true }));

  it('serves index.html for /dashboard and every path under it with the config and the CSP, and the assets', async () => {
    const srv = await serveConsole(dist, { playground: false });
    for (const p of ['/dashboard', '/dashboard/', '/dashboard/users/abc', '/dashboard/audit-log?x=1']) {
      const res = await fetch(`${srv.base}${p}`);
      expect([p, res.status, res.headers.get('content-security-policy'), res.headers.get('cache-control')]).toEqual([p, 200, DASHBOARD_CSP, 'no-store']);
      expect(await res.text()).toContain('data-gatehouse-config="{&quot;base_path&quot;:&quot;&quot;,&quot;playground&quot;:false}"');
    }
    const js = await fetch(`${srv.base}/dashboard/assets/index-x1.js`);
    expect([js.status, js.headers.get('content-type'), js.headers.get('content-security-policy')]).toEqual([200, 'text/javascript; charset=utf-8', DASHBOARD_CSP]);
    expect((await fetch(`${srv.base}/dashboard/assets/other.js`)).status).toBe(404);
    expect((await fetch(`${srv.base}/dashboards`)).status).toBe(404);
    expect(DASHBOARD_CSP).not.toMatch(/unsafe-inline|unsafe-eval/);
    await srv.close();
  });

  it('puts the asset URLs and the config under the --url path prefix', async () => {
    const srv = await serveConsole(dist, { basePath: '/auth' });
    const html = await (await fetch(`${srv.base}/dashboard`)).text();
    expect(html).toContain('src="/auth/dashboard/assets/index-x1.js"');
    expect(html).toContain('&quot;base_path&quot;:&quot;/auth&quot;');
    await srv.close();
  });

  it('without a build: /dashboard answers 503 naming the build command', async () => {
    const srv = await serveConsole(path.join(dist, 'missing'));
    const res = await fetch(`${srv.base}/dashboard/users`);
    expect([res.status, await res.json()]).toEqual([503, { code: 'unavailable', message: 'the admin console is not built: run `npm run build:dashboard`' }]);
    await srv.close();
  });
});
