/**
 * @module authz/bench/gateway-bench
 * `npm run bench:authz` (second half): check_permissions and list_permissions through a running
 * all-in-one Gatehouse holding the 200,000-tuple GitHub-like dataset (github-dataset.ts), once per
 * engine store (`--fga-store=memory` and the default SQLite main database), next to a bare node:http
 * server answering a fixed JSON body under the same load generator (autocannon 8). Also a bounded
 * gRPC load (@grpc/grpc-js in load-generator processes, N calls in flight in all, for a fixed time).
 * Prints one line per figure, the ratios, and the issue's targets: a 100-check call costs ≤ 3× a
 * 1-check call; REST check_permissions throughput ≥ 0.5× the bare-HTTP baseline. Not a test: figures
 * depend on the machine and its load.
 * The bare server runs for the whole benchmark. The REST 1-check figure, the REST 100-check figure and
 * the bare server are measured in rounds where each takes its turn (the order rotates): each ratio is
 * the median of the rounds' ratios, so a machine whose speed drifts over minutes (a shared or nested
 * VM) moves both sides of each.
 * Options: --duration=<s> (5, per figure not taken in turns), --warmup=<s> (1), --rounds=<n> (6) and
 * --round-duration=<s> (2) for the figures taken in turns,
 * --connections=<n> (32), --grpc-clients=<n> (2: gRPC load-generator processes, grpc-load.ts),
 * --stores=memory,sqlite,postgres-redis,split (all four),
 * --only=rest1,rest100,cold,grpc,list,bare,log (a subset of the figures, e.g. to profile one load; no ratios then;
 * `cold`: REST 1 and 100 first-time checks, each request for a subject the engine remembers nothing for: a new subject, then a dataset user;
 * `log`: the default log level's cost alone),
 * --log-rounds=<n> (4; 0 skips) and --log-round-duration=<s> (3): the default log level's cost (issue 38 §4),
 * the REST 1-check call on two copies of each store, `--log-level=warn` and `--log-level=info` (the
 * access log on), in interleaved rounds (test/bench/log-level.ts).
 */
import os from 'node:os';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startDeployment, type Deployment, type StartOptions } from '@gatehouse/testing';
import { createCallContext, createGrpcClient, serviceDescriptor, type ServiceClient } from '@gatehouse/rpc';
import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
import { percentile } from '../../../test/bench/load.ts';
import { compareLogLevels, type BenchLogLevel, type LevelTarget } from '../../../test/bench/log-level.ts';
import { DEFAULT_DATASET, generateGithubDataset, prng, type BenchTuple, type Dataset } from './github-dataset.ts';

/**
 * Where the engine runs: all-in-one with `--fga-store=memory`, on SQLite, on PostgreSQL + Redis (issue 22),
 * or split mode (authn and authz as their own processes, PostgreSQL + Redis + NATS, the gateway in front).
 */
type Store = 'memory' | 'sqlite' | 'postgres-redis' | 'split';
const DEPLOYMENTS: Readonly<Record<Store, { mode: 'all' | 'split'; options: StartOptions; flags: string[] }>> = {
  memory: { mode: 'all', options: {}, flags: ['--fga-store=memory'] },
  sqlite: { mode: 'all', options: {}, flags: [] },
  'postgres-redis': { mode: 'all', options: { database: 'postgres', redis: true }, flags: [] },
  split: { mode: 'split', options: {}, flags: [] },
};
interface Options { durationS: number; warmupS: number; rounds: number; roundS: number; connections: number; grpcClients: number; stores: Store[]; only: Set<string> | null; logRounds: number; logRoundS: number }

function parseArgs(argv: readonly string[]): Options {
  const o: Options = { durationS: 5, warmupS: 1, rounds: 6, roundS: 2, connections: 32, grpcClients: 2, stores: ['memory', 'sqlite', 'postgres-redis', 'split'], only: null, logRounds: 4, logRoundS: 3 };
  for (const arg of argv) {
    const [k, v = ''] = arg.split('=');
    const n = Number(v);
    if (k === '--stores') o.stores = v.split(',').filter((s): s is Store => s in DEPLOYMENTS);
    else if (k === '--only') o.only = new Set(v.split(','));
    else if (k === '--duration' && n > 0 && n <= 10) o.durationS = n;
    else if (k === '--warmup' && n >= 0 && n <= 10) o.warmupS = n;
    else if (k === '--connections' && Number.isInteger(n) && n > 0) o.connections = n;
    else if (k === '--rounds' && Number.isInteger(n) && n >= 1 && n <= 20) o.rounds = n;
    else if (k === '--round-duration' && n > 0 && n <= 10) o.roundS = n;
    else if (k === '--grpc-clients' && Number.isInteger(n) && n >= 1 && n <= 4) o.grpcClients = n;
    else if (k === '--log-rounds' && Number.isInteger(n) && n >= 0 && n <= 40) o.logRounds = n;
    else if (k === '--log-round-duration' && n > 0 && n <= 10) o.logRoundS = n;
    else throw new Error(`bad option ${arg} (--duration, --warmup, --round-duration, --log-round-duration: 0-10 s; --rounds: 1-20; --log-rounds: 0-40; --grpc-clients: 1-4)`);
  }
  return o;
}

/** CPU seconds (user + system) process `pid` has used, from /proc (Linux); NaN when unreadable. */
function processCpuSeconds(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(f[11]) + Number(f[12])) / 100;
  } catch {
    return Number.NaN;
  }
}

interface Watched { label: string; pid: number }

/** Figures of one measured run; latencies in ms (2xx only), `non2xx` counts failed calls. */
interface Figures {
  name: string; rps: number; p50: number; p99: number; requests: number; non2xx: number; cpu: string;
  /** share of one core (0-1) the first watched process used over the measured runs; NaN when unknown */
  serverCpu: number;
}

/** `fresh`: each request's body is made by `fresh(n)` from a number no request has had before (`bodies` are then unused). */
interface Target { name: string; url: string; headers: Record<string, string>; bodies: string[]; connections: number; method?: 'GET' | 'POST'; fresh?: (n: number) => string }

interface Autocannon extends PromiseLike<{ duration: number; non2xx: number; errors: number; statusCodeStats: Record<string, { count: number }> }> {
  on(event: 'response', listener: (client: unknown, status: number, bytes: number, ms: number) => void): void;
}
const autocannon = createRequire(import.meta.url)('autocannon') as (opts: Record<string, unknown>) => Autocannon;

/** What one autocannon run saw: every response counted, 2xx latencies (ms) when recorded. */
interface Run { requests: number; non2xx: number; durationS: number; latencies: number[] }

/** The last number a {@link Target} `fresh` body was given (autocannon's own `idReplacement` sends a wrong Content-Length). */
let freshIds = 0;

/** One autocannon run over `bodies` (each connection cycles through them); records 2xx latencies when `record`. */
async function cannon(t: Target, durationS: number, record: boolean): Promise<Run> {
  const latencies: number[] = [];
  const inst = autocannon({
    url: t.url, method: t.method ?? 'POST', headers: t.headers, connections: t.connections, duration: durationS, timeout: 30,
    ...(t.method === 'GET' ? {} : { requests: t.fresh ? [{ method: 'POST', setupRequest: (req: object) => ({ ...req, body: t.fresh!(++freshIds) }) }] : t.bodies.map((body) => ({ method: 'POST', body })) }),
  });
  if (record) inst.on('response', (_c, status, _b, took) => { if (status >= 200 && status < 300) latencies.push(took); });
  const r = await inst;
  const requests = Object.values(r.statusCodeStats).reduce((n, x) => n + x.count, 0);
  return { requests, non2xx: r.non2xx + r.errors, durationS: r.duration, latencies };
}

/**
 * The measured runs of one target, added up: req/s over all of them, p50/p99 over every recorded
 * latency, and the CPU the watched processes and this process (the load generator) used while they ran.
 */
class Meter {
  readonly #latencies: number[] = [];
  #requests = 0;
  #non2xx = 0;
  #seconds = 0;
  #wall = 0;
  #own = 0;
  readonly #cpu: number[];
  readonly target: Target;
  readonly watched: readonly Watched[];
  constructor(target: Target, watched: readonly Watched[]) {
    this.target = target;
    this.watched = watched;
    this.#cpu = watched.map(() => 0);
  }
  /** One measured run of `durationS` seconds; returns its req/s. */
  async run(durationS: number): Promise<number> {
    const before = this.watched.map((w) => processCpuSeconds(w.pid));
    const ownBefore = process.cpuUsage();
    const t0 = performance.now();
    const r = await cannon(this.target, durationS, true);
    this.#wall += (performance.now() - t0) / 1000;
    const own = process.cpuUsage(ownBefore);
    this.#own += (own.user + own.system) / 1e6;
    this.watched.forEach((w, i) => { this.#cpu[i]! += processCpuSeconds(w.pid) - before[i]!; });
    for (const x of r.latencies) this.#latencies.push(x);
    this.#requests += r.requests;
    this.#non2xx += r.non2xx;
    this.#seconds += r.durationS;
    return r.requests / r.durationS;
  }
  figures(): Figures {
    const sorted = Float64Array.from(this.#latencies).sort();
    const pct = (x: number): string => `${((x / this.#wall) * 100).toFixed(0)}% cpu`;
    const cpu = [...this.watched.map((w, i) => `${w.label} ${pct(this.#cpu[i]!)}`), `load generator ${pct(this.#own)}`].join(', ');
    return {
      name: this.target.name, rps: this.#requests / this.#seconds, p50: percentile(sorted, 50), p99: percentile(sorted, 99),
      requests: this.#requests, non2xx: this.#non2xx, cpu, serverCpu: this.watched.length > 0 ? this.watched.reduce((n, _w, i) => n + this.#cpu[i]!, 0) / this.#wall : Number.NaN,
    };
  }
}

/** Warm-up (discarded), then a measured run, with the CPU the watched processes used during it. */
async function loadFigures(t: Target, o: Options, watched: readonly Watched[]): Promise<Figures> {
  if (o.warmupS > 0) await cannon(t, o.warmupS, false);
  const m = new Meter(t, watched);
  await m.run(o.durationS);
  return m.figures();
}

/**
 * Measures `targets` in turns: after a warm-up of each, `o.rounds` rounds of `o.roundS` seconds in which
 * every target runs once; the order rotates from round to round (a, b, c / b, c, a / c, a, b ...), so no
 * target always runs right after another. Returns each target's figures over all rounds and `rps[r][i]`,
 * target i's req/s in round r: a ratio of two targets is taken per round, where the machine's drift
 * moves both sides alike.
 */
async function inTurns(targets: ReadonlyArray<{ target: Target; watched: readonly Watched[] }>, o: Options): Promise<{ figures: Figures[]; rps: number[][] }> {
  if (o.warmupS > 0) for (const t of targets) await cannon(t.target, o.warmupS, false);
  const meters = targets.map((t) => new Meter(t.target, t.watched));
  const rps: number[][] = [];
  for (let round = 0; round < o.rounds; round++) {
    const row = new Array<number>(meters.length).fill(Number.NaN);
    for (let k = 0; k < meters.length; k++) {
      const i = (round + k) % meters.length;
      row[i] = await meters[i]!.run(o.roundS);
    }
    rps.push(row);
  }
  return { figures: meters.map((m) => m.figures()), rps };
}

/** The median of `xs` (the mean of the middle two when even); NaN when empty. */
function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  if (s.length === 0) return Number.NaN;
  const mid = s.length >> 1;
  return s.length % 2 === 1 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

function printFigures(f: Figures): void {
  const extra = [f.non2xx ? `${f.non2xx} failed` : '', f.cpu].filter(Boolean).join('; ');
  line(f.name, `${f.rps.toFixed(0).padStart(6)} req/s  p50 ${ms(f.p50)}  p99 ${ms(f.p99)}  (n=${f.requests}${extra ? `; ${extra}` : ''})`);
}

const line = (label: string, value: string): void => console.log(`${label.padEnd(62)} ${value}`);
const ms = (x: number): string => `${x.toFixed(2)} ms`;

async function post(url: string, body: unknown, headers: Record<string, string>): Promise<{ status: number; json: any }> {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  return { status: res.status, json: await res.json() };
}

/** Loads the model and every tuple through the public gRPC port as super-admin, `concurrency` calls of 100 at a time. */
async function load(client: ServiceClient, adminSecret: string, data: Dataset, extra: BenchTuple[]): Promise<number> {
  const ctx = () => createCallContext({ headers: { 'x-service-admin-secret': adminSecret } });
  await client.call('WriteModel', { dsl: data.model }, ctx());
  const tuples = [...data.tuples, ...extra];
  const t0 = performance.now();
  let next = 0;
  const worker = async (): Promise<void> => {
    for (let i = next; i < tuples.length; i = next) {
      next += 100;
      await client.call('WriteTuples', { tuples: tuples.slice(i, i + 100) }, ctx());
    }
  };
  await Promise.all(Array.from({ length: 8 }, worker));
  return (performance.now() - t0) / 1000;
}

/**
 * The checks of first-time request `n`: `perCall` of them, on repositories picked from `n` alone, half in
 * `ownOrg` (when given) and the rest anywhere; 80% `can_read`, 20% `writer`, as in {@link checkBodies}.
 */
function coldChecks(data: Dataset, n: number, perCall: number, ownOrg: string | null): Array<{ relation: string; object: string }> {
  const rnd = prng(n);
  const pick = (k: number): number => Math.floor(rnd() * k);
  const { orgs, reposPerOrg } = data.options;
  return Array.from({ length: perCall }, () => {
    const org = ownOrg !== null && rnd() < 0.5 ? ownOrg.slice('organization:'.length) : `o${pick(orgs)}`;
    return { relation: rnd() < 0.8 ? 'can_read' : 'writer', object: `repository:${org}-r${pick(reposPerOrg)}` };
  });
}

/** Check bodies: half on repositories of the bench user's organizations (mostly allowed), half anywhere. */
function checkBodies(data: Dataset, userOrgs: string[], count: number, perCall: number): string[] {
  const rnd = prng(11);
  const pick = (n: number): number => Math.floor(rnd() * n);
  const { orgs, reposPerOrg } = data.options;
  return Array.from({ length: count }, () => JSON.stringify({
    checks: Array.from({ length: perCall }, () => {
      const org = rnd() < 0.5 ? userOrgs[pick(userOrgs.length)]!.slice('organization:'.length) : `o${pick(orgs)}`;
      return { relation: rnd() < 0.8 ? 'can_read' : 'writer', object: `repository:${org}-r${pick(reposPerOrg)}` };
    }),
  }));
}

/**
 * A bounded gRPC load: `o.grpcClients` load-generator processes (grpc-load.ts), `inFlight` concurrent
 * CheckPermissions calls in all, for `durationS` seconds, with the CPU the watched processes and the
 * load generators used over that window. One grpc-js client spends more CPU per call than the server
 * it loads, so a single one measures itself; several share the machine's cores with the server.
 */
async function grpcLoad(address: string, token: string, bodies: string[], inFlight: number, durationS: number, clients: number, name: string, watched: readonly Watched[] = []): Promise<Figures> {
  const script = path.join(path.dirname(fileURLToPath(import.meta.url)), 'grpc-load.ts');
  const startAt = Date.now() + 2000; // every process connected and waiting when the window opens
  const runs = Array.from({ length: clients }, (_, k) => new Promise<{ latencies: number[]; errors: number; cpuS: number }>((resolve, reject) => {
    const child = spawn(process.execPath, [script], { stdio: ['pipe', 'pipe', 'inherit'] });
    let out = '';
    child.stdout!.on('data', (c: Buffer) => { out += c.toString(); });
    // 'close', not 'exit': a process can exit before its piped stdout has all been read
    child.once('close', (code) => (code === 0 ? resolve(JSON.parse(out)) : reject(new Error(`grpc-load exited with ${code}`))));
    const share = Math.floor(inFlight / clients) + (k < inFlight % clients ? 1 : 0);
    child.stdin!.end(JSON.stringify({ address, token, bodies, inFlight: share, startAt, durationS }));
  }));
  const all = Promise.all(runs);
  all.catch(() => undefined); // a failed load process fails the await below, not the whole process first
  await new Promise((resolve) => setTimeout(resolve, Math.max(0, startAt - Date.now())));
  const cpuBefore = watched.map((w) => processCpuSeconds(w.pid));
  const t0 = performance.now();
  await new Promise((resolve) => setTimeout(resolve, durationS * 1000));
  const wall = (performance.now() - t0) / 1000;
  const cpuAfter = watched.map((w) => processCpuSeconds(w.pid));
  const done = await all;
  const latencies = done.flatMap((r) => r.latencies);
  const errors = done.reduce((n, r) => n + r.errors, 0);
  const clientCpuS = done.reduce((n, r) => n + r.cpuS, 0);
  const pct = (seconds: number): string => `${((seconds / wall) * 100).toFixed(0)}% cpu`;
  const cpu = [...watched.map((w, i) => `${w.label} ${pct(cpuAfter[i]! - cpuBefore[i]!)}`), `grpc-js clients (${clients} process${clients === 1 ? '' : 'es'}) ${pct(clientCpuS)}`].join(', ');
  const sorted = Float64Array.from(latencies).sort();
  // every watched process: all-in-one is one, split mode is the gateway and each service
  const serverCpu = watched.length > 0 ? watched.reduce((n, _w, i) => n + cpuAfter[i]! - cpuBefore[i]!, 0) / wall : Number.NaN;
  return { name, rps: (latencies.length + errors) / durationS, p50: percentile(sorted, 50), p99: percentile(sorted, 99), requests: latencies.length + errors, non2xx: errors, cpu, serverCpu };
}

interface StoreResult {
  rest1: Figures | null;
  rest100: Figures | null;
  bare: Figures | null;
  /** per round: REST 1-check req/s over the bare server's req/s (empty without the bare server) */
  bareRatios: number[];
  /** per round: REST 1-check req/s over REST 100-check req/s, what a 100-check call costs in 1-check calls */
  costRatios: number[];
  /** per round: the same for first-time checks, by kind of subject (a new one, a dataset user) */
  coldRatios: { kind: string; ratios: number[] }[];
  grpc1: Figures | null;
  grpc100: Figures | null;
}

/** A deployment of `store` with the dataset loaded, the bench user signed up and its check bodies ready. */
interface Prepared {
  d: Deployment;
  grpc: ServiceClient;
  token: string;
  headers: Record<string, string>;
  /** 256 distinct 1-check and 32 distinct 100-check bodies ({@link checkBodies}) */
  one: string[];
  hundred: string[];
  /** every process of the deployment: all-in-one is one, split mode the gateway and each service */
  watched: Watched[];
  close(): Promise<void>;
}

/**
 * Starts `store` with `--rate-limit-rps=0` and `extraFlags`, signs the bench user up (`bench-<tag>@…`),
 * loads `data` with the bench user in the power user's place, and probes one 100-check call.
 * @param tag printed before each line and part of the bench user's e-mail
 * @throws when the deployment does not start, signup or the probe does not answer 200 (the deployment is stopped)
 */
async function prepareStore(store: Store, tag: string, data: Dataset, extraFlags: readonly string[] = []): Promise<Prepared> {
  const t0 = performance.now();
  const how = DEPLOYMENTS[store];
  const d: Deployment = await startDeployment(how.mode, { ...how.options, flags: ['--rate-limit-rps=0', ...how.flags, ...extraFlags], readyTimeoutMs: 180_000 });
  const grpc = createGrpcClient(serviceDescriptor('authz'), { address: d.grpcAddress });
  const close = async (): Promise<void> => { grpc.close(); await d.stop(); };
  try {
    line(`[${tag}] deployment ready`, `${((performance.now() - t0) / 1000).toFixed(1)} s`);
    const signup = await post(`${d.url}/v1/signup`, { email: `bench-${tag.replace(/[^a-z0-9-]/gi, '-')}@example.com`, password: 'Bench-Passw0rd-2026!', confirm_password: 'Bench-Passw0rd-2026!' }, { origin: d.url });
    if (signup.status !== 200) throw new Error(`signup answered ${signup.status}: ${JSON.stringify(signup.json)}`);
    const token = signup.json.access_token as string;
    const subject = `user:${signup.json.user.id as string}`;
    // the bench user takes the dataset power user's place: member of 8 organizations, reader of 1,600 repositories
    const mine = data.tuples.filter((t) => t.user === data.powerUser).map((t) => ({ ...t, user: subject }));
    const loadS = await load(grpc, d.adminSecret, data, mine);
    line(`[${tag}] load ${data.tuples.length + mine.length} tuples (gRPC, 100/call, 8 in flight)`, `${loadS.toFixed(1)} s (${((data.tuples.length + mine.length) / loadS).toFixed(0)} tuples/s)`);

    const headers = { 'content-type': 'application/json', origin: d.url, authorization: `Bearer ${token}` };
    const orgs = mine.map((t) => t.object);
    const one = checkBodies(data, orgs, 256, 1);
    const hundred = checkBodies(data, orgs, 32, 100);
    const probe = await post(`${d.url}/v1/check_permissions`, JSON.parse(hundred[0]!), headers);
    if (probe.status !== 200 || probe.json.results.length !== 100) throw new Error(`check_permissions answered ${probe.status}: ${JSON.stringify(probe.json).slice(0, 300)}`);
    line(`[${tag}] probe: 100 checks answered`, `${probe.json.results.filter((r: { allowed: boolean }) => r.allowed).length} allowed`);
    const watched = d.processes.map((p) => ({ label: `gatehouse ${p.command}`, pid: p.child.pid! }));
    return { d, grpc, token, headers, one, hundred, watched, close };
  } catch (err) {
    console.error(d.output().slice(-3000));
    await close();
    throw err;
  }
}

/**
 * One copy of `store` at `level` for the log-level comparison (issue 38 §4, test/bench/log-level.ts):
 * the REST 1-check call over the 256 bodies, each connection cycling through them.
 */
async function levelCopy(store: Store, level: BenchLogLevel, data: Dataset, o: Options): Promise<LevelTarget> {
  const p = await prepareStore(store, `${store}, ${level}`, data, [`--log-level=${level}`]);
  return {
    target: {
      name: `[${store}, ${level}] REST check_permissions 1 check`, url: `${p.d.url}/v1/check_permissions`, method: 'POST', headers: p.headers, connections: o.connections,
      requests: p.one.map((body) => ({ setupRequest: (req) => ({ ...req, body }) })),
    },
    watched: p.watched,
    stop: () => p.close(),
  };
}

async function benchStore(store: Store, o: Options, data: Dataset, bare: BareServer | null): Promise<StoreResult> {
  const { d, token, headers, one, hundred, watched, close } = await prepareStore(store, store, data);
  try {
    const url = `${d.url}/v1/check_permissions`;
    const want = (name: string): boolean => o.only === null || o.only.has(name);
    // REST 1 check, REST 100 checks and the bare server take turns (inTurns): their ratios are per round
    const turns: Array<{ key: 'rest1' | 'rest100' | 'bare'; target: Target; watched: readonly Watched[] }> = [];
    if (want('rest1')) turns.push({ key: 'rest1', target: { name: `[${store}] REST check_permissions 1 check`, url, headers, bodies: one, connections: o.connections }, watched });
    if (want('rest100')) turns.push({ key: 'rest100', target: { name: `[${store}] REST check_permissions 100 checks`, url, headers, bodies: hundred, connections: o.connections }, watched });
    if (bare && turns.length > 0) turns.push({ key: 'bare', target: { ...bare.target, name: `[${store}] ${bare.target.name}`, connections: o.connections }, watched: [bare.watched] });
    const got = new Map<string, Figures>();
    const bareRatios: number[] = [];
    const costRatios: number[] = [];
    if (turns.length === 1) {
      got.set(turns[0]!.key, await loadFigures(turns[0]!.target, o, turns[0]!.watched));
    } else if (turns.length > 1) {
      const { figures, rps } = await inTurns(turns, o);
      turns.forEach((t, i) => got.set(t.key, figures[i]!));
      const at = (key: string): number => turns.findIndex((t) => t.key === key);
      const [r1, r100, b] = [at('rest1'), at('rest100'), at('bare')];
      for (const row of rps) {
        if (r1 >= 0 && b >= 0) bareRatios.push(row[r1]! / row[b]!);
        if (r1 >= 0 && r100 >= 0) costRatios.push(row[r1]! / row[r100]!);
      }
    }
    for (const t of turns) printFigures(got.get(t.key)!);
    // First-time checks: every request asks for a subject the engine remembers nothing for (numbered per
    // request, called as the super-admin with an explicit user), so it resolves every check. Two kinds:
    // a subject in no tuple (a new user: every check denied, answered like every other such subject's),
    // and a dataset user (a member of one organization and three of its teams), taken in turn so that
    // 20,000 requests pass before one is asked again, long after the engine's 1,024 remembered subjects
    // dropped it. A dataset user's checks are half on repositories of their own organization.
    const coldRatios: StoreResult['coldRatios'] = [];
    if (want('cold')) {
      const adminHeaders = { 'content-type': 'application/json', origin: d.url, 'x-service-admin-secret': d.adminSecret };
      const kinds = [
        { kind: 'subject in no tuple', body: (n: number, perCall: number) => JSON.stringify({ user: `user:cold-${n}`, checks: coldChecks(data, n, perCall, null) }) },
        { kind: 'dataset user', body: (n: number, perCall: number) => { const u = `user:u${n % data.options.users}`; return JSON.stringify({ user: u, checks: coldChecks(data, n, perCall, data.orgsOf.get(u)![0]!) }); } },
      ];
      for (const { kind, body } of kinds) {
        const cold = [1, 100].map((perCall) => ({ target: { name: `[${store}] REST check_permissions ${perCall === 1 ? '1 check' : '100 checks'}, first-time, ${kind}`, url, headers: adminHeaders, bodies: [], connections: o.connections, fresh: (n: number) => body(n, perCall) }, watched }));
        const { figures, rps } = await inTurns(cold, o);
        figures.forEach(printFigures);
        coldRatios.push({ kind, ratios: rps.map((row) => row[0]! / row[1]!) });
      }
    }
    const rest1 = got.get('rest1') ?? null;
    const rest100 = got.get('rest100') ?? null;
    const bareFigures = got.get('bare') ?? null;
    let grpc1: Figures | null = null;
    let grpc100: Figures | null = null;
    if (want('grpc')) {
      if (o.warmupS > 0) await grpcLoad(d.grpcAddress, token, one, o.connections, o.warmupS, o.grpcClients, 'warm-up');
      grpc1 = await grpcLoad(d.grpcAddress, token, one, o.connections, o.durationS, o.grpcClients, `[${store}] gRPC CheckPermissions 1 check`, watched);
      printFigures(grpc1);
      grpc100 = await grpcLoad(d.grpcAddress, token, hundred, o.connections, o.durationS, o.grpcClients, `[${store}] gRPC CheckPermissions 100 checks`, watched);
      printFigures(grpc100);
    }

    const times: number[] = [];
    let result: any;
    for (const body of want('list') ? [{ relation: 'can_read', object_type: 'repository' }, {}] : []) {
      times.length = 0;
      const until = performance.now() + Math.min(3, o.durationS) * 1000;
      while (performance.now() < until) {
        const start = performance.now();
        result = await post(`${d.url}/v1/list_permissions`, body, headers);
        times.push(performance.now() - start);
        if (result.status !== 200) throw new Error(`list_permissions answered ${result.status}: ${JSON.stringify(result.json)}`);
      }
      const s = Float64Array.from(times).sort();
      line(`[${store}] REST list_permissions ${JSON.stringify(body)}`, `${result.json.permissions.length} entries, truncated=${result.json.truncated}, sequential n=${times.length}: p50 ${ms(percentile(s, 50))}, p99 ${ms(percentile(s, 99))}`);
    }
    return { rest1, rest100, bare: bareFigures, bareRatios, costRatios, coldRatios, grpc1, grpc100 };
  } catch (err) {
    console.error(d.output().slice(-3000));
    throw err;
  } finally {
    await close();
  }
}

/** Below this share of one core for the bare server, the REST/bare ratio is reported as not measured. */
const CONTENDED_BELOW = 0.9;

/** The bare baseline server, running for the whole benchmark. */
interface BareServer { target: Target; watched: Watched; stop(): void }

/** The answer of a 1-check call, as the bare server sends it (the size of Gatehouse's answer). */
const BARE_BODY = '{"results":[{"relation":"can_read","object":"repository:o1-r1","allowed":true}]}';

/** Starts test/bench/bare-server.ts (a bare node:http server in its own process, as Gatehouse is) answering {@link BARE_BODY}. */
async function startBare(connections: number): Promise<BareServer> {
  const script = path.join(path.dirname(fileURLToPath(import.meta.url)), '../../../test/bench/bare-server.ts');
  const child = spawn(process.execPath, [script, BARE_BODY], { stdio: ['ignore', 'pipe', 'inherit'] });
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (c: Buffer) => {
      out += c.toString();
      const m = /listening (\d+)/.exec(out);
      if (m) resolve(`http://127.0.0.1:${m[1]}/`);
    });
    child.once('exit', (code) => reject(new Error(`bare server exited with ${code}`)));
  });
  return {
    target: { name: `bare node:http (${BARE_BODY.length} B JSON)`, url, headers: { 'content-type': 'application/json' }, bodies: ['{"checks":[{"relation":"can_read","object":"repository:o1-r1"}]}'], connections },
    watched: { label: 'bare server', pid: child.pid! },
    stop: () => child.kill('SIGTERM'),
  };
}

async function main(): Promise<void> {
  const o = parseArgs(process.argv.slice(2));
  if (o.stores.length === 0) throw new Error(`no store to run: --stores takes a comma list of ${Object.keys(DEPLOYMENTS).join(', ')}`);
  const cpus = os.cpus();
  console.log(`machine: ${cpus.length} cores (${cpus[0]?.model ?? 'unknown'}), node ${process.version}, load average ${os.loadavg().map((x) => x.toFixed(2)).join(' ')}`);
  console.log(`load: autocannon 8 / grpc-js in ${o.grpcClients} processes, ${o.connections} connections (or calls in flight), ${o.warmupS} s warm-up + ${o.durationS} s measured per figure (REST 1 check, REST 100 checks and the bare server: ${o.rounds} rounds of ${o.roundS} s each, in turns); all-in-one, --rate-limit-rps=0; caller: a signed-up user (bearer token); 256 distinct 1-check and 32 distinct 100-check bodies, repeated, so the engine answers most checks from what it remembers (first-time checks: the cold figures, a subject the engine remembers nothing for on every request, and authz-bench.ts)`);
  const data = generateGithubDataset(DEFAULT_DATASET);
  const bare = o.only === null || o.only.has('bare') ? await startBare(o.connections) : null;
  const results = new Map<Store, StoreResult>();
  try {
    const onlyLog = o.only !== null && [...o.only].every((x) => x === 'log');
    if (!onlyLog) for (const store of o.stores) results.set(store, await benchStore(store, o, data, bare));
  } finally {
    bare?.stop();
  }
  if (o.logRounds > 0 && (o.only === null || o.only.has('log'))) {
    console.log('');
    console.log(`issue 38 §4, the default log level: REST check_permissions 1 check at --log-level=info (one access-log line per request on stdout, a pipe read by this process) against warn, two copies of each store at once, ${o.logRounds} interleaved rounds of ${o.logRoundS} s, ${o.connections} connections; server CPU summed over every process of the deployment`);
    for (const store of o.stores) await compareLogLevels(`REST check_permissions 1 check (${store})`, (level) => levelCopy(store, level, data, o), o.logRounds, { durationS: o.logRoundS, warmupS: o.warmupS });
  }
  const rounds = (xs: readonly number[]): string => `median of ${xs.length} rounds: ${xs.map((x) => x.toFixed(2)).join(', ')}`;
  // CPU time of the server per request, which moves less with the host than req/s does
  const us = (f: Figures): number => (f.serverCpu * 1e6) / f.rps;
  for (const [store, r] of results) {
    if (r.bareRatios.length > 0) {
      const ratio = median(r.bareRatios);
      // Both servers are single-threaded and CPU-bound under this load: a bare server well short of one
      // core means the machine (a shared VM) gave this one less CPU than it asked for, and the ratio then
      // says more about the host than about Gatehouse.
      const contended = r.bare !== null && r.bare.serverCpu < CONTENDED_BELOW;
      const verdict = contended
        ? `not measured: the bare server used ${(r.bare!.serverCpu * 100).toFixed(0)}% of a core (< ${CONTENDED_BELOW * 100}%), the machine was contended; run again`
        : `target >= 0.5: ${ratio >= 0.5 ? 'met' : 'NOT met'}`;
      line(`[${store}] ratio REST(1 check)/bare req/s`, `${ratio.toFixed(2)} (${rounds(r.bareRatios)}; ${verdict})`);
      if (r.rest1 && r.bare) {
        line(`[${store}] server CPU per request, REST(1 check) vs bare`, `${us(r.rest1).toFixed(0)} µs vs ${us(r.bare).toFixed(0)} µs: bare/Gatehouse ${(us(r.bare) / us(r.rest1)).toFixed(2)}`);
      }
    }
    if (r.costRatios.length > 0 && r.rest1 && r.rest100) {
      const cost = median(r.costRatios);
      line(`[${store}] cost ratio 100-check/1-check call (REST, 1/req/s)`, `${cost.toFixed(2)}x (${rounds(r.costRatios)}; target <= 3: ${cost <= 3 ? 'met' : 'NOT met'}); p50 ratio ${(r.rest100.p50 / r.rest1.p50).toFixed(2)}x`);
      line(`[${store}] server CPU per call, REST 100 checks vs 1 check`, `${us(r.rest100).toFixed(0)} µs vs ${us(r.rest1).toFixed(0)} µs: ${(us(r.rest100) / us(r.rest1)).toFixed(2)}x`);
    }
    for (const { kind, ratios } of r.coldRatios) {
      const cost = median(ratios);
      line(`[${store}] cost ratio, first-time checks, ${kind} (REST, 1/req/s)`, `${cost.toFixed(2)}x (${rounds(ratios)}; target <= 3: ${cost <= 3 ? 'met' : 'NOT met'})`);
    }
    if (r.grpc1 && r.grpc100) {
      line(`[${store}] cost ratio 100-check/1-check call (gRPC, 1/req/s)`, `${(r.grpc1.rps / r.grpc100.rps).toFixed(2)}x; p50 ratio ${(r.grpc100.p50 / r.grpc1.p50).toFixed(2)}x`);
      line(`[${store}] server CPU per call, gRPC 100 checks vs 1 check`, `${us(r.grpc100).toFixed(0)} µs vs ${us(r.grpc1).toFixed(0)} µs: ${(us(r.grpc100) / us(r.grpc1)).toFixed(2)}x`);
    }
  }
  // issue 22: the 1-check call on PostgreSQL + Redis and through split mode against SQLite, in this run
  const sqlite = results.get('sqlite')?.rest1;
  if (sqlite) {
    console.log(`issue 22 (load average now ${os.loadavg().map((x) => x.toFixed(2)).join(' ')}; a shared machine, see test/bench/README.md):`);
    for (const [store, goal] of [['postgres-redis', 0.5], ['split', 0.35]] as const) {
      const f = results.get(store)?.rest1;
      if (!f) continue;
      const ratio = f.rps / sqlite.rps;
      line(`  REST check_permissions 1 check, ${store}/sqlite req/s`, `${ratio.toFixed(2)} (target >= ${goal}: ${ratio >= goal ? 'met' : 'NOT met'}); server CPU per call ${us(f).toFixed(0)} µs vs ${us(sqlite).toFixed(0)} µs`);
    }
  }
}

main().then(() => process.exit(0), (err: unknown) => {
  console.error(err);
  process.exit(1);
});
