import { describe, it, expect, beforeAll, afterAll } from '@jest/globals';
import { request } from 'node:http';
import express from 'express';
import { createMetricsRegistry } from '@gatehouse/observability';
import { createHttpMetrics, startMetricsServer, type MetricsServer } from './metrics.ts';
import { v1NotFound } from './not-found.ts';
import { listen, send, type RunningApp } from './test-server.ts';

describe('HTTP metrics and the dedicated /metrics listener (spec §1, §8)', () => {
  const registry = createMetricsRegistry({ defaultMetrics: false });
  let app: RunningApp;
  let metrics: MetricsServer;
  beforeAll(async () => {
    const a = express();
    a.use(createHttpMetrics(registry).middleware);
    a.get('/healthz', (_req, res) => {
      res.json({ status: 'ok' });
    });
    a.get('/v1/meta', (_req, res) => {
      res.json({});
    });
    a.get('/hang', () => new Promise(() => { /* never answers */ }));
    a.get('/orgs/:id', (_req, res) => {
      res.json({});
    });
    a.use(v1NotFound());
    app = await listen(a);
    metrics = await startMetricsServer({ host: '127.0.0.1', port: 0, registry });
  });
  afterAll(async () => {
    await app.close();
    await metrics.close();
  });

  it('serves GET /metrics on the metrics listener only', async () => {
    await send(app.base, 'GET', '/healthz');
    const res = await send(`http://127.0.0.1:${metrics.port}`, 'GET', '/metrics');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toContain('text/plain');
    expect(res.text).toContain('gatehouse_http_requests_total{route="/healthz",method="GET",code="200"} 1');
    expect(res.text).toContain('gatehouse_http_request_duration_seconds_bucket');
    expect((await send(app.base, 'GET', '/metrics')).status).toBe(404);
    expect((await send(`http://127.0.0.1:${metrics.port}`, 'GET', '/other')).status).toBe(404);
    expect((await send(`http://127.0.0.1:${metrics.port}`, 'POST', '/metrics')).status).toBe(405);
  });

  it('labels with route templates, never raw paths', async () => {
    await send(app.base, 'GET', '/v1/meta');
    await send(app.base, 'GET', '/orgs/8c1f0c0e-1111-4e4e-9999-aaaaaaaaaaaa');
    await send(app.base, 'POST', '/v1/users/8c1f0c0e-1111-4e4e-9999-aaaaaaaaaaaa');
    await send(app.base, 'GET', '/v1/signup');
    await send(app.base, 'GET', '/wp-admin/x.php');
    const text = (await send(`http://127.0.0.1:${metrics.port}`, 'GET', '/metrics')).text;
    expect(text).toContain('route="/v1/meta",method="GET",code="200"');
    expect(text).toContain('route="/orgs/:id",method="GET",code="200"');
    expect(text).toContain('route="unmatched",method="POST",code="404"');
    expect(text).toContain('route="/v1/signup",method="GET",code="405"');
    expect(text).toContain('route="unmatched",method="GET",code="404"');
    expect(text).not.toContain('8c1f0c0e');
    expect(text).not.toContain('wp-admin');
  });

  it('counts a request the client abandoned as 499', async () => {
    await new Promise<void>((resolve) => {
      const req = request({ host: '127.0.0.1', port: app.port, path: '/hang', agent: false });
      req.on('error', () => resolve());
      req.end();
      setTimeout(() => req.destroy(), 50);
    });
    await new Promise((r) => setTimeout(r, 50));
    const text = (await send(`http://127.0.0.1:${metrics.port}`, 'GET', '/metrics')).text;
    expect(text).toContain('route="/hang",method="GET",code="499"} 1');
  });

  it('reuses the metrics when the registry already holds them (all-in-one)', () => {
    expect(() => createHttpMetrics(registry)).not.toThrow();
  });
});
