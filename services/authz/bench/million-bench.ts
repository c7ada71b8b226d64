/**
 * @module million-bench: the engine's list queries and PostgreSQL writes at one million tuples (issue 38 §1; run:
 * `npm run bench:authz:1m [-- --scale=1000000 --only=lists|writes --lists=200 --write-tuples=20000]`).
 *
 * Lists: the GitHub-like dataset of `--scale` tuples (`github-dataset.ts`) in a memory store, one replica
 * loaded from it; then `--lists` list_permissions calls (`can_read` on `repository`, 1 in 10 by the power user
 * who reads 1,600 repositories, the others random users) and as many list_users calls (`user` related to a
 * random repository by `can_read`, and by `reader`), each timed by wall clock and by this thread's CPU
 * (`process.threadCpuUsage`), so a loaded machine shows in the wall figures only.
 *
 * Writes: the same dataset in a fresh PostgreSQL database through the production adapter (`@gatehouse/db`,
 * `sqlPortOf`), two replicas each with its own LISTEN/NOTIFY channel as two processes have; `--write-tuples`
 * new tuples written through replica A in calls of 100 with 4 calls in flight; after each call returns,
 * replica B's next check must allow that call's last tuple (every replica consistent on its next request:
 * a stale answer stops the bench). Prints tuples/s and the per-call latency.
 *
 * Not a test: the figures depend on the machine and its load (printed first).
 */
import { loadavg } from 'node:os';
import { createPostgresInvalidation } from '@gatehouse/auth';
import { newEnvelope } from '@gatehouse/bus';
import { createScratchDatabase, openDatabase } from '@gatehouse/db';
import { createLogger } from '@gatehouse/observability';
import { createEngine, type Engine } from '../src/domain/index.ts';
import { createMemoryStore } from '../src/storage/memory.ts';
import { publishingStore } from '../src/storage/notify.ts';
import { fgaMigrations, sqlPortOf } from '../src/storage/sql/db-port.ts';
import { createSqlStore } from '../src/storage/sql/store.ts';
import { withTxEvents, type TxEvents } from '../src/storage/tx-events.ts';
import { generateGithubDataset, prng, type Dataset } from './github-dataset.ts';

const arg = (name: string, fallback: number): number => {
  const hit = process.argv.find((a) => a.startsWith(`--${name}=`));
  return hit ? Number(hit.slice(name.length + 3)) : fallback;
};
const only = process.argv.find((a) => a.startsWith('--only='))?.slice('--only='.length) ?? 'all';
const pct = (sorted: number[], p: number): number => sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))] ?? NaN;
const fmt = (x: number): string => (x >= 1000 ? `${(x / 1000).toFixed(2)} s` : x >= 1 ? `${x.toFixed(2)} ms` : `${(x * 1000).toFixed(1)} µs`);
const load = (): string => loadavg().map((x) => x.toFixed(1)).join(' ');

/** Wall and thread-CPU milliseconds of `work`. */
async function timed<T>(work: () => Promise<T>): Promise<{ out: T; wall: number; cpu: number }> {
  const c0 = process.threadCpuUsage();
  const t0 = process.hrtime.bigint();
  const out = await work();
  const wall = Number(process.hrtime.bigint() - t0) / 1e6;
  const c = process.threadCpuUsage(c0);
  return { out, wall, cpu: (c.user + c.system) / 1000 };
}

/** `p50/p99` of wall and CPU times. */
function summary(runs: Array<{ wall: number; cpu: number }>): string {
  const wall = runs.map((r) => r.wall).sort((a, b) => a - b);
  const cpu = runs.map((r) => r.cpu).sort((a, b) => a - b);
  return `wall p50 ${fmt(pct(wall, 50))}, p99 ${fmt(pct(wall, 99))}; CPU p50 ${fmt(pct(cpu, 50))}, p99 ${fmt(pct(cpu, 99))}`;
}

async function lists(data: Dataset, calls: number): Promise<void> {
  const store = createMemoryStore();
  const writer = createEngine({ store });
  await writer.writeModel(data.model);
  for (let i = 0; i < data.tuples.length; i += 10_000) await store.writeTuples(data.tuples.slice(i, i + 10_000), []);
  const replica: Engine = createEngine({ store });
  const warm = await timed(() => replica.warm());
  console.log(`lists: ${replica.stats().tuples} tuples loaded into a replica from a memory store in ${fmt(warm.wall)} (load average ${load()})`);
  const { options } = data;
  const rnd = prng(7);
  const pick = (n: number): number => Math.floor(rnd() * n);
  // warm-up: lazily built structures and the JIT
  for (let i = 0; i < 20; i++) await replica.listPermissions(i % 10 === 0 ? data.powerUser : `user:u${pick(options.users)}`, { relation: 'can_read', object_type: 'repository' });
  const perms: Array<{ wall: number; cpu: number }> = [];
  const power: Array<{ wall: number; cpu: number }> = [];
  let powerCount = 0;
  for (let i = 0; i < calls; i++) {
    const user = i % 10 === 0 ? data.powerUser : `user:u${pick(options.users)}`;
    const r = await timed(() => replica.listPermissions(user, { relation: 'can_read', object_type: 'repository' }));
    if (user === data.powerUser) {
      powerCount = r.out.permissions.length;
      power.push(r);
    }
    perms.push(r);
  }
  console.log(`list_permissions can_read on repository (${calls} calls, 1 in 10 by the power user with ${powerCount} objects): ${summary(perms)}`);
  console.log(`  the power user's calls alone: ${summary(power)}`);
  for (const relation of ['can_read', 'reader']) {
    const repo = (): string => `repository:o${pick(options.orgs)}-r${pick(options.reposPerOrg)}`;
    for (let i = 0; i < 20; i++) await replica.listUsers({ object: repo(), relation, user_type: 'user' });
    const runs: Array<{ wall: number; cpu: number }> = [];
    let answered = 0;
    let truncated = 0;
    for (let i = 0; i < calls; i++) {
      const r = await timed(() => replica.listUsers({ object: repo(), relation, user_type: 'user' }));
      answered += r.out.users.length;
      if (r.out.truncated) truncated++;
      runs.push(r);
    }
    console.log(`list_users user on repository#${relation} (${calls} calls, ${(answered / calls).toFixed(0)} users per answer, ${truncated} truncated at 1,000): ${summary(runs)}`);
  }
}

/** One write path's run: `count` new tuples through `a` in calls of 100, 4 in flight, each checked on `b` next. */
async function writeRun(label: string, a: Engine, b: Engine, data: Dataset, tag: string, count: number): Promise<void> {
  const { options } = data;
  const batches = Array.from({ length: Math.ceil(count / 100) }, (_, k) =>
    Array.from({ length: 100 }, (_, i) => ({ user: `user:${tag}${k}-${i}`, relation: 'reader', object: `repository:o${(k * 100 + i) % options.orgs}-r${i % options.reposPerOrg}` })));
  let next = 0;
  let stale = 0;
  const staleAt: number[] = [];
  const calls: number[] = [];
  const worker = async (): Promise<void> => {
    for (;;) {
      const k = next++;
      if (k >= batches.length) return;
      const batch = batches[k]!;
      const t0 = process.hrtime.bigint();
      // as the WriteTuples RPC does: the audit event commits with the write (the authz outbox)
      const events: TxEvents = { make: () => [newEnvelope('audit.recorded', 'authz', { action: 'admin.fga_tuples_written', tuple_count: batch.length })], written: false };
      await withTxEvents(events, () => a.writeTuples(batch));
      calls.push(Number(process.hrtime.bigint() - t0) / 1e6);
      const last = batch[batch.length - 1]!;
      const [seen] = await b.check(last.user, [{ relation: 'can_read', object: last.object }]);
      if (!seen?.allowed) {
        stale++;
        staleAt.push(k);
      }
    }
  };
  const run = await timed(() => Promise.all([worker(), worker(), worker(), worker()]));
  calls.sort((x, y) => x - y);
  console.log(`  ${label}: ${count} tuples in ${batches.length} calls of 100, 4 in flight: ${fmt(run.wall)}, ${((count / run.wall) * 1000).toFixed(0)} tuples/s; `
    + `call p50 ${fmt(pct(calls, 50))}, p99 ${fmt(pct(calls, 99))}; bench process CPU ${fmt(run.cpu)} (${((run.cpu / count) * 1000).toFixed(1)} µs per tuple, both replicas)`);
  console.log(`    replica B's next check after each call: ${stale === 0 ? 'every one allowed the call\'s last tuple' : `${stale} STALE answers (calls ${staleAt.join(', ')})`} (load average ${load()})`);
  if (stale > 0) process.exitCode = 1;
}

async function writes(data: Dataset, count: number, paths: string[]): Promise<void> {
  const logger = createLogger('silent');
  const scratch = await createScratchDatabase('postgres');
  const opened: Array<{ close(): Promise<unknown> }> = [];
  try {
    /** A replica as a process runs one; `statement: false` hides the driver's prepare, so writes take the transaction path. */
    const replica = async (statement = true): Promise<Engine> => {
      const db = await openDatabase(scratch.options, { service: 'authz', entities: [], migrations: fgaMigrations }, { logger });
      const channel = createPostgresInvalidation({ connectionString: scratch.options.url! });
      opened.push(channel, db);
      const port = sqlPortOf(db);
      const sql = createSqlStore(statement ? port : { ...port, prepare: undefined }, { externalVersion: () => channel.version('authz'), outboxTable: db.outbox.table });
      return createEngine({ store: publishingStore(sql, () => channel.publish('authz')) });
    };
    const b = await replica();
    await b.writeModel(data.model);
    // the fill goes straight to a store of its own (no notifications), in calls of 10,000
    const fillDb = await openDatabase(scratch.options, { service: 'authz', entities: [], migrations: fgaMigrations }, { logger });
    opened.push(fillDb);
    const fill = createSqlStore(sqlPortOf(fillDb));
    const filled = await timed(async () => {
      for (let i = 0; i < data.tuples.length; i += 10_000) await fill.writeTuples(data.tuples.slice(i, i + 10_000), []);
    });
    console.log(`writes: ${data.tuples.length} tuples filled into PostgreSQL in ${fmt(filled.wall)} (load average ${load()})`);
    const warmB = await timed(() => b.warm());
    console.log(`  replica B loaded in ${fmt(warmB.wall)}`);
    for (const path of paths) {
      const a = await replica(path === 'statement');
      const warmA = await timed(() => a.warm());
      // each channel hears the other's heartbeat, as two running processes do
      await new Promise((r) => setTimeout(r, 1500));
      console.log(`  replica A (${path} path) loaded in ${fmt(warmA.wall)}`);
      await writeRun(path === 'statement' ? 'one prepared statement per call' : 'a transaction of five statements per call', a, b, data, path.slice(0, 2), count);
    }
  } finally {
    for (const o of opened.reverse()) await o.close().catch(() => undefined);
    await scratch.drop();
  }
}

const scale = arg('scale', 1_000_000);
console.log(`machine: load average ${load()} (2 cores shared; CPU figures are this thread's)`);
const data = generateGithubDataset({ tuples: scale, users: Math.max(1000, Math.floor(scale / 10)), orgs: Math.max(100, Math.floor(scale / 2000)), teamsPerOrg: 20, reposPerOrg: 200, seed: 42 });
if (only === 'all' || only === 'lists') await lists(data, arg('lists', 200));
if (only === 'all' || only === 'writes') {
  const paths = (process.argv.find((a) => a.startsWith('--paths='))?.slice('--paths='.length) ?? 'transaction,statement').split(',');
  await writes(data, arg('write-tuples', 20_000), paths);
}
