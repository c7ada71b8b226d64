/**
 * @module test/charts/chart-local.test
 * Runs split mode with exactly the args charts/gatehouse renders from the install command of its
 * README (ARCHITECTURE §7, issue 15 item 5): each Deployment's args, the existing Secret the README
 * creates written to a directory as the kubelet projects its Secret volume (only the keys the pod
 * mounts), only the URL, NATS, the listen addresses, the secrets' directory and Service DNS names
 * rewritten to this machine's loopback ports and paths. No secret is in any process's argv. Then a user signs up, logs
 * in and reads the profile through the gateway's REST, and the admin reads the (empty) FGA model.
 */
import { describe, it, expect, beforeAll, afterAll } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { START_ORDER } from '@gatehouse/contracts/service-names';
import { createScratchDatabase } from '@gatehouse/db';
import { MACHINE, freePort, spawnGatehouse, waitForHttp, type GatehouseProcess } from '@gatehouse/testing';
import { connect } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';
import { SECRET_DIR, containerOf, deployments, mountedSecretKeys, readmeInstallSets, renderChart, requireHelm } from './helm.ts';

const RELEASE = 'ghchart';
/** Each service after the peers it calls (services/registry.ts), then the gateway. */
const ORDER = [...START_ORDER, 'gateway'] as const;
type Ports = { http: number; grpc: number; metrics: number };

/**
 * Rewrites one rendered container's args for a loopback run: listeners on 127.0.0.1 and the given
 * ports, `<release>-<svc>:<port>` Service names to that service's loopback port (authz by the name
 * `localhost`). Nothing else changes.
 */
function localArgs(args: readonly string[], own: Ports, all: Readonly<Record<string, Ports>>, rendered: Ports): string[] {
  return args.map((arg) => {
    const [flag] = arg.split('=');
    if (flag === '--host' || flag === '--metrics-host') return `${flag}=127.0.0.1`;
    if (flag === '--http-port') return `${flag}=${own.http}`;
    if (flag === '--grpc-port') return `${flag}=${own.grpc}`;
    if (flag === '--metrics-port') return `${flag}=${own.metrics}`;
    return arg.replace(new RegExp(`${RELEASE}-([a-z]+):(\\d+)`, 'g'), (m, svc: string, port: string) => {
      const target = all[svc];
      if (!target) return m;
      // authz keeps a DNS name, as with its headless Service: the gateway's gRPC client resolves
      // one name through grpc-js's dns resolver (round_robin over the addresses it returns).
      const host = svc === 'authz' ? 'localhost' : '127.0.0.1';
      return `${host}:${Number(port) === rendered.grpc ? target.grpc : target.http}`;
    });
  });
}

describe('the chart-rendered args start a working split deployment', () => {
  const processes: GatehouseProcess[] = [];
  let drop: (() => Promise<void>) | undefined;
  const natsStream = `GH_CHART_${randomBytes(5).toString('hex').toUpperCase()}`;
  const adminSecret = randomBytes(24).toString('base64url');
  let url = '';
  const ports: Record<string, Ports> = {};
  const spawned: Record<string, string[]> = {};
  const secretsRoot = mkdtempSync(path.join(os.tmpdir(), 'gatehouse-chart-secrets-'));
  let secretValues: string[] = [];

  beforeAll(async () => {
    requireHelm();
    const db = await createScratchDatabase('postgres');
    drop = db.drop;
    for (const svc of ORDER) ports[svc] = { http: await freePort(), grpc: await freePort(), metrics: await freePort() };
    url = `http://127.0.0.1:${ports.gateway!.http}`;
    const rendered: Ports = { http: 8080, grpc: 9091, metrics: 8081 };
    // The README's install command as written, except the two values that name this machine (the
    // public URL and NATS); the test-only flags below only make a loopback run practical.
    const overridden = new Set(['config.shared.url', 'config.shared.natsUrl']);
    const sets = readmeInstallSets().filter(([k]) => !overridden.has(k)).flatMap(([k, v]) => ['--set', `${k}=${v}`]);
    const objects = renderChart(RELEASE, [], {
      ports: rendered,
      config: {
        shared: {
          url, logLevel: 'warn', natsUrl: MACHINE.natsUrl, natsStream,
          appCookieSecure: false, appCookieSameSite: 'lax', rateLimitRps: 1000, rateLimitBurst: 1000,
        },
      },
    }, sets);
    expect(objects.filter((o) => o.kind === 'Secret')).toEqual([]); // the README uses an existing Secret
    // the existing Secret the README's `kubectl create secret` makes, with this machine's values
    const data: Record<string, string> = {
      'admin-secret': adminSecret, 'client-secret': randomBytes(24).toString('base64url'),
      'jwt-secret': randomBytes(32).toString('base64url'), 'database-url': db.options.url!,
      'redis-url': MACHINE.redisUrl, 'encryption-key': randomBytes(32).toString('base64url'),
    };
    secretValues = Object.values(data);
    const byService = deployments(objects);
    try {
      // In order, as the services' readiness gates the gateway in a cluster.
      for (const svc of ORDER) {
        const d = byService.get(svc)!;
        const c = containerOf(d);
        // the pod's Secret volume: one file per projected key, nothing else
        const dir = path.join(secretsRoot, svc);
        mkdirSync(dir, { mode: 0o700 });
        for (const key of mountedSecretKeys(d)) {
          const value = data[key];
          if (value === undefined) throw new Error(`${svc}: the README's Secret has no key ${key}`);
          writeFileSync(path.join(dir, key), value, { mode: 0o400 });
        }
        const [command, ...flags] = c.args;
        const mounted = flags.map((a) => a.replace(`=file:${SECRET_DIR}/`, `=file:${dir}/`));
        spawned[svc] = localArgs(mounted, ports[svc]!, ports, rendered);
        const p = spawnGatehouse(command!, spawned[svc]!);
        processes.push(p);
        // the chart's readiness probe: every dependency of the pod answers
        await waitForHttp(`http://127.0.0.1:${ports[svc]!.http}/readyz`, 30_000, p.alive);
      }
    } catch (err) {
      const logs = processes.map((p) => `--- ${p.command} ---\n${p.output()}`).join('\n');
      throw new Error(`${(err as Error).message}\n${logs}`);
    }
  }, 120_000);

  afterAll(async () => {
    await Promise.all([...processes].reverse().map((p) => p.stop()));
    await drop?.().catch(() => undefined);
    rmSync(secretsRoot, { recursive: true, force: true });
    const nc = await connect({ servers: MACHINE.natsUrl });
    try {
      await (await jetstreamManager(nc)).streams.delete(natsStream).catch(() => false);
    } finally {
      await nc.close();
    }
  }, 60_000);

  const post = async (path: string, body: unknown, headers: Record<string, string> = {}): Promise<{ status: number; json: any; cookies: string[] }> => {
    const res = await fetch(`${url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', origin: url, ...headers }, body: JSON.stringify(body) });
    return { status: res.status, json: await res.json(), cookies: res.headers.getSetCookie() };
  };

  it('signs up (the MFA offer, declined), logs in and reads the profile through the gateway REST', async () => {
    const email = `chart-${randomBytes(4).toString('hex')}@example.com`;
    const password = 'Chart-test-Passw0rd!';
    // MFA is on by default (TOTP needs no flags): signup offers it, skip_mfa_setup declines it
    const signup = await post('/v1/signup', { email, password, confirm_password: password, given_name: 'Helm' });
    expect({ status: signup.status, message: signup.json.message }).toEqual({ status: 200, message: 'Proceed to mfa setup' });
    const mfa = signup.cookies.map((c) => c.split(';')[0]!).join('; ');
    const skipped = await post('/v1/skip_mfa_setup', {}, { cookie: mfa });
    expect({ status: skipped.status, email: skipped.json.user?.email }).toEqual({ status: 200, email });
    const login = await post('/v1/login', { email, password });
    expect(login.status).toBe(200);
    expect(typeof login.json.access_token).toBe('string');
    const profile = await fetch(`${url}/v1/profile`, { headers: { authorization: `Bearer ${login.json.access_token}`, origin: url } });
    expect(profile.status).toBe(200);
    expect(await profile.json()).toMatchObject({ email, given_name: 'Helm' });
  });

  it('starts every process with no secret in its process list (/proc/<pid>/cmdline)', () => {
    expect(processes).toHaveLength(ORDER.length);
    for (const p of processes) {
      const cmdline = readFileSync(`/proc/${p.child.pid!}/cmdline`, 'utf8');
      expect(cmdline).toContain(`=file:${secretsRoot}/`);
      for (const secret of secretValues) expect({ svc: p.command, leaked: cmdline.includes(secret) }).toEqual({ svc: p.command, leaked: false });
    }
  });

  it('answers the admin FGA model read from authz through the gateway', async () => {
    expect(spawned.gateway).toContain(`--authz-address=localhost:${ports.authz!.grpc}`);
    const res = await fetch(`${url}/v1/admin/fga/model`, { headers: { 'x-service-admin-secret': adminSecret, origin: url } });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ id: '', dsl: '' });
  });

  it('serves Prometheus metrics on each process\'s --metrics-port (the port the pods are annotated with)', async () => {
    for (const svc of ORDER) {
      const res = await fetch(`http://127.0.0.1:${ports[svc]!.metrics}/metrics`);
      expect({ svc, status: res.status }).toEqual({ svc, status: 200 });
      expect(await res.text()).toContain('gatehouse_');
    }
  });
});
