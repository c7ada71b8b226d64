/**
 * @module test/e2e/readiness
 * Issue 15 item 4: `/readyz` reports every dependency the process uses and answers 503 naming the
 * one that is down; `/healthz` stays liveness (200 while the process runs). An outage is one
 * structured log line when it starts and one when it ends, never a flood of driver stack traces.
 * The tests run their own redis-server and nats-server on free ports, so they can stop them.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, it, expect, beforeAll, afterAll, jest } from '@jest/globals';
import { freePort, startDeployment, type Deployment } from '@gatehouse/testing';
import { readyz, until } from '../support/readyz.ts';

jest.setTimeout(90_000);

/** A server process of the test's own on a fixed port, which the test can stop and start again. */
function ownServer(command: string, args: (port: number, dir: string) => string[]) {
  let child: ChildProcess | null = null;
  const dir = mkdtempSync(path.join(os.tmpdir(), 'gatehouse-dep-'));
  let port = 0;
  const waitListening = async (): Promise<void> => {
    for (let i = 0; i < 100; i++) {
      const ok = await new Promise<boolean>((resolve) => {
        const s = net.connect(port, '127.0.0.1');
        s.once('connect', () => { s.destroy(); resolve(true); });
        s.once('error', () => resolve(false));
      });
      if (ok) return;
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error(`${command} did not listen on ${port}`);
  };
  return {
    get port() { return port; },
    async start(): Promise<void> {
      if (port === 0) port = await freePort();
      child = spawn(command, args(port, dir), { stdio: 'ignore' });
      await waitListening();
    },
    async stop(): Promise<void> {
      if (!child) return;
      const exited = new Promise((r) => child!.once('exit', r));
      child.kill('SIGKILL');
      await exited;
      child = null;
    },
    async dispose(): Promise<void> {
      await this.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

const count = (text: string, needle: string): number => text.split(needle).length - 1;

describe('all-in-one: Redis and NATS outages', () => {
  const redis = ownServer('redis-server', (port) => ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no']);
  const nats = ownServer('nats-server', (port, dir) => ['-a', '127.0.0.1', '-p', String(port), '-js', '-sd', dir]);
  let d: Deployment;
  beforeAll(async () => {
    await redis.start();
    await nats.start();
    d = await startDeployment('all', {
      nats: true, natsUrl: `nats://127.0.0.1:${nats.port}`, readyTimeoutMs: 60_000,
      flags: [`--redis-url=redis://127.0.0.1:${redis.port}`, '--log-level=info'],
    });
  }, 120_000);
  afterAll(async () => { await d?.stop(); await redis.dispose(); await nats.dispose(); });

  it('is ready with every dependency named', async () => {
    const r = await readyz(d.url);
    expect(r).toEqual({ status: 200, body: { status: 'ready', checks: { nats: 'ok', database: 'ok', redis: 'ok' } } });
  });

  it('Redis down: /readyz 503 naming redis, /healthz still 200, one log line per state change', async () => {
    await redis.stop();
    const down = await until(() => readyz(d.url), (r) => r.status === 503);
    expect(down.status).toBe(503);
    expect(down.body.code).toBe('unavailable');
    expect(down.body.message).toMatch(new RegExp(`^not ready: redis \\(127\\.0\\.0\\.1:${redis.port}\\) is down: `));
    expect(down.body.checks).toMatchObject({ database: 'ok', nats: 'ok' });
    expect((await fetch(`${d.url}/healthz`)).status).toBe(200);
    await new Promise((r) => setTimeout(r, 3000)); // several reconnect attempts
    await redis.start();
    const up = await until(() => readyz(d.url), (r) => r.status === 200);
    expect(up.status).toBe(200);
    // each connection that logged its outage logs its recovery (they reconnect on their own timers)
    await until(async () => d.output(), (o) => o.includes('redis is back up') && count(o, '"msg":"redis is down"') === count(o, '"msg":"redis is back up"'), 10_000);
    const out = d.output();
    expect(out).not.toContain('Unhandled error event');
    // authn's session store and the gateway's rate limiter each own a connection: one line each
    expect(count(out, '"msg":"redis is down"')).toBeGreaterThanOrEqual(1);
    expect(count(out, '"msg":"redis is down"')).toBeLessThanOrEqual(2);
    expect(count(out, '"msg":"redis is down"')).toBe(count(out, '"msg":"redis is back up"'));
  });

  it('NATS down: /readyz 503 naming nats; back when it is', async () => {
    await nats.stop();
    const down = await until(() => readyz(d.url), (r) => r.status === 503);
    expect(down.body.message).toMatch(new RegExp(`^not ready: nats \\(127\\.0\\.0\\.1:${nats.port}\\) is down: `));
    await nats.start();
    const up = await until(() => readyz(d.url), (r) => r.status === 200, 30_000);
    expect(up.status).toBe(200);
    expect(count(d.output(), '"msg":"nats is down"')).toBe(1);
  });
});

describe('split: the gateway sees the services it forwards to', () => {
  let d: Deployment;
  beforeAll(async () => { d = await startDeployment('split', { readyTimeoutMs: 60_000 }); }, 120_000);
  afterAll(async () => { await d?.stop(); });

  it('lists each service; only a stopped essential one (authn) makes it 503, by name; a stopped other one answers only its routes 503; it recovers', async () => {
    // the harness waits for /healthz; the gateway's channels to the services connect soon after
    const r = await until(() => readyz(d.url), (x) => x.status === 200, 60_000);
    expect(r.status).toBe(200);
    expect(Object.keys(r.body.checks).sort()).toEqual(['redis', 'service:admin', 'service:authn', 'service:authz', 'service:mfa', 'service:orgs']);
    // issue 37 §4: a service only some requests need is listed as down, and the gateway stays Ready
    await d.stopProcess('mfa');
    const mfaDown = await until(() => readyz(d.url), (x) => x.body.checks['service:mfa'] !== 'ok');
    expect(mfaDown.status).toBe(200);
    expect(mfaDown.body.status).toBe('ready');
    expect(mfaDown.body.checks['service:mfa']).toMatch(/^down \(127\.0\.0\.1:\d+\): /);
    expect(mfaDown.body.checks['service:authn']).toBe('ok');
    // its own routes answer 503 naming it, while the others serve, on REST and GraphQL
    const json = { 'content-type': 'application/json', origin: d.url };
    const mfaRoute = await fetch(`${d.url}/v1/webauthn_login_options`, { method: 'POST', headers: json, body: '{}' });
    expect({ status: mfaRoute.status, body: await mfaRoute.json() })
      .toEqual({ status: 503, body: { code: 'unavailable', message: 'the mfa service is unavailable, please try again later' } });
    const meta = await fetch(`${d.url}/v1/meta`);
    expect({ status: meta.status, version: typeof ((await meta.json()) as { version?: unknown }).version }).toEqual({ status: 200, version: 'string' });
    const gql = await fetch(`${d.url}/graphql`, { method: 'POST', headers: json, body: JSON.stringify({ query: '{ meta { version } }' }) });
    const gqlBody = (await gql.json()) as { data?: { meta?: { version?: unknown } }; errors?: unknown };
    expect({ status: gql.status, errors: gqlBody.errors, version: typeof gqlBody.data?.meta?.version }).toEqual({ status: 200, errors: undefined, version: 'string' });
    await d.startProcess('mfa');
    expect((await readyz(d.url)).body.checks['service:mfa']).toBe('ok');
    // authn signs everyone in: without it the gateway is not Ready
    await d.stopProcess('authn');
    const down = await until(() => readyz(d.url), (x) => x.status === 503);
    expect(down.body.message).toMatch(/^not ready: service:authn \(127\.0\.0\.1:\d+\) is down: /);
    expect(down.body.checks['service:mfa']).toBe('ok');
    await d.startProcess('authn');
    expect((await until(() => readyz(d.url), (x) => x.status === 200)).status).toBe(200);
  });

  it('each service answers /readyz for its own dependencies', async () => {
    const authn = d.processes.find((p) => p.command === 'authn')!;
    const port = authn.child.spawnargs.find((a) => a.startsWith('--http-port='))!.split('=')[1];
    const r = await readyz(`http://127.0.0.1:${port}`);
    // its own dependencies, not its peers (mfa): readiness must not cascade along the call graph
    expect(r).toEqual({ status: 200, body: { status: 'ready', checks: { nats: 'ok', redis: 'ok', database: 'ok' } } });
    // admin has a database of its own since webhooks, templates and the audit log (issue 17)
    const admin = d.processes.find((p) => p.command === 'admin')!;
    const adminPort = admin.child.spawnargs.find((a) => a.startsWith('--http-port='))!.split('=')[1];
    expect(await readyz(`http://127.0.0.1:${adminPort}`)).toEqual({ status: 200, body: { status: 'ready', checks: { nats: 'ok', redis: 'ok', database: 'ok' } } });
  });
});
