/**
 * @module authz/bench/openfga-side-by-side
 * `npm run bench:openfga`: Gatehouse's OpenFGA HTTP API against the real OpenFGA server, side by side in one
 * run (issue 36 "What must be shown", issue 38 §3). Both on the same PostgreSQL (a database each), the same
 * model (users, groups with nested membership, folders with parent folders, documents inheriting from their
 * folder) and the same tuples, loaded through each server's Write API (100 tuples per call, 4 calls in
 * flight; the load time of each is printed). Then interleaved rounds: in each round every call kind runs
 * on Gatehouse then on OpenFGA (the order flips every round), the same request sequence for both, through
 * one keep-alive HTTP client (Node's fetch), for a bounded count and time. Printed per call and server:
 * p50/p99 latency and req/s over all rounds, and the median over rounds of the Gatehouse/OpenFGA ratio
 * (req/s and p50), with the machine's load average at the start and the end.
 *
 * Call kinds (OpenFGA's REST API, `openfga.v1.OpenFGAService`): Check (`document#viewer` for a random
 * user), BatchCheck of 50 checks with correlation ids, ListObjects (`document`s a user can view),
 * ListUsers (`user`s that can view a document). Both servers answer with the same caps: 1,000 results per
 * list, 50 checks per batch, and the same list deadline (`--list-deadline`, 10 s; OpenFGA cuts a list short at
 * its deadline, Gatehouse fails it with 504, counted as an error).
 *
 * Options: --tuples=<n> (200000), --rounds=<n> (5), --count=<n> requests per call, server and round (200),
 * --round-seconds=<s> time cap per call, server and round (3), --concurrency=<n> requests in flight (4),
 * --list-deadline=<s> (10), --warmup=<n> requests per call and server before the rounds (5). Not a test: errors in the rounds (timeouts under load) are counted and the
 * first printed; it fails only if a server answers an error while loading or warming up, or the two servers
 * disagree on a Check or BatchCheck answer of the warm-up (a BatchCheck item one server answers with an error,
 * as OpenFGA's check deadline does under load, is counted and not compared); differing ListObjects / ListUsers answers of the
 * warm-up (compared as sets; two answers both at the 1,000-result cap are not compared) are printed.
 */
import os from 'node:os';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { transformer } from '@openfga/syntax-transformer';
import { createScratchDatabase } from '@gatehouse/db';
import { freePort, OPENFGA_BIN, startDeployment, startOpenFga, waitForHttp, type Deployment, type OpenFgaServer } from '@gatehouse/testing';
import { DRIVE_MODEL, driveDataset, type TupleKey } from './drive-dataset.ts';
import { prng } from './github-dataset.ts';

const args = Object.fromEntries(process.argv.slice(2).map((a) => a.replace(/^--/, '').split('=')) as Array<[string, string]>);
const TUPLES = Number(args['tuples'] ?? 200_000);
const ROUNDS = Number(args['rounds'] ?? 5);
const COUNT = Number(args['count'] ?? 200);
const ROUND_S = Number(args['round-seconds'] ?? 3);
const CONCURRENCY = Number(args['concurrency'] ?? 4);
const LIST_DEADLINE_S = Number(args['list-deadline'] ?? 10);
const WARMUP = Number(args['warmup'] ?? 5);
const GATEHOUSE_STORE = '01JDQ7GATEHSE0000000000000';
/** results per ListObjects / ListUsers answer on both servers (each one's default) */
const LIST_CAP = 1000;

/** One server under test: the OpenFGA REST base of its store and the bearer key it wants. */
interface Target { name: string; base: string; key: string }

const quantile = (xs: number[], q: number): number => {
  if (xs.length === 0) return Number.NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))]!;
};
const median = (xs: number[]): number => quantile(xs, 0.5);
const load = (): string => os.loadavg().map((l) => l.toFixed(2)).join(' ');

/** POSTs `body` to `path` of the target's store; throws with OpenFGA's `{code, message}` on a non-2xx. */
async function call(t: Target, path: string, body: unknown): Promise<any> {
  const res = await fetch(`${t.base}${path}`, {
    method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${t.key}` }, body: JSON.stringify(body),
  });
  const text = await res.text();
  if (res.status < 200 || res.status > 299) throw new Error(`${t.name} ${path}: ${res.status} ${text.slice(0, 300)}`);
  return text ? JSON.parse(text) : {};
}

/** Runs `jobs` with `width` in flight; resolves when all are done. */
async function pool<T>(items: T[], width: number, job: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: Math.min(width, items.length) }, async () => {
    while (next < items.length) await job(items[next++]!);
  }));
}

/** Writes the tuples in calls of 100, 4 in flight; answers the seconds it took. */
async function loadTuples(t: Target, tuples: TupleKey[]): Promise<number> {
  const batches: TupleKey[][] = [];
  for (let i = 0; i < tuples.length; i += 100) batches.push(tuples.slice(i, i + 100));
  const t0 = performance.now();
  await pool(batches, 4, async (b) => { await call(t, '/write', { writes: { tuple_keys: b } }); });
  return (performance.now() - t0) / 1000;
}

/** Starts OpenFGA on a fresh PostgreSQL database (`openfga migrate`, then `run --datastore-engine postgres`). */
async function startOpenFgaOnPostgres(key: string): Promise<{ server: OpenFgaServer; drop(): Promise<void> }> {
  const db = await createScratchDatabase('postgres');
  const uri = `${db.options.url}${db.options.url!.includes('?') ? '&' : '?'}sslmode=disable`;
  await new Promise<void>((resolve, reject) => {
    const m = spawn(OPENFGA_BIN, ['migrate', '--datastore-engine=postgres', `--datastore-uri=${uri}`], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    m.stdout.on('data', (c: Buffer) => { out += c.toString(); });
    m.stderr.on('data', (c: Buffer) => { out += c.toString(); });
    m.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`openfga migrate exited ${code}: ${out}`))));
  });
  const server = await startOpenFga({
    apiToken: key,
    flags: ['--datastore-engine=postgres', `--datastore-uri=${uri}`,
      `--listObjects-deadline=${LIST_DEADLINE_S}s`, `--listUsers-deadline=${LIST_DEADLINE_S}s`, `--request-timeout=${LIST_DEADLINE_S + 5}s`],
  });
  return { server, drop: db.drop };
}

/** One call kind: builds the i-th request of a round (the same for both servers) and checks its answer. */
interface Kind { name: string; path: string; request(r: () => number): unknown; answer(body: any): unknown; same?(body: any): string }

async function main(): Promise<void> {
  const loadStart = load();
  console.log(`openfga-side-by-side: ${TUPLES} tuples, ${ROUNDS} rounds, ≤ ${COUNT} requests or ≤ ${ROUND_S} s per call, server and round, ${CONCURRENCY} in flight; load average at start ${loadStart} (${os.cpus().length} cores)`);
  const { tuples, users, documents } = driveDataset(TUPLES);
  console.log(`dataset: ${tuples.length} tuples, ${users} users, ${documents} documents`);
  const key = randomBytes(18).toString('base64url');
  const fgaPort = await freePort();
  let d: Deployment | undefined;
  let ofga: { server: OpenFgaServer; drop(): Promise<void> } | undefined;
  try {
    d = await startDeployment('all', {
      database: 'postgres', readyTimeoutMs: 120_000,
      flags: ['--rate-limit-rps=0', '--log-level=warn', `--openfga-http-port=${fgaPort}`, `--openfga-authn-preshared-keys=${key}`, `--openfga-list-deadline=${LIST_DEADLINE_S}s`],
    });
    await waitForHttp(`http://127.0.0.1:${fgaPort}/healthz`, 30_000);
    ofga = await startOpenFgaOnPostgres(key);
    const model = transformer.transformDSLToJSONObject(DRIVE_MODEL);
    const gh: Target = { name: 'Gatehouse', base: `http://127.0.0.1:${fgaPort}/stores/${GATEHOUSE_STORE}`, key };
    const store = await (await fetch(`${ofga.server.url}/stores`, {
      method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` }, body: JSON.stringify({ name: 'bench' }),
    })).json() as { id: string };
    const of: Target = { name: 'OpenFGA', base: `${ofga.server.url}/stores/${store.id}`, key };
    for (const t of [gh, of]) await call(t, '/authorization-models', model);

    for (const t of [gh, of]) {
      const s = await loadTuples(t, tuples);
      console.log(`load ${t.name}: ${tuples.length} tuples in ${s.toFixed(1)} s (${Math.round(tuples.length / s)} tuples/s, Write API, 100 per call, 4 in flight)`);
    }

    const user = (r: () => number): string => `user:u${Math.floor(r() * users)}`;
    const doc = (r: () => number): string => `document:d${Math.floor(r() * documents)}`;
    const kinds: Kind[] = [
      { name: 'Check', path: '/check', request: (r) => ({ tuple_key: { user: user(r), relation: 'viewer', object: doc(r) } }), answer: (b) => b.allowed },
      {
        name: 'BatchCheck of 50', path: '/batch-check',
        request: (r) => ({ checks: Array.from({ length: 50 }, (_, i) => ({ tuple_key: { user: user(r), relation: 'viewer', object: doc(r) }, correlation_id: `c${i}` })) }),
        answer: (b) => {
          const res = b.result as Record<string, { allowed?: boolean; error?: unknown }>;
          if (Object.keys(res).length !== 50) throw new Error(`BatchCheck answered ${Object.keys(res).length} results`);
          return Array.from({ length: 50 }, (_, i) => (res[`c${i}`]!.error ? 'error' : res[`c${i}`]!.allowed === true));
        },
      },
      { name: 'ListObjects', path: '/list-objects', request: (r) => ({ user: user(r), relation: 'viewer', type: 'document' }), answer: (b) => (b.objects as string[]).length, same: (b) => [...(b.objects as string[])].sort().join(' ') },
      { name: 'ListUsers', path: '/list-users', request: (r) => ({ object: { type: 'document', id: doc(r).slice('document:'.length) }, relation: 'viewer', user_filters: [{ type: 'user' }] }), answer: (b) => (b.users as unknown[]).length,
        same: (b) => (b.users as Array<{ object?: { type: string; id: string } }>).map((u) => (u.object ? `${u.object.type}:${u.object.id}` : JSON.stringify(u))).sort().join(' ') },
    ];

    // warm-up: the same WARMUP requests per kind on both, answers compared (Check and BatchCheck must agree)
    const tw = performance.now();
    const listDisagreements: string[] = [];
    let capped = 0;
  let itemErrors = 0;
    for (const k of kinds) {
      const r = prng(99);
      for (const body of Array.from({ length: WARMUP }, () => k.request(r))) {
        const [x, y] = [await call(gh, k.path, body), await call(of, k.path, body)];
        const [a, b] = k.same ? [k.same(x), k.same(y)] : [JSON.stringify(k.answer(x)), JSON.stringify(k.answer(y))];
        if (a === b) continue;
        // a batch item one server answered with an error (OpenFGA's check deadline under load) is not compared
        const [ax, ay] = [k.answer(x), k.answer(y)];
        if (Array.isArray(ax) && Array.isArray(ay) && ax.every((v, i) => v === ay[i] || v === 'error' || ay[i] === 'error')) {
          itemErrors += ax.filter((v, i) => v === 'error' || ay[i] === 'error').length;
          continue;
        }
        // both at the 1,000-result cap: each answers the first 1,000 it finds, different subsets of one set
        if (k.same && k.answer(x) === LIST_CAP && k.answer(y) === LIST_CAP) { capped++; continue; }
        // a list may be cut short by OpenFGA at its deadline: reported, not fatal; a check must agree
        if (k.same) listDisagreements.push(`${k.name} ${JSON.stringify(body).slice(0, 200)}: Gatehouse ${k.answer(x)} results, OpenFGA ${k.answer(y)}`);
        else throw new Error(`${k.name} disagrees on ${JSON.stringify(body).slice(0, 300)}: Gatehouse ${a}, OpenFGA ${b}`);
      }
    }
    for (const line of listDisagreements) console.log(`warm-up: lists differ: ${line}`);

    console.log(`warm-up: ${WARMUP} requests per call on each server, answers compared (${listDisagreements.length} lists differ, ${capped} at the cap on both, ${itemErrors} BatchCheck items answered with an error by one server and not compared), in ${((performance.now() - tw) / 1000).toFixed(1)} s`);
    const lat: Record<string, Record<string, number[]>> = {};
    const rate: Record<string, Record<string, number[]>> = {};
    const p50s: Record<string, Record<string, number[]>> = {};
    const sizes: Record<string, Record<string, number[]>> = {};
    const errors: Record<string, Record<string, string[]>> = {};
    for (const k of kinds) for (const rec of [lat, rate, p50s, sizes, errors]) rec[k.name] = { Gatehouse: [], OpenFGA: [] };
    for (let round = 0; round < ROUNDS; round++) {
      for (const k of kinds) {
        const order = round % 2 === 0 ? [gh, of] : [of, gh];
        for (const t of order) {
          const r = prng(1000 + round); // the same request sequence for both servers in a round
          const reqs = Array.from({ length: COUNT }, () => k.request(r));
          const mine: number[] = [];
          const deadline = performance.now() + ROUND_S * 1000;
          const t0 = performance.now();
          await pool(reqs, CONCURRENCY, async (body) => {
            if (performance.now() > deadline) return;
            const s = performance.now();
            let a: unknown;
            try {
              a = k.answer(await call(t, k.path, body));
            } catch (err) {
              // a timeout under load (OpenFGA's 500 deadline_exceeded, Gatehouse's 504) is a result, not a crash
              errors[k.name]![t.name]!.push((err as Error).message.slice(0, 160));
              return;
            }
            mine.push(performance.now() - s);
            if (typeof a === 'number') sizes[k.name]![t.name]!.push(a);
          });
          const secs = (performance.now() - t0) / 1000;
          lat[k.name]![t.name]!.push(...mine);
          rate[k.name]![t.name]!.push(mine.length / secs);
          p50s[k.name]![t.name]!.push(median(mine));
        }
      }
      console.log(`round ${round + 1}/${ROUNDS} done (load ${load()})`);
    }

    console.log(`\n${TUPLES} tuples on PostgreSQL, ${ROUNDS} interleaved rounds, ${CONCURRENCY} in flight, keep-alive fetch for both; load average start ${loadStart}, end ${load()}`);
    console.log('| call | server | requests | errors | p50 ms | p99 ms | req/s (median of rounds) | results per list (median) |');
    console.log('|---|---|---|---|---|---|---|---|');
    for (const k of kinds) {
      for (const name of ['Gatehouse', 'OpenFGA']) {
        const xs = lat[k.name]![name]!;
        const sz = sizes[k.name]![name]!;
        console.log(`| ${k.name} | ${name} | ${xs.length} | ${errors[k.name]![name]!.length} | ${quantile(xs, 0.5).toFixed(2)} | ${quantile(xs, 0.99).toFixed(2)} | ${Math.round(median(rate[k.name]![name]!))} | ${sz.length ? median(sz) : '—'} |`);
      }
    }
    console.log('\n| call | Gatehouse/OpenFGA req/s (median of rounds) | OpenFGA/Gatehouse p50 (median of rounds) | per round (req/s) |');
    console.log('|---|---|---|---|');
    for (const k of kinds) {
      const rr = rate[k.name]!['Gatehouse']!.map((g, i) => g / rate[k.name]!['OpenFGA']![i]!);
      const pr = p50s[k.name]!['OpenFGA']!.map((o, i) => o / p50s[k.name]!['Gatehouse']![i]!);
      for (const name of ['Gatehouse', 'OpenFGA']) if (errors[k.name]![name]!.length) console.log(`(${k.name} on ${name}: first error ${errors[k.name]![name]![0]})`);
      console.log(`| ${k.name} | ${median(rr).toFixed(2)}× | ${median(pr).toFixed(2)}× | ${rr.map((x) => x.toFixed(2)).join(', ')} |`);
    }
  } finally {
    await ofga?.server.stop();
    await ofga?.drop().catch(() => undefined);
    await d?.stop();
  }
}

await main();
