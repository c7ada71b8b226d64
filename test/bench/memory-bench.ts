/**
 * @module bench/memory-bench
 * `npm run bench:memory`: whether Gatehouse's memory stays put under load (issue 38 §5). Starts one
 * `gatehouse all` on PostgreSQL + Redis (`--database=sqlite` for SQLite, no Redis) holding the GitHub-like
 * dataset of `--tuples` (200,000) relationship tuples, reads its idle RSS and V8 heap, then runs `--rounds`
 * (6) rounds of mixed load over `--minutes` (3) in all: logins, validate_jwt_token of the tokens those
 * logins issued (the last 2,000), check_permissions for ever-changing dataset users and repositories,
 * client_credentials grants and signups of new users, all at once. After each round it prints RSS and
 * heapUsed, right away and settled (the lowest RSS of 5 readings 1 s apart), and at the end the ratio
 * final/idle (target ≤ 2×; `--minutes=60` runs the issue's hour).
 * `--heap-snapshots`: the server also writes a V8 heap snapshot when idle and after the last round
 * (`--heapsnapshot-signal`, into a temporary directory) and the bench prints the constructors whose
 * objects grew most between the two (self sizes; the heap's largest growth, to tell a cache without a
 * bound from V8 keeping pages).
 * `--node-options=<...>`: NODE_OPTIONS for the server only, e.g. `--max-semi-space-size=64` to measure V8's
 * own young-generation sizing against the launcher's default of 16 MiB.
 * Not a test: the figures depend on the machine and its load, printed with each.
 */
import os from 'node:os';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { startDeployment, type Deployment, type StartOptions } from '@gatehouse/testing';
import { generateGithubDataset, DEFAULT_DATASET, prng, type Dataset } from '../../services/authz/bench/github-dataset.ts';
import { rssOf, settledRss, writeDataset } from './footprint.ts';
import { formatLine, measureWithCpu, type AutocannonRequest, type LoadTarget, type Measured } from './load.ts';

interface Options { minutes: number; rounds: number; tuples: number; database: 'postgres' | 'sqlite'; heapSnapshots: boolean; nodeOptions?: string }

function parseArgs(argv: readonly string[]): Options {
  const o: Options = { minutes: 3, rounds: 6, tuples: DEFAULT_DATASET.tuples, database: 'postgres', heapSnapshots: false };
  for (const arg of argv) {
    const [k, v = ''] = arg.split('=');
    const n = Number(v);
    if (k === '--node-options') o.nodeOptions = arg.slice('--node-options='.length);
    else if (k === '--minutes' && n > 0) o.minutes = n;
    else if (k === '--rounds' && Number.isInteger(n) && n >= 1) o.rounds = n;
    else if (k === '--tuples' && Number.isInteger(n) && n >= 0) o.tuples = n;
    else if (k === '--database' && (v === 'postgres' || v === 'sqlite')) o.database = v;
    else if (k === '--heap-snapshots' && v === '') o.heapSnapshots = true;
    else throw new Error(`bad option ${arg} (--minutes=<m> > 0, --rounds=<n> ≥ 1, --tuples=<n>, --database=postgres|sqlite, --heap-snapshots, --node-options=<NODE_OPTIONS of the server>)`);
  }
  return o;
}

const load = (): string => os.loadavg().map((x) => x.toFixed(2)).join(' ');
const mib = (bytes: number): string => `${(bytes / 2 ** 20).toFixed(0)} MiB`;
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** The resident anonymous memory (V8's pages, malloc) and file-backed pages of `pid` (bytes), from /proc/<pid>/smaps_rollup. */
function residentKinds(pid: number): { anon: number; file: number } {
  const text = readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8');
  const kb = (name: string): number => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(text)?.[1] ?? Number.NaN) * 1024;
  return { anon: kb('Anonymous'), file: kb('Rss') - kb('Anonymous') };
}

/** V8's heap of the server (bytes): used, committed (total; of it the young generation and old space) and external, from its metrics listener (prom-client's default metrics). */
async function heapOf(d: Deployment): Promise<{ used: number; total: number; external: number; young: number; old: number }> {
  const text = await (await fetch(d.metricsUrl)).text();
  const metric = (name: string): number => {
    const m = new RegExp(`^gatehouse_nodejs_${name} (\\d+(?:\\.\\d+)?)`, 'm').exec(text);
    if (!m) throw new Error(`no gatehouse_nodejs_${name} in /metrics`);
    return Number(m[1]);
  };
  const space = (name: string): number => Number(new RegExp(`^gatehouse_nodejs_heap_space_size_total_bytes\\{space="${name}"\\} (\\d+)`, 'm').exec(text)?.[1] ?? Number.NaN);
  return { used: metric('heap_size_used_bytes'), total: metric('heap_size_total_bytes'), external: metric('external_memory_bytes'), young: space('new'), old: space('old') };
}

/** One memory reading: RSS and heapUsed right away, then settled (RSS the lowest of 5 readings, V8's heap after them). */
interface Reading { rss: number; heap: number; settledRss: number; settledHeap: number; heapTotal: number; young: number; old: number; external: number; anon: number; file: number }

async function reading(d: Deployment, pid: number): Promise<Reading> {
  const rss = rssOf(pid);
  const heap = (await heapOf(d)).used;
  const settled = await settledRss(pid);
  const after = await heapOf(d);
  return { rss, heap, settledRss: settled, settledHeap: after.used, heapTotal: after.total, young: after.young, old: after.old, external: after.external, ...residentKinds(pid) };
}

const show = (r: Reading): string => `RSS ${mib(r.rss)} (settled ${mib(r.settledRss)}), heapUsed ${mib(r.heap)} (settled ${mib(r.settledHeap)}; V8 heap committed ${mib(r.heapTotal)}: young generation ${mib(r.young)}, old space ${mib(r.old)}; external ${mib(r.external)}; resident anonymous ${mib(r.anon)}, files ${mib(r.file)})`;

const EMAIL = 'memory-bench@example.com';
const PASSWORD = 'Bench-Passw0rd-2026!';

async function post(d: Deployment, route: string, body: unknown, headers: Record<string, string> = {}): Promise<{ status: number; json: Record<string, unknown> }> {
  const res = await fetch(`${d.url}${route}`, { method: 'POST', headers: { 'content-type': 'application/json', origin: d.url, ...headers }, body: JSON.stringify(body) });
  return { status: res.status, json: (await res.json()) as Record<string, unknown> };
}

/** Writes the model and tuples straight into the store's tables, then restarts the server so it loads them. */
async function fill(d: Deployment, data: Dataset): Promise<void> {
  await writeDataset(d, data);
  await d.stopProcess('all');
  await d.startProcess('all');
}

/** Waits until the authz snapshot's first full load is done (`gatehouse_authz_snapshot_full_loads` ≥ 1). */
async function snapshotLoaded(d: Deployment): Promise<void> {
  const until = performance.now() + 300_000;
  for (;;) {
    const text = await fetch(d.metricsUrl).then((r) => r.text()).catch(() => '');
    const m = /^gatehouse_authz_snapshot_full_loads (\d+)/m.exec(text);
    if (m && Number(m[1]) >= 1) return;
    if (performance.now() > until) throw new Error('the authz snapshot did not load');
    await sleep(100);
  }
}

/** The mixed load of one round: each target with its own connections, all at once. */
/** Signups so far: every round signs up new users. */
let signups = 0;

function targets(d: Deployment, data: Dataset, basic: string, tokens: string[]): LoadTarget[] {
  const json = { 'content-type': 'application/json', origin: d.url };
  const random = prng(Date.now() >>> 0);
  const users = [...data.orgsOf.keys()];
  const repos = [...new Set(data.tuples.filter((t) => t.object.startsWith('repository:')).map((t) => t.object))];
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)]!;
  const seq = (setup: AutocannonRequest['setupRequest'], onResponse?: AutocannonRequest['onResponse']): AutocannonRequest[] => [{ setupRequest: setup, ...(onResponse ? { onResponse } : {}) }];
  return [
    {
      name: 'login', url: `${d.url}/v1/login`, method: 'POST', headers: json, connections: 4,
      requests: seq((req) => ({ ...req, body: JSON.stringify({ email: EMAIL, password: PASSWORD }) }), (status, body) => {
        if (status !== 200) return;
        tokens.push((JSON.parse(body) as { access_token: string }).access_token);
        if (tokens.length > 2000) tokens.shift();
      }),
    },
    {
      name: 'validate_jwt_token', url: `${d.url}/v1/validate_jwt_token`, method: 'POST', headers: json, connections: 8,
      requests: seq((req) => ({ ...req, body: JSON.stringify({ token_type: 'access_token', token: pick(tokens) }) })),
    },
    {
      name: 'check_permissions (5 checks)', url: `${d.url}/v1/check_permissions`, method: 'POST', connections: 8,
      headers: { ...json, 'x-service-admin-secret': d.adminSecret },
      requests: seq((req) => ({ ...req, body: JSON.stringify({ user: pick(users), checks: Array.from({ length: 5 }, () => ({ relation: 'reader', object: pick(repos) })) }) })),
    },
    {
      name: 'client_credentials', url: `${d.url}/oauth/token`, method: 'POST', connections: 2,
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic }, body: 'grant_type=client_credentials&scope=bench',
    },
    {
      name: 'signup', url: `${d.url}/v1/signup`, method: 'POST', headers: json, connections: 2,
      requests: seq((req) => {
        const email = `memory-${process.pid}-${++signups}@example.com`;
        return { ...req, body: JSON.stringify({ email, password: PASSWORD, confirm_password: PASSWORD }) };
      }),
    },
  ];
}

/** Self size and count of heap objects by kind (`type:name`), summed over a V8 heap snapshot file. */
function heapByConstructor(file: string): Map<string, { size: number; count: number }> {
  const snap = JSON.parse(readFileSync(file, 'utf8')) as {
    snapshot: { meta: { node_fields: string[]; node_types: [string[], ...unknown[]] } };
    nodes: number[];
    strings: string[];
  };
  const fields = snap.snapshot.meta.node_fields;
  const width = fields.length;
  const [typeAt, nameAt, sizeAt] = ['type', 'name', 'self_size'].map((f) => fields.indexOf(f)) as [number, number, number];
  const types = snap.snapshot.meta.node_types[0];
  const out = new Map<string, { size: number; count: number }>();
  for (let i = 0; i < snap.nodes.length; i += width) {
    const type = types[snap.nodes[i + typeAt]!]!;
    // strings, code and arrays are named by their content: one bucket per type for them
    const key = type === 'object' || type === 'closure' || type === 'native' ? `${type}:${snap.strings[snap.nodes[i + nameAt]!]}` : `(${type})`;
    const e = out.get(key) ?? { size: 0, count: 0 };
    e.size += snap.nodes[i + sizeAt]!;
    e.count += 1;
    out.set(key, e);
  }
  return out;
}

/** Asks the server for a heap snapshot (SIGUSR2, see `--heapsnapshot-signal`) and waits for the file. */
async function heapSnapshot(pid: number, dir: string): Promise<string> {
  const before = new Set(readdirSync(dir));
  process.kill(pid, 'SIGUSR2');
  for (let i = 0; i < 600; i++) {
    await sleep(500);
    const fresh = readdirSync(dir).filter((f) => !before.has(f) && f.endsWith('.heapsnapshot'));
    if (fresh.length > 0) {
      // written in one go by V8; wait until its size stops changing
      const file = path.join(dir, fresh[0]!);
      let size = -1;
      for (;;) {
        await sleep(1000);
        const now = readFileSync(file).length;
        if (now === size && now > 0) return file;
        size = now;
      }
    }
  }
  throw new Error('the server wrote no heap snapshot');
}

async function main(): Promise<void> {
  const o = parseArgs(process.argv.slice(2));
  const roundS = (o.minutes * 60) / o.rounds;
  const snapDir = o.heapSnapshots ? mkdtempSync(path.join(os.tmpdir(), 'gatehouse-heap-')) : '';
  const how: StartOptions = o.database === 'postgres' ? { database: 'postgres', redis: true } : {};
  console.log(`machine: ${os.cpus().length} cores, ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB, node ${process.version}, load average ${load()} (shared machine: the figures move with it)`);
  if (o.nodeOptions !== undefined) console.log(`server NODE_OPTIONS: ${o.nodeOptions}`);
  console.log(`deployment: one \`gatehouse all\` on ${o.database === 'postgres' ? 'PostgreSQL + Redis' : 'SQLite'}, --rate-limit-rps=0 --log-level=warn, ${o.tuples} GitHub-like tuples; ${o.rounds} rounds of ${roundS.toFixed(0)} s of mixed load`);
  const d = await startDeployment('all', {
    ...how, flags: ['--rate-limit-rps=0'], readyTimeoutMs: 120_000,
    ...(o.heapSnapshots || o.nodeOptions !== undefined
      ? { env: { NODE_OPTIONS: [o.nodeOptions ?? '', o.heapSnapshots ? `--heapsnapshot-signal=SIGUSR2 --diagnostic-dir=${snapDir}` : ''].join(' ').trim() } }
      : {}),
  });
  try {
    const data = generateGithubDataset({ ...DEFAULT_DATASET, tuples: o.tuples });
    await fill(d, data);
    await snapshotLoaded(d);
    const pid = (): number => d.processes[0]!.child.pid!;
    const signup = await post(d, '/v1/signup', { email: EMAIL, password: PASSWORD, confirm_password: PASSWORD });
    if (signup.status !== 200) throw new Error(`signup answered ${signup.status}: ${JSON.stringify(signup.json)}`);
    const tokens: string[] = [];
    for (let i = 0; i < 20; i++) {
      const login = await post(d, '/v1/login', { email: EMAIL, password: PASSWORD });
      if (login.status !== 200) throw new Error(`login answered ${login.status}`);
      tokens.push(login.json.access_token as string);
    }
    const client = await post(d, '/v1/admin/create_client', { name: 'memory-bench', allowed_scopes: ['bench'] }, { 'x-service-admin-secret': d.adminSecret });
    const { client: c, client_secret: secret } = client.json as { client: { client_id: string }; client_secret: string };
    const basic = `Basic ${Buffer.from(`${c.client_id}:${secret}`).toString('base64')}`;
    const idle = await reading(d, pid());
    console.log(`idle, after start and the snapshot load: ${show(idle)}; load average ${load()}`);
    const idleSnap = o.heapSnapshots ? await heapSnapshot(pid(), snapDir) : '';

    const started = performance.now();
    let last = idle;
    for (let round = 1; round <= o.rounds; round++) {
      const runs: Measured[] = await Promise.all(targets(d, data, basic, tokens).map((t) => measureWithCpu(t, { durationS: roundS, warmupS: 0 }, [])));
      for (const r of runs) console.log(`  ${formatLine(r.figures)}`);
      last = await reading(d, pid());
      console.log(`round ${round} (${((performance.now() - started) / 60_000).toFixed(1)} min): ${show(last)}; load average ${load()}`);
    }
    const ratio = last.settledRss / idle.settledRss;
    console.log(`final/idle: RSS ${ratio.toFixed(2)}× settled (${mib(idle.settledRss)} → ${mib(last.settledRss)}; target ≤ 2×: ${ratio <= 2 ? 'met' : 'NOT met'}), ${(last.rss / idle.rss).toFixed(2)}× right after the load; heapUsed ${(last.settledHeap / idle.settledHeap).toFixed(2)}× (${mib(idle.settledHeap)} → ${mib(last.settledHeap)}); load average ${load()}`);

    if (o.heapSnapshots) {
      const endSnap = await heapSnapshot(pid(), snapDir);
      const [a, b] = [heapByConstructor(idleSnap), heapByConstructor(endSnap)];
      const growth = [...b].map(([k, v]) => ({ k, size: v.size - (a.get(k)?.size ?? 0), count: v.count - (a.get(k)?.count ?? 0), total: v.size }))
        .sort((x, y) => y.size - x.size).slice(0, 20);
      console.log(`heap snapshots (${idleSnap}, ${endSnap}): largest growth of self size by constructor, idle → after the last round`);
      for (const g of growth) console.log(`  ${g.k.slice(0, 60).padEnd(60)} ${(g.size / 2 ** 20).toFixed(2).padStart(8)} MiB  ${String(g.count).padStart(9)} objects  (now ${(g.total / 2 ** 20).toFixed(2)} MiB)`);
    }
  } catch (err) {
    console.error(d.output().slice(-4000));
    throw err;
  } finally {
    await d.stop();
  }
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
