/**
 * @module bench/gateway-bench
 * `npm run bench`: requests/s and p50/p99 of `POST /v1/validate_jwt_token`, `POST /v1/login`, and the
 * token endpoint's `client_credentials` (client_secret_basic) and `refresh_token` grants (issue 18; each
 * connection follows its own rotation chain, since a refresh token is single use) through the gateway
 * (all-in-one, then split), next to a bare node:http server answering a fixed
 * JSON body of the same size, all under the same load generator (autocannon), and the ratios.
 * Not a test: it asserts nothing beyond "every request answered 2xx", and the figures depend on the
 * machine and its load. Options: --duration=<s> (10), --warmup=<s> (2), --connections=<n> (50),
 * --login-connections=<n> (16), --modes=all,all-pg,all-pg-redis,split (all four: all-in-one on SQLite, on
 * PostgreSQL, on PostgreSQL + Redis, split), --only=validate (only validate_jwt_token and the bare server),
 * --only=log (only the default log level's cost below),
 * --log-rounds=<n> (4; 0 skips) and --log-round-duration=<s> (3): the default log level's cost (issue 38
 * §4), validate_jwt_token on two copies of each mode, `--log-level=warn` and `--log-level=info` (the
 * access log on), in interleaved rounds (log-level.ts). --log-aa: the same comparison with both copies at
 * `warn` (an A/A run): what the method itself reads as a cost, to tell a real one from a copy that is slower.
 * --http-workers=<n> (1): start every deployment with `--http-workers=<n>` (issue 38 §0; the server CPU
 * then sums the primary and its workers). Every mode also measures check_permissions with one check
 * (a bearer token, one tuple), right after validate_jwt_token. --node-options=<...>: NODE_OPTIONS for the
 * Gatehouse processes only (e.g. `--max-semi-space-size=64` to compare V8's own young generation with the default 16).
 * Prints the issue 22 ratios (PostgreSQL + Redis and split against SQLite) with the machine's load.
 */
import os from 'node:os';
import { startDeployment, type Deployment, type StartOptions } from '@gatehouse/testing';
import { compareLogLevels, type BenchLogLevel, type LevelTarget } from './log-level.ts';
import { formatLine, HEADER, measureWithCpu, startBare, withChildren, type AutocannonRequest, type LoadParams, type Measured, type LoadTarget, type Watched } from './load.ts';

/** A deployment the bench measures: `all` (SQLite), `all-pg`, `all-pg-redis` or `split` (PostgreSQL + Redis + NATS). */
type Mode = 'all' | 'all-pg' | 'all-pg-redis' | 'split';
const MODES: Readonly<Record<Mode, { mode: 'all' | 'split'; options: StartOptions; label: string }>> = {
  all: { mode: 'all', options: {}, label: 'one `gatehouse all` on SQLite' },
  'all-pg': { mode: 'all', options: { database: 'postgres' }, label: 'one `gatehouse all` on PostgreSQL, no Redis' },
  'all-pg-redis': { mode: 'all', options: { database: 'postgres', redis: true }, label: 'one `gatehouse all` on PostgreSQL + Redis' },
  split: { mode: 'split', options: {}, label: 'authn, authz, mfa, admin, orgs, notifications, gateway on PostgreSQL + Redis + NATS' },
};

interface Options extends LoadParams {
  connections: number;
  loginConnections: number;
  modes: Mode[];
  onlyValidate: boolean;
  /** `--only=log`: only the log-level comparison */
  onlyLog: boolean;
  logRounds: number;
  logRoundS: number;
  /** `--log-aa`: both copies of the log-level comparison at warn (an A/A run of the method) */
  logAa: boolean;
  httpWorkers: number;
  /** NODE_OPTIONS for the Gatehouse processes only (`--node-options=<...>`), e.g. a young-generation size to compare */
  nodeOptions?: string;
}

function parseArgs(argv: readonly string[]): Options {
  const o: Options = { durationS: 10, warmupS: 2, connections: 50, loginConnections: 16, modes: ['all', 'all-pg', 'all-pg-redis', 'split'], onlyValidate: false, onlyLog: false, logRounds: 4, logRoundS: 3, logAa: false, httpWorkers: 1 };
  for (const arg of argv) {
    const [k, v = ''] = arg.split('=');
    const n = Number(v);
    if (k === '--node-options') o.nodeOptions = arg.slice('--node-options='.length);
    else if (k === '--modes') o.modes = v.split(',').filter((m): m is Mode => m in MODES);
    else if (k === '--only' && v === 'validate') o.onlyValidate = true;
    else if (k === '--only' && v === 'log') o.onlyLog = true;
    else if (k === '--log-aa' && v === '') o.logAa = true;
    else if (!Number.isInteger(n) || n < 0) throw new Error(`bad option ${arg}`);
    else if (k === '--duration' && n > 0) o.durationS = n;
    else if (k === '--warmup') o.warmupS = n;
    else if (k === '--connections' && n > 0) o.connections = n;
    else if (k === '--login-connections' && n > 0) o.loginConnections = n;
    else if (k === '--log-rounds') o.logRounds = n;
    else if (k === '--log-round-duration' && n > 0) o.logRoundS = n;
    else if (k === '--http-workers' && n > 0) o.httpWorkers = n;
    else throw new Error(`unknown option ${arg}`);
  }
  return o;
}

/** The environment the Gatehouse processes get on top of the bench's: NODE_OPTIONS when `--node-options` was given. */
const serverEnv = (o: Options): Pick<StartOptions, 'env'> => (o.nodeOptions === undefined ? {} : { env: { NODE_OPTIONS: o.nodeOptions } });

const EMAIL = 'bench-user@example.com';
const PASSWORD = 'Bench-Passw0rd-2026!';

async function post(url: string, origin: string, body: unknown): Promise<{ status: number; text: string }> {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', origin }, body: JSON.stringify(body) });
  return { status: res.status, text: await res.text() };
}

/** Signs the bench user up, logs in, and checks one validation by hand before loading anything. */
async function prepare(d: Deployment): Promise<{ validateBody: string; validateAnswer: string; token: string; sub: string }> {
  const signup = await post(`${d.url}/v1/signup`, d.url, { email: EMAIL, password: PASSWORD, confirm_password: PASSWORD });
  if (signup.status !== 200) throw new Error(`signup answered ${signup.status}: ${signup.text}`);
  const login = await post(`${d.url}/v1/login`, d.url, { email: EMAIL, password: PASSWORD });
  const token = (JSON.parse(login.text) as { access_token?: string }).access_token;
  if (login.status !== 200 || !token) throw new Error(`login answered ${login.status}: ${login.text}`);
  const validateBody = JSON.stringify({ token_type: 'access_token', token });
  const v = await post(`${d.url}/v1/validate_jwt_token`, d.url, JSON.parse(validateBody));
  if (v.status !== 200 || !(JSON.parse(v.text) as { is_valid?: boolean }).is_valid) throw new Error(`validate_jwt_token answered ${v.status}: ${v.text}`);
  const sub = (JSON.parse(v.text) as { claims: { sub: string } }).claims.sub;
  return { validateBody, validateAnswer: v.text, token, sub };
}

/** The one-check check_permissions load: a model, one tuple granting the bench user, its bearer token. */
async function checkTarget(d: Deployment, mode: Mode, token: string, sub: string, connections: number): Promise<LoadTarget> {
  const admin = { 'content-type': 'application/json', origin: d.url, 'x-service-admin-secret': d.adminSecret };
  const model = await fetch(`${d.url}/v1/admin/fga/model`, { method: 'POST', headers: admin, body: JSON.stringify({ dsl: 'model\n  schema 1.1\ntype user\ntype doc\n  relations\n    define viewer: [user]\n' }) });
  if (model.status !== 200) throw new Error(`write model answered ${model.status}: ${await model.text()}`);
  const tuple = await fetch(`${d.url}/v1/admin/fga/tuples`, { method: 'POST', headers: admin, body: JSON.stringify({ tuples: [{ user: `user:${sub}`, relation: 'viewer', object: 'doc:bench' }] }) });
  if (tuple.status !== 200) throw new Error(`write tuples answered ${tuple.status}: ${await tuple.text()}`);
  const headers = { 'content-type': 'application/json', origin: d.url, authorization: `Bearer ${token}` };
  const body = JSON.stringify({ checks: [{ relation: 'viewer', object: 'doc:bench' }] });
  const first = await fetch(`${d.url}/v1/check_permissions`, { method: 'POST', headers, body });
  const text = await first.text();
  if (first.status !== 200 || !text.includes('"allowed":true')) throw new Error(`check_permissions answered ${first.status}: ${text}`);
  return { name: `check_permissions 1 (${mode})`, url: `${d.url}/v1/check_permissions`, method: 'POST', headers, body, connections };
}

function watchedOf(d: Deployment): Watched[] {
  return d.processes.flatMap((p) => withChildren({ label: `gatehouse ${p.command}`, pid: p.child.pid! }));
}

type Row = Measured;

/** A client for the client_credentials load (created through the admin API): its Basic header. */
async function benchClient(d: Deployment): Promise<string> {
  const res = await fetch(`${d.url}/v1/admin/create_client`, {
    method: 'POST', headers: { 'content-type': 'application/json', origin: d.url, 'x-service-admin-secret': d.adminSecret },
    body: JSON.stringify({ name: 'bench', allowed_scopes: ['bench'] }),
  });
  const body = (await res.json()) as { client: { client_id: string }; client_secret: string };
  if (res.status !== 200) throw new Error(`create_client answered ${res.status}`);
  return `Basic ${Buffer.from(`${body.client.client_id}:${body.client_secret}`).toString('base64')}`;
}

/**
 * The refresh grant's request sequence. A refresh token is single use (rotation, behaviour.md §2.2), so
 * the live tokens wait in a queue: each request takes one, and its answer puts the rotated one back.
 * No token is ever in two requests at once. `count` chains are started, one login each (autocannon
 * resets a connection's context after each pass over the sequence, so the queue lives out here).
 */
async function refreshChains(d: Deployment, count: number): Promise<AutocannonRequest[]> {
  const ready: string[] = [];
  for (let i = 0; i < count; i++) {
    const login = await post(`${d.url}/v1/login`, d.url, { email: EMAIL, password: PASSWORD, scope: ['openid', 'offline_access'] });
    const token = (JSON.parse(login.text) as { refresh_token?: string }).refresh_token;
    if (!token) throw new Error(`login answered ${login.status}: ${login.text}`);
    ready.push(token);
  }
  return [{
    setupRequest: (req) => ({ ...req, body: JSON.stringify({ grant_type: 'refresh_token', client_id: d.clientId, refresh_token: ready.shift() ?? '' }) }),
    onResponse: (status, body) => {
      if (status === 200) ready.push((JSON.parse(body) as { refresh_token: string }).refresh_token);
    },
  }];
}

interface ModeRows { validate: Row; check: Row; login?: Row; clientCredentials?: Row; refresh?: Row }

async function benchMode(mode: Mode, o: Options, print: (r: Row) => void): Promise<ModeRows & { validateAnswer: string }> {
  const d = await startDeployment(MODES[mode].mode, { ...MODES[mode].options, flags: ['--rate-limit-rps=0', `--http-workers=${o.httpWorkers}`], readyTimeoutMs: READY_TIMEOUT_MS, ...serverEnv(o) });
  try {
    // /healthz answers once the first worker serves; the primary opens /metrics once all of them do
    while (o.httpWorkers > 1 && !(await fetch(d.metricsUrl).then((r) => r.ok, () => false))) await new Promise((r) => setTimeout(r, 200));
    const { validateBody, validateAnswer, token, sub } = await prepare(d);
    const headers = { 'content-type': 'application/json', origin: d.url };
    const validate: LoadTarget = { name: `validate_jwt_token (${mode})`, url: `${d.url}/v1/validate_jwt_token`, method: 'POST', headers, body: validateBody, connections: o.connections };
    const v = await measureWithCpu(validate, o, watchedOf(d));
    print(v);
    const ch = await measureWithCpu(await checkTarget(d, mode, token, sub, o.connections), o, watchedOf(d));
    print(ch);
    if (o.onlyValidate) return { validate: v, check: ch, validateAnswer };
    const login: LoadTarget = { name: `login (${mode})`, url: `${d.url}/v1/login`, method: 'POST', headers, body: JSON.stringify({ email: EMAIL, password: PASSWORD }), connections: o.loginConnections };
    const l = await measureWithCpu(login, o, watchedOf(d));
    print(l);
    const basic = await benchClient(d);
    const cc: LoadTarget = {
      name: `client_credentials (${mode})`, url: `${d.url}/oauth/token`, method: 'POST', connections: o.connections,
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic }, body: 'grant_type=client_credentials&scope=bench',
    };
    const c = await measureWithCpu(cc, o, watchedOf(d));
    print(c);
    // twice as many rotation chains as connections: the requests in flight when the warm-up stops
    // never get their answers, so their chains end there; the measured run continues the others
    const refresh: LoadTarget = {
      name: `refresh_token grant (${mode})`, url: `${d.url}/oauth/token`, method: 'POST', connections: o.loginConnections,
      headers: { 'content-type': 'application/json' }, requests: await refreshChains(d, 2 * o.loginConnections),
    };
    const r = await measureWithCpu(refresh, o, watchedOf(d));
    print(r);
    return { validate: v, check: ch, login: l, clientCredentials: c, refresh: r, validateAnswer };
  } catch (err) {
    console.error(d.output().slice(-4000));
    throw err;
  } finally {
    await d.stop();
  }
}

/** One copy of `mode` at `level` for the log-level comparison: signed up, its validate_jwt_token load ready. */
async function levelCopy(mode: Mode, level: BenchLogLevel, o: Options): Promise<LevelTarget> {
  const d = await startDeployment(MODES[mode].mode, { ...MODES[mode].options, flags: ['--rate-limit-rps=0', `--log-level=${level}`], readyTimeoutMs: READY_TIMEOUT_MS, ...serverEnv(o) });
  try {
    const { validateBody } = await prepare(d);
    return {
      target: { name: `validate_jwt_token (${mode}, ${level})`, url: `${d.url}/v1/validate_jwt_token`, method: 'POST', headers: { 'content-type': 'application/json', origin: d.url }, body: validateBody, connections: o.connections },
      watched: watchedOf(d),
      stop: () => d.stop(),
    };
  } catch (err) {
    await d.stop();
    throw err;
  }
}

async function benchBare(body: string, o: Options): Promise<Row> {
  const { url, child } = await startBare(body);
  try {
    const target: LoadTarget = { name: `bare node:http (${body.length} B JSON)`, url, method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"token_type":"access_token","token":"x"}', connections: o.connections };
    return await measureWithCpu(target, o, [{ label: 'bare server', pid: child.pid! }]);
  } finally {
    child.kill('SIGTERM');
  }
}

async function main(): Promise<void> {
  const o = parseArgs(process.argv.slice(2));
  const cpus = os.cpus();
  console.log(`machine: ${cpus.length} cores (${cpus[0]?.model ?? 'unknown'}), ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB, node ${process.version}, ${os.platform()} ${os.release()}, load average ${os.loadavg().map((x) => x.toFixed(2)).join(' ')}`);
  console.log(`load generator: autocannon 8 in this process, same machine; ${o.warmupS} s warm-up (discarded) + ${o.durationS} s measured per target; ${o.connections} connections (validate, bare), ${o.loginConnections} (login); keep-alive, no pipelining`);
  console.log(`deployments: startDeployment() with --rate-limit-rps=0 --log-level=warn --http-workers=${o.httpWorkers}; ${o.modes.map((m) => `${m} = ${MODES[m].label}`).join('; ')}`);
  console.log('latency: 2xx responses only, from autocannon\'s response event (hrtime); req/s = completed responses / measured seconds');
  console.log('');
  console.log(HEADER);
  const print = (r: Row): void => {
    console.log(formatLine(r.figures));
    console.log(`    ${r.cpu}`);
  };

  if (o.onlyLog) {
    await logLevels(o);
    return;
  }
  const results = new Map<Mode, ModeRows>();
  let answer = '';
  for (const mode of o.modes) {
    const r = await benchMode(mode, o, print);
    results.set(mode, r);
    answer ||= r.validateAnswer;
  }
  if (!answer) throw new Error(`no mode ran: --modes takes a comma list of ${Object.keys(MODES).join(', ')}`);
  // a fixed body of the validate answer's size and shape (the first real answer, claims included)
  const bare = await benchBare(answer, o);
  print(bare);

  console.log('');
  for (const [mode, r] of results) {
    const tag = mode === 'all' ? '' : ` (${mode})`;
    for (const [name, row] of rowsOf(r)) {
      const ratio = row.figures.rps / bare.figures.rps;
      console.log(`ratio ${name}/bare = ${ratio.toFixed(2)}${tag} (req/s; ${ratio.toPrecision(3)} = 1/${(1 / ratio).toFixed(0)})`);
    }
  }
  // CPU per request barely moves with machine load, unlike req/s: the figures to set targets from
  const cpuMs = (r: Row): number => r.cpuPerRequestMs.main + r.cpuPerRequestMs.pool + r.cpuPerRequestMs.other;
  console.log('');
  console.log(`server cpu per request: bare ${cpuMs(bare).toFixed(3)} ms`);
  for (const [mode, r] of results) {
    for (const [name, row] of rowsOf(r)) {
      const c = row.cpuPerRequestMs;
      console.log(`server cpu per request: ${name} (${mode}) ${cpuMs(row).toFixed(3)} ms = ${(cpuMs(row) / cpuMs(bare)).toFixed(1)}× bare; js thread${mode === 'all' ? '' : 's (all processes)'} ${c.main.toFixed(3)} ms${mode === 'all' ? ` (the one js thread saturates at ${(1000 / c.main).toFixed(0)} req/s)` : ''}, threadpool ${c.pool.toFixed(3)} ms, other threads ${c.other.toFixed(3)} ms`);
    }
  }
  issue22Ratios(results, cpuMs);
  await logLevels(o);
  const failed = [...[...results.values()].flatMap((r) => rowsOf(r).map(([, row]) => row)), bare].filter((r) => r.figures.errors > 0 || r.figures.non2xx > 0);
  if (failed.length > 0) console.log(`note: errors or non-2xx answers in ${failed.map((r) => r.figures.name).join(', ')}; their req/s include those answers`);
}

/** Timeout for a deployment's `/healthz` (ms): a start on a machine shared by several test suites can take a minute. */
const READY_TIMEOUT_MS = 180_000;

/** The default log level's cost (issue 38 §4): validate_jwt_token at info against warn, per mode ({@link compareLogLevels}); nothing when `--log-rounds=0`. */
async function logLevels(o: Options): Promise<void> {
  if (o.logRounds === 0) return;
  console.log('');
  console.log(`issue 38 §4, the default log level: validate_jwt_token at --log-level=info (one access-log line per request on stdout, a pipe read by this process) against warn, two copies of each mode at once, ${o.logRounds} interleaved rounds of ${o.logRoundS} s, ${o.connections} connections`);
  if (o.logAa) console.log('--log-aa: an A/A run, the copy labelled "info" runs at --log-level=warn too; its "cost" is the method\'s own error');
  for (const mode of o.modes) await compareLogLevels(`validate_jwt_token (${mode})`, (level) => levelCopy(mode, o.logAa ? 'warn' : level, o), o.logRounds, { durationS: o.logRoundS, warmupS: o.warmupS });
}

/** The rows a mode measured, by name. */
function rowsOf(r: ModeRows): Array<[string, Row]> {
  return ([['validate_jwt_token', r.validate], ['login', r.login], ['client_credentials', r.clientCredentials], ['refresh_token grant', r.refresh]] as Array<[string, Row | undefined]>)
    .filter((e): e is [string, Row] => e[1] !== undefined);
}

/** Issue 22's targets for validate_jwt_token, as ratios against all-in-one SQLite measured in this run. */
function issue22Ratios(results: ReadonlyMap<Mode, ModeRows>, cpuMs: (r: Row) => number): void {
  const sqlite = results.get('all')?.validate;
  if (!sqlite) return;
  console.log('');
  console.log(`issue 22 (load average now ${os.loadavg().map((x) => x.toFixed(2)).join(' ')}; the machine is shared, see test/bench/README.md):`);
  const target: Partial<Record<Mode, number>> = { 'all-pg-redis': 0.5, split: 0.35 };
  for (const mode of ['all-pg', 'all-pg-redis', 'split'] as const) {
    const v = results.get(mode)?.validate;
    if (!v) continue;
    const ratio = v.figures.rps / sqlite.figures.rps;
    const goal = target[mode];
    console.log(`  validate_jwt_token ${mode}/all (SQLite) = ${ratio.toFixed(2)} req/s${goal === undefined ? '' : ` (target ≥ ${goal}: ${ratio >= goal ? 'met' : 'not met'})`}; server cpu ${(cpuMs(v) / cpuMs(sqlite)).toFixed(2)}× SQLite${mode.startsWith('all-pg') ? ` (target ≤ 2: ${cpuMs(v) / cpuMs(sqlite) <= 2 ? 'met' : 'not met'})` : ''}`);
  }
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
