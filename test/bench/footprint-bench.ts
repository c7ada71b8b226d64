/**
 * @module bench/footprint-bench
 * `npm run bench` (last part) and `npm run bench:authz` (first part): the memory and start-up figures of
 * issue 22 §3 for all-in-one on PostgreSQL: idle RSS on an empty database, RSS with the GitHub-like
 * dataset of `--tuples` (200,000) relationship tuples loaded in the authz snapshot and the bytes per
 * tuple that makes, and the cold start (process spawn → `/healthz` answers, and → the first
 * `check_permissions` answers, and → the snapshot's full load ends: the RSS is read after it) on the
 * empty database and with the tuples, each the median of `--starts`
 * (3) restarts. The tuples go straight into the store's tables through the SQL store's own code (5,000 per
 * statement), so filling costs seconds. Not a test: the figures depend on the machine and its load,
 * printed next to them.
 */
import os from 'node:os';
import { startDeployment, type Deployment } from '@gatehouse/testing';
import { generateGithubDataset, DEFAULT_DATASET } from '../../services/authz/bench/github-dataset.ts';
import { settledRss, writeDataset } from './footprint.ts';

const arg = (name: string, fallback: number): number => {
  const hit = process.argv.find((a) => a.startsWith(`--${name}=`));
  return hit ? Number(hit.slice(name.length + 3)) : fallback;
};
const load = (): string => os.loadavg().map((x) => x.toFixed(1)).join(' ');
const mib = (bytes: number): string => `${(bytes / 2 ** 20).toFixed(0)} MiB`;
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/**
 * One check_permissions as the super-admin for `user`, retried until the engine answers (200; or 400
 * `no authorization model is installed` on the empty database); the time it answered.
 */
async function firstCheck(d: Deployment, user: string, object: string, until: number): Promise<number> {
  for (;;) {
    const res = await fetch(`${d.url}/v1/check_permissions`, {
      method: 'POST', headers: { 'content-type': 'application/json', origin: d.url, 'x-service-admin-secret': d.adminSecret },
      body: JSON.stringify({ user, checks: [{ relation: 'reader', object }] }),
    }).catch(() => null);
    const text = await res?.text();
    if (res?.status === 200 || (res?.status === 400 && text?.includes('no authorization model'))) return performance.now();
    if (performance.now() > until) throw new Error(`check_permissions answered ${res?.status ?? 'nothing'}: ${text}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/**
 * The time the authz snapshot of the process behind `d.metricsUrl` had finished its first full load
 * (`gatehouse_authz_snapshot_full_loads` at 1 or more), polled every 20 ms.
 */
async function snapshotLoaded(d: Deployment, until: number): Promise<number> {
  for (;;) {
    const text = await fetch(d.metricsUrl).then((r) => r.text()).catch(() => '');
    const m = /^gatehouse_authz_snapshot_full_loads (\d+)/m.exec(text);
    if (m && Number(m[1]) >= 1) return performance.now();
    if (performance.now() > until) throw new Error('the authz snapshot did not load');
    await new Promise((r) => setTimeout(r, 20));
  }
}

/**
 * Restarts `all` `n` times: the median ms to /healthz, to the first answered check (which, since issue 22
 * §3, need not wait for the snapshot) and to the end of the snapshot's full load.
 */
async function coldStarts(d: Deployment, n: number, user: string, object: string): Promise<{ healthz: number; check: number; loaded: number }> {
  const healthz: number[] = [];
  const check: number[] = [];
  const loaded: number[] = [];
  for (let i = 0; i < n; i++) {
    await d.stopProcess('all');
    const t0 = performance.now();
    await d.startProcess('all');
    healthz.push(performance.now() - t0);
    check.push((await firstCheck(d, user, object, t0 + 60_000)) - t0);
    loaded.push((await snapshotLoaded(d, t0 + 120_000)) - t0);
  }
  return { healthz: median(healthz), check: median(check), loaded: median(loaded) };
}

async function main(): Promise<void> {
  const tuples = arg('tuples', DEFAULT_DATASET.tuples);
  const starts = arg('starts', 3);
  console.log(`machine: ${os.cpus().length} cores, load average ${load()} (shared machine: the figures move with it)`);
  const d = await startDeployment('all', { database: 'postgres', flags: ['--rate-limit-rps=0'], readyTimeoutMs: 120_000 });
  try {
    const data = generateGithubDataset({ ...DEFAULT_DATASET, tuples });
    const probe = data.tuples.find((t) => t.relation === 'reader' && t.user.startsWith('user:'))!;
    const empty = await coldStarts(d, starts, probe.user, probe.object);
    const idle = await settledRss(d.processes[0]!.child.pid!);
    console.log(`idle RSS, empty database: ${mib(idle)} (target ≤ 150 MiB)`);
    console.log(`cold start, empty database: /healthz ${empty.healthz.toFixed(0)} ms, first check ${empty.check.toFixed(0)} ms (target ≤ 1500 ms; median of ${starts})`);

    await writeDataset(d, data);
    const full = await coldStarts(d, starts, probe.user, probe.object);
    const loaded = await settledRss(d.processes[0]!.child.pid!);
    const perTuple = (loaded - idle) / data.tuples.length;
    console.log(`RSS with ${data.tuples.length} tuples loaded: ${mib(loaded)}, ${mib(loaded - idle)} over idle (target ≤ 50 MiB), ${perTuple.toFixed(0)} bytes per tuple (target ≤ 250)`);
    console.log(`cold start, ${data.tuples.length} tuples on PostgreSQL: /healthz ${full.healthz.toFixed(0)} ms, first check ${full.check.toFixed(0)} ms, snapshot loaded ${full.loaded.toFixed(0)} ms (target ≤ 2500 ms; median of ${starts})`);
    console.log(`machine load average at the end: ${load()}`);
  } finally {
    await d.stop();
  }
}

await main();
