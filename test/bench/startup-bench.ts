/**
 * @module bench/startup-bench
 * `npm run bench:startup`: the CPU `gatehouse all` spends before its `/healthz` answers (issue 38 §5: a
 * pod restarting on a busy node is the normal case, and there the CPU, not the wall time, decides how
 * long start-up takes). For each database of `--databases` (sqlite,postgres) one deployment is made and
 * migrated, then `gatehouse all` is restarted `--starts` (5) times on it with the same flags; each start
 * is timed from spawn to the first 200 of `/healthz` (polled every 10 ms), and its CPU (user + system of
 * every thread, /proc/<pid>/stat) read at that moment. With `--baseline=<checkout>` (e.g. `/work/main`,
 * a checkout of the version to compare with, its `npm ci` done) the baseline's `bin/gatehouse.mjs` is
 * started in turns with this one (the order alternates), so both see the same machine: the medians and
 * their ratio are printed. `--cpu-prof=<dir>` writes a V8 CPU profile of each start of this checkout
 * (`node --cpu-prof`) there. Not a test: the figures depend on the machine and its load, printed with them.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startDeployment, REPO_ROOT, type Deployment } from '@gatehouse/testing';

interface Options { starts: number; databases: Array<'sqlite' | 'postgres'>; baseline: string | null; cpuProf: string | null }

function parseArgs(argv: readonly string[]): Options {
  const o: Options = { starts: 5, databases: ['sqlite', 'postgres'], baseline: null, cpuProf: null };
  for (const arg of argv) {
    const [k, v = ''] = arg.split('=');
    if (k === '--starts' && Number.isInteger(Number(v)) && Number(v) >= 1) o.starts = Number(v);
    else if (k === '--databases') o.databases = v.split(',').filter((x): x is 'sqlite' | 'postgres' => x === 'sqlite' || x === 'postgres');
    else if (k === '--baseline' && v) o.baseline = path.resolve(v);
    else if (k === '--cpu-prof' && v) o.cpuProf = path.resolve(v);
    else throw new Error(`bad option ${arg} (--starts=<n>, --databases=sqlite,postgres, --baseline=<checkout>, --cpu-prof=<dir>)`);
  }
  return o;
}

const load = (): string => os.loadavg().map((x) => x.toFixed(2)).join(' ');
const median = (xs: readonly number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
};

/** CPU milliseconds (user + system, all threads) `pid` has used so far (/proc/<pid>/stat; USER_HZ = 100). */
function cpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12])) * 10;
}

/** One start of `root`'s `gatehouse all` with `flags`: ms from spawn to `/healthz`, and CPU ms by then. */
async function oneStart(root: string, flags: readonly string[], healthz: string, nodeFlags: readonly string[]): Promise<{ wallMs: number; cpuMs: number }> {
  const t0 = performance.now();
  const child = spawn(process.execPath, [...nodeFlags, path.join(root, 'bin/gatehouse.mjs'), 'all', ...flags], { cwd: root, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (c: Buffer) => { stderr += c.toString(); });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  try {
    for (;;) {
      if (child.exitCode !== null) throw new Error(`gatehouse all exited with ${child.exitCode}: ${stderr.slice(-2000)}`);
      const ok = await fetch(healthz).then((r) => r.ok, () => false);
      if (ok) {
        const cpu = cpuMs(child.pid!);
        return { wallMs: performance.now() - t0, cpuMs: cpu };
      }
      if (performance.now() - t0 > 300_000) throw new Error(`${root}: /healthz did not answer within 300 s: ${stderr.slice(-2000)}`);
      await new Promise((r) => setTimeout(r, 10));
    }
  } finally {
    child.kill('SIGTERM');
    await exited;
  }
}

async function benchDatabase(database: 'sqlite' | 'postgres', o: Options): Promise<void> {
  const d: Deployment = await startDeployment('all', { database, readyTimeoutMs: 120_000 });
  try {
    const flags = d.flagsOf('all');
    await d.stopProcess('all');
    const variants = [{ name: 'this checkout', root: REPO_ROOT }, ...(o.baseline ? [{ name: `baseline ${o.baseline}`, root: o.baseline }] : [])];
    const got = new Map(variants.map((v) => [v.name, { wall: [] as number[], cpu: [] as number[] }]));
    // one discarded start of each: the compile cache and the page cache are warm for every measured one
    for (const v of variants) await oneStart(v.root, flags, `${d.url}/healthz`, []);
    for (let i = 0; i < o.starts; i++) {
      const order = i % 2 === 0 ? variants : [...variants].reverse();
      for (const v of order) {
        const prof = o.cpuProf && v.root === REPO_ROOT ? ['--cpu-prof', `--cpu-prof-dir=${o.cpuProf}`] : [];
        const r = await oneStart(v.root, flags, `${d.url}/healthz`, prof);
        got.get(v.name)!.wall.push(r.wallMs);
        got.get(v.name)!.cpu.push(r.cpuMs);
      }
    }
    for (const v of variants) {
      const g = got.get(v.name)!;
      console.log(`${database}: ${v.name}: spawn → /healthz ${median(g.wall).toFixed(0)} ms (${g.wall.map((x) => x.toFixed(0)).join(', ')}), CPU by then ${median(g.cpu).toFixed(0)} ms (${g.cpu.map((x) => x.toFixed(0)).join(', ')}); medians of ${o.starts}`);
    }
    if (o.baseline) {
      const [a, b] = [got.get(variants[0]!.name)!, got.get(variants[1]!.name)!];
      console.log(`${database}: this checkout / baseline: CPU to /healthz ${(median(a.cpu) / median(b.cpu)).toFixed(2)}×, wall ${(median(a.wall) / median(b.wall)).toFixed(2)}×; load average ${load()}`);
    }
    await d.startProcess('all');
  } finally {
    await d.stop();
  }
}

async function main(): Promise<void> {
  const o = parseArgs(process.argv.slice(2));
  console.log(`machine: ${os.cpus().length} cores, node ${process.version}, load average ${load()} (shared machine: the wall times move with it, the CPU much less)`);
  for (const database of o.databases) await benchDatabase(database, o);
  console.log(`load average at the end: ${load()}`);
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
