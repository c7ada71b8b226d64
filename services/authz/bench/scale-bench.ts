/**
 * @module scale-bench: the embedded engine at millions of tuples (issue 21 §5; run: `npm run bench:authz:scale -- --scale=1000000`).
 *
 * One SQLite store (better-sqlite3, the SQL store's code path) filled with the GitHub-like dataset of
 * `--scale` tuples (default 1,000,000; users = scale/10, organizations = scale/2,000, 20 teams and 200
 * repositories each), then:
 * - cold start: a fresh replica's first calls of every query kind (check, list_permissions, list_users, expand,
 *   user deletion), started at once, each timed and marked answered during the load (from the store,
 *   through the partial index) or after it; then the full snapshot load the first call started, in seconds;
 * - RSS per million tuples: resident memory after a GC, before and after that load, per 10^6 tuples;
 * - catch-up: a burst of `--burst` tuples (default 10,000, in calls of 100) written to the store as another
 *   replica's writes end (straight to the store: a second engine would hold a second snapshot here);
 *   the time the loaded replica's next check takes (it catches up from the change log first);
 * - check p50/p99 (single `can_read` checks on repositories, half in the user's own organization) and
 *   list_permissions p99 (`can_read` on `repository`, random users and the 1,600-repository power user).
 * `--sqlite-file=<path>` keeps the store in that (new) file instead of in memory, so the process RSS
 * is the replica's, not SQLite's (used at 10M tuples); the generated tuples are dropped after the fill.
 * `--load-only` with `--sqlite-file` of a store an earlier run filled (same `--scale`): no dataset and no
 * fill, only the cold start and the memory of the loaded replica, in a process that never held the
 * generated tuples (the clean RSS figure: a run that generated them keeps V8's freed heap).
 * Not a test: figures depend on the machine and its load (printed first).
 */
import { loadavg } from 'node:os';
import { createEngine, type Engine } from '../src/domain/index.ts';
import { createSqlStore } from '../src/storage/sql/store.ts';
import { openSqlite } from '../test/sql-adapters.ts';
import { GITHUB_MODEL, generateGithubDataset, prng, type Dataset } from './github-dataset.ts';

const arg = (name: string, fallback: number): number => {
  const hit = process.argv.find((a) => a.startsWith(`--${name}=`));
  return hit ? Number(hit.slice(name.length + 3)) : fallback;
};
const pct = (sorted: number[], p: number): number => sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))] ?? NaN;
const ms = (ns: bigint): number => Number(ns) / 1e6;
const fmt = (x: number): string => (x >= 1000 ? `${(x / 1000).toFixed(2)} s` : x >= 1 ? `${x.toFixed(2)} ms` : `${(x * 1000).toFixed(1)} µs`);
const rssMiB = (): number => {
  globalThis.gc?.();
  globalThis.gc?.();
  return process.memoryUsage().rss / 2 ** 20;
};

async function timed<T>(work: () => Promise<T>): Promise<[T, number]> {
  const start = process.hrtime.bigint();
  const out = await work();
  return [out, ms(process.hrtime.bigint() - start)];
}

async function main(): Promise<void> {
  const scale = arg('scale', 1_000_000);
  const burst = arg('burst', 10_000);
  if (!globalThis.gc) console.log('note: run with --expose-gc (the npm script does) for stable RSS figures');
  console.log(`machine: load average ${loadavg().map((x) => x.toFixed(1)).join(' ')} (figures scale with load)`);
  const options = { tuples: scale, users: Math.max(1000, Math.floor(scale / 10)), orgs: Math.max(100, Math.floor(scale / 2000)), teamsPerOrg: 20, reposPerOrg: 200, seed: 42 };
  const file = process.argv.find((a) => a.startsWith('--sqlite-file='))?.slice('--sqlite-file='.length);
  const loadOnly = process.argv.includes('--load-only');
  if (loadOnly && !file) throw new Error('--load-only reads the store an earlier run left in --sqlite-file=<path>');
  const data: Pick<Dataset, 'tuples' | 'orgsOf' | 'powerUser'> = loadOnly ? { tuples: [], orgsOf: new Map(), powerUser: '' } : await (async () => {
    const [generated, genMs] = await timed(async () => generateGithubDataset(options));
    console.log(`dataset: ${generated.tuples.length} tuples (${options.users} users, ${options.orgs} organizations, ${options.orgs * options.reposPerOrg} repositories) in ${fmt(genMs)}`);
    return generated;
  })();

  const db = await openSqlite(file);
  const store = createSqlStore(db.port);
  let total = scale;
  if (!loadOnly) {
    const writer = createEngine({ store });
    await writer.writeModel(GITHUB_MODEL);
    const [, fillMs] = await timed(async () => {
      // 2,500 per call: 7 parameters a tuple stays under SQLite's 32,766 bound variables
      for (let i = 0; i < data.tuples.length; i += 2500) await store.writeTuples(data.tuples.slice(i, i + 2500), []);
    });
    total = data.tuples.length;
    console.log(`store fill: ${total} tuples into SQLite${file ? ` (${file})` : ''} in ${fmt(fillMs)}`);
    data.tuples.length = 0; // a replica never holds the generated list: only the snapshot counts
  }

  const before = rssMiB();
  const replica: Engine = createEngine({ store });
  // the first call starts the full load; each kind is asked while it runs, one after the other
  const cold = prng(11);
  const coldUser = `user:u${Math.floor(cold() * options.users)}`;
  const coldOrg = (data.orgsOf.get(coldUser)?.[0] ?? 'organization:o0').slice('organization:'.length);
  const coldRepo = `repository:${coldOrg}-r${Math.floor(cold() * options.reposPerOrg)}`;
  const coldCalls: Array<[string, () => Promise<string>]> = [
    ['check can_read', async () => `allowed ${(await replica.check(coldUser, [{ relation: 'can_read', object: coldRepo }]))[0]?.allowed}`],
    ['list_permissions can_read on repository', async () => `${(await replica.listPermissions(coldUser, { relation: 'can_read', object_type: 'repository' })).permissions.length} objects`],
    ['list_users can_read of a repository', async () => `${(await replica.listUsers({ object: coldRepo, relation: 'can_read', user_type: 'user' })).users.length} users`],
    ['expand reader of a repository', async () => `${(await replica.expand({ object: coldRepo, relation: 'reader' })).tree.length} bytes`],
    ['delete_user_tuples', async () => `${await replica.deleteUserTuples(`u${Math.floor(cold() * options.users)}`)} tuples deleted`],
  ];
  const coldStart = process.hrtime.bigint();
  for (const [name, call] of coldCalls) {
    const [what, t] = await timed(call);
    const during = replica.stats().full_loads === 0;
    console.log(`cold start: ${name} answered in ${fmt(t)} (${what}), ${during ? 'during the load, from the store' : 'after the load'}`);
  }
  const { partial_checks, partial_lists, partial_fetches, partial_waits } = replica.stats();
  console.log(`cold start: partial index: ${partial_checks} checks and ${partial_lists} lists/expands answered, ${partial_fetches} objects and users read, ${partial_waits} calls waited for the load`);
  await replica.warm();
  const loadMs = ms(process.hrtime.bigint() - coldStart);
  const after = rssMiB();
  const perMillion = ((after - before) * 1e6) / total;
  console.log(`cold load: ${replica.stats().tuples} tuples in ${fmt(loadMs)} (${((total / loadMs) * 1000).toFixed(0)} tuples/s; started by the first call above)`);
  console.log(`memory: RSS ${before.toFixed(0)} MiB before the load, ${after.toFixed(0)} MiB after: ${perMillion.toFixed(0)} MiB per million tuples (process RSS ${after.toFixed(0)} MiB${file ? ', SQLite on disk' : ' incl. the in-memory SQLite'})`);
  if (loadOnly) {
    await db.close();
    return;
  }

  const rnd = prng(7);
  const pick = (n: number): number => Math.floor(rnd() * n);
  const sample = (): { user: string; object: string } => {
    const u = `user:u${pick(options.users)}`;
    const org = rnd() < 0.5 ? (data.orgsOf.get(u)?.[0] ?? 'organization:o0').slice('organization:'.length) : `o${pick(options.orgs)}`;
    return { user: u, object: `repository:${org}-r${pick(options.reposPerOrg)}` };
  };

  // catch-up: a burst written through another replica, then the loaded replica's next request
  const burstTuples = Array.from({ length: burst }, (_, i) => ({ user: `user:burst${i}`, relation: 'reader', object: `repository:o${i % options.orgs}-r${i % options.reposPerOrg}` }));
  const [, burstMs] = await timed(async () => {
    // straight to the store, as another replica's validated write ends: an engine here would load a second
    // full snapshot into this process (at 10M tuples that alone passed a 12 GiB RSS watchdog)
    for (let i = 0; i < burstTuples.length; i += 100) await store.writeTuples(burstTuples.slice(i, i + 100), []);
  });
  const probe = burstTuples[burstTuples.length - 1]!;
  const [seen, catchMs] = await timed(() => replica.check(probe.user, [{ relation: 'can_read', object: probe.object }]));
  console.log(`catch-up: burst of ${burst} tuples written in ${fmt(burstMs)}; the other replica's next check caught up and answered in ${fmt(catchMs)} (allowed: ${seen[0]?.allowed})`);

  for (let i = 0; i < 5000; i++) {
    const s = sample();
    await replica.check(s.user, [{ relation: 'can_read', object: s.object }]);
  }
  const checks: number[] = [];
  for (let i = 0; i < 50_000; i++) {
    const s = sample();
    const [, t] = await timed(() => replica.check(s.user, [{ relation: 'can_read', object: s.object }]));
    checks.push(t);
  }
  checks.sort((a, b) => a - b);
  console.log(`check (single can_read, 50,000 calls): p50 ${fmt(pct(checks, 50))}, p99 ${fmt(pct(checks, 99))}, max ${fmt(checks[checks.length - 1]!)}`);

  const lists: number[] = [];
  let powerCount = 0;
  for (let i = 0; i < 200; i++) {
    const user = i % 10 === 0 ? data.powerUser : `user:u${pick(options.users)}`;
    const [res, t] = await timed(() => replica.listPermissions(user, { relation: 'can_read', object_type: 'repository' }));
    if (user === data.powerUser) powerCount = res.permissions.length;
    lists.push(t);
  }
  lists.sort((a, b) => a - b);
  console.log(`list_permissions (can_read on repository, 200 calls, 1 in 10 by the power user with ${powerCount} objects): p50 ${fmt(pct(lists, 50))}, p99 ${fmt(pct(lists, 99))}`);
  const final = rssMiB();
  console.log(`memory ceiling: process RSS ${final.toFixed(0)} MiB at the end; snapshot ≈ ${perMillion.toFixed(0)} MiB per million tuples`);
  await db.close();
}

await main();
