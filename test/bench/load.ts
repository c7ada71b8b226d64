/**
 * @module bench/load
 * One load generator for every target: autocannon 8 (programmatic API), a warm-up run that is
 * discarded, then a measured run. Latency percentiles come from autocannon's per-response
 * `response` event (process.hrtime, sub-millisecond), not from its histogram, which keeps whole
 * milliseconds only and would print the bare server as 0 or 1 ms.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { loadavg } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The part of autocannon's options this bench uses. */
interface AutocannonOptions {
  url: string;
  method: 'GET' | 'POST';
  headers: Record<string, string>;
  body?: string;
  connections: number;
  /** seconds */
  duration: number;
  /** seconds per request before autocannon counts a timeout */
  timeout: number;
  requests?: AutocannonRequest[];
}

/**
 * One step of autocannon's request sequence: `setupRequest` may rewrite the request from the
 * connection's `context`, `onResponse` reads the answer into it.
 */
export interface AutocannonRequest {
  setupRequest?: (req: { body?: string; headers?: Record<string, string> }, context: Record<string, unknown>) => { body?: string; headers?: Record<string, string> };
  onResponse?: (status: number, body: string, context: Record<string, unknown>) => void;
}

/** The part of autocannon's result this bench reads. */
interface AutocannonResult {
  errors: number;
  timeouts: number;
  non2xx: number;
  /** seconds, measured by autocannon */
  duration: number;
  statusCodeStats: Record<string, { count: number }>;
}

interface AutocannonInstance extends PromiseLike<AutocannonResult> {
  on(event: 'response', listener: (client: unknown, statusCode: number, bytes: number, responseTimeMs: number) => void): void;
}

const autocannon = createRequire(import.meta.url)('autocannon') as (opts: AutocannonOptions) => AutocannonInstance;

/** What one target is loaded with. */
export interface LoadTarget {
  name: string;
  url: string;
  method: 'GET' | 'POST';
  headers: Record<string, string>;
  body?: string;
  connections: number;
  /**
   * autocannon's request sequence, when each request depends on the previous answer of its connection
   * (the refresh grant: every answer carries the next refresh token); replaces `body`
   */
  requests?: AutocannonRequest[];
}

/** Load parameters shared by every target. */
export interface LoadParams {
  /** measured seconds per target */
  durationS: number;
  /** discarded seconds before the measured run */
  warmupS: number;
}

/** Figures of one measured run. Latencies in milliseconds, of 2xx responses only. */
export interface LoadFigures {
  name: string;
  connections: number;
  requests: number;
  rps: number;
  p50: number;
  p99: number;
  errors: number;
  non2xx: number;
  statusCodes: string;
}

/** The `p`-th percentile (0–100) of an ascending array, nearest-rank; NaN when empty. */
export function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))]!;
}

async function run(target: LoadTarget, durationS: number, record: boolean): Promise<LoadFigures> {
  const latencies: number[] = [];
  const instance = autocannon({
    url: target.url,
    method: target.method,
    headers: target.headers,
    ...(target.body === undefined ? {} : { body: target.body }),
    ...(target.requests === undefined ? {} : { requests: target.requests }),
    connections: target.connections,
    duration: durationS,
    timeout: 30,
  });
  if (record) {
    instance.on('response', (_client, statusCode, _bytes, ms) => {
      if (statusCode >= 200 && statusCode < 300) latencies.push(ms);
    });
  }
  const r = await instance;
  const sorted = Float64Array.from(latencies).sort();
  const requests = Object.values(r.statusCodeStats).reduce((n, s) => n + s.count, 0);
  return {
    name: target.name,
    connections: target.connections,
    requests,
    rps: requests / r.duration,
    p50: percentile(sorted, 50),
    p99: percentile(sorted, 99),
    errors: r.errors,
    non2xx: r.non2xx,
    statusCodes: Object.entries(r.statusCodeStats).map(([code, s]) => `${code}×${s.count}`).join(' '),
  };
}

/** One aligned line: `name  req/s  p50 ms  p99 ms  errors/non2xx`. */
export function formatLine(f: LoadFigures): string {
  return [
    f.name.padEnd(34),
    `${f.rps.toFixed(0).padStart(7)} req/s`,
    `p50 ${f.p50.toFixed(2).padStart(7)} ms`,
    `p99 ${f.p99.toFixed(2).padStart(7)} ms`,
    `errors/non2xx ${f.errors}/${f.non2xx}`,
    `(c=${f.connections}, n=${f.requests}, status ${f.statusCodes || 'none'})`,
  ].join('  ');
}

/** Header line matching {@link formatLine}. */
export const HEADER = `${'target'.padEnd(34)}  ${'req/s'.padStart(13)}  ${'p50'.padStart(14)}  ${'p99'.padStart(14)}  errors/non2xx`;

/** CPU seconds (user + system) used so far by a process's threads, grouped (Linux /proc; USER_HZ = 100). */
export interface ThreadCpu {
  /** the JavaScript thread (tid = pid): request handling, JSON, the ORM, JWT code */
  main: number;
  /** libuv threadpool (`libuv-worker`): argon2, async crypto jobs, fs */
  pool: number;
  /** everything else: V8 GC and compiler workers, gRPC/other native threads */
  other: number;
}

function ticks(statPath: string): number {
  const stat = readFileSync(statPath, 'utf8');
  // fields after "(comm) ": utime and stime are fields 14 and 15 of the line
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** Per-thread-group CPU seconds of `pid` so far; NaN fields when /proc is unreadable. */
export function threadCpu(pid: number): ThreadCpu {
  const out: ThreadCpu = { main: 0, pool: 0, other: 0 };
  try {
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      let t: number;
      let comm: string;
      try {
        t = ticks(`/proc/${pid}/task/${tid}/stat`);
        comm = readFileSync(`/proc/${pid}/task/${tid}/comm`, 'utf8').trim();
      } catch {
        continue; // the thread ended meanwhile
      }
      if (tid === String(pid)) out.main += t;
      else if (comm === 'libuv-worker') out.pool += t;
      else out.other += t;
    }
  } catch {
    return { main: Number.NaN, pool: Number.NaN, other: Number.NaN };
  }
  return out;
}

/**
 * `w` and its child processes (Linux /proc), each its own {@link Watched}: a `--http-workers` primary's
 * node:cluster workers are its children, and their CPU is the server's too.
 */
export function withChildren(w: Watched): Watched[] {
  const out: Watched[] = [w];
  let n = 0;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      // field 4 (ppid) is the second after "(comm) "
      if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === w.pid) out.push({ label: `${w.label} worker ${++n}`, pid: Number(entry) });
    } catch {
      // the process ended meanwhile
    }
  }
  return out;
}

/** A process whose CPU use is reported for the measured run. */
export interface Watched {
  label: string;
  pid: number;
}

/** A measured run with the CPU the server spent on it. */
export interface Measured {
  figures: LoadFigures;
  /** server CPU per request (ms), summed over the watched processes, by thread group */
  cpuPerRequestMs: ThreadCpu;
  /** printable CPU summary */
  cpu: string;
}

/**
 * Warms the target up for `warmupS` (discarded), measures it for `durationS`, and reports the CPU
 * each watched process used during the measured run (per thread group, as a percentage of one
 * core and per request), and this load-generator process's own CPU. CPU per request stays
 * meaningful on a loaded machine, where req/s and latency do not.
 */
export async function measureWithCpu(target: LoadTarget, params: LoadParams, watched: readonly Watched[]): Promise<Measured> {
  if (params.warmupS > 0) await run(target, params.warmupS, false);
  const before = watched.map((w) => threadCpu(w.pid));
  const selfBefore = process.cpuUsage();
  const t0 = performance.now();
  const figures = await run(target, params.durationS, true);
  const wallS = (performance.now() - t0) / 1000;
  const self = process.cpuUsage(selfBefore);
  const used = watched.map((w, i) => {
    const now = threadCpu(w.pid);
    const b = before[i]!;
    return { main: now.main - b.main, pool: now.pool - b.pool, other: now.other - b.other };
  });
  const pct = (s: number): string => `${((s / wallS) * 100).toFixed(0)}%`;
  const parts = watched.map((w, i) => {
    const u = used[i]!;
    return `${w.label} ${pct(u.main + u.pool + u.other)} (js ${pct(u.main)}, pool ${pct(u.pool)}, other ${pct(u.other)})`;
  });
  parts.push(`autocannon ${pct((self.user + self.system) / 1e6)}`);
  const perMs = (sel: (u: ThreadCpu) => number): number => (used.reduce((a, u) => a + sel(u), 0) * 1000) / Math.max(1, figures.requests);
  const cpuPerRequestMs: ThreadCpu = { main: perMs((u) => u.main), pool: perMs((u) => u.pool), other: perMs((u) => u.other) };
  const total = cpuPerRequestMs.main + cpuPerRequestMs.pool + cpuPerRequestMs.other;
  return {
    figures,
    cpuPerRequestMs,
    cpu: `cpu (% of one core over the measured run): ${parts.join(', ')}; server cpu per request ${total.toFixed(3)} ms (js ${cpuPerRequestMs.main.toFixed(3)}, pool ${cpuPerRequestMs.pool.toFixed(3)}, other ${cpuPerRequestMs.other.toFixed(3)}); load average ${loadavg()[0]!.toFixed(2)}`,
  };
}

/**
 * Starts bare-server.ts in its own process (with `workers` node:cluster workers sharing its port when
 * above 1); resolves with its URL once it listens.
 */
export function startBare(body: string, workers = 1): Promise<{ url: string; child: ChildProcess }> {
  const script = path.join(path.dirname(fileURLToPath(import.meta.url)), 'bare-server.ts');
  const child = spawn(process.execPath, [script, body, String(workers)], { stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (c: Buffer) => {
      out += c.toString();
      const m = /listening (\d+)/.exec(out);
      if (m) resolve({ url: `http://127.0.0.1:${m[1]}/`, child });
    });
    child.once('exit', (code) => reject(new Error(`bare server exited with ${code}`)));
  });
}
