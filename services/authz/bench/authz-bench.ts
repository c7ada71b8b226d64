/** @module authz-bench: in-process engine benchmark at 200,000 tuples (run: npx node services/authz/bench/authz-bench.ts). */
import { createEngine } from '../src/domain/index.ts';
import type { Engine } from '../src/domain/index.ts';
import { createMemoryStore } from '../src/storage/memory.ts';
import { createSqlStore } from '../src/storage/sql/store.ts';
import { loadavg } from 'node:os';
import { openSqlite } from '../test/sql-adapters.ts';
import { DEFAULT_DATASET, generateGithubDataset, prng } from './github-dataset.ts';
import type { Dataset } from './github-dataset.ts';
import { TupleIndex } from '../src/domain/tuple-index.ts';
import { addParsed } from '../src/domain/snapshot.ts';
import { parseTupleForm } from '../src/domain/tuple.ts';

const micros = (ns: bigint): number => Number(ns) / 1000;
const pct = (sorted: number[], p: number): number => sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))] ?? NaN;
const fmt = (us: number): string => (us >= 1000 ? `${(us / 1000).toFixed(2)} ms` : `${us.toFixed(1)} µs`);

/**
 * The least a first-time check on a repository the process has not touched reads, timed on its own: a
 * denied `can_read` must at least look for the subject in the repository's five role buckets and in its
 * organization's member and admin buckets (the team memberships behind them come on top). Index lookups
 * only, over an index of the dataset built here, 100 repositories anywhere per call, 2,000 calls; p50 µs
 * per call. A lower bound on what 100 first-time checks cost this index, whatever the resolution does.
 */
function firstTimeReadFloor(data: Dataset): number {
  const index = new TupleIndex();
  for (const t of data.tuples) addParsed(index, parseTupleForm(t));
  const roles = ['reader', 'writer', 'maintainer', 'admin', 'blocked'];
  const { users, orgs, reposPerOrg } = data.options;
  const times: number[] = [];
  let seen = 0;
  for (let i = 0; i < 2000; i++) {
    const rnd = prng(1000 + i);
    const pick = (n: number): number => Math.floor(rnd() * n);
    const user = `user:u${pick(users)}`;
    const objects = Array.from({ length: 100 }, () => `repository:o${pick(orgs)}-r${pick(reposPerOrg)}`);
    const start = process.hrtime.bigint();
    for (const object of objects) {
      const node = index.node(object);
      if (node === undefined) continue;
      for (const role of roles) if (node.rels.get(role)?.users.has(user)) seen++;
      for (const org of node.rels.get('owner')?.users ?? []) {
        const o = index.node(org);
        if (o?.rels.get('member')?.users.has(user) || o?.rels.get('admin')?.users.has(user)) seen++;
      }
    }
    times.push(micros(process.hrtime.bigint() - start));
  }
  if (seen < 0) console.log(seen); // keeps the reads observable
  return pct(times.sort((a, b) => a - b), 50);
}

async function main(): Promise<void> {
  console.log(`machine: load average ${loadavg().map((x) => x.toFixed(1)).join(' ')} (figures scale with load)`);
  let t0 = process.hrtime.bigint();
  const data = generateGithubDataset(DEFAULT_DATASET);
  console.log(`dataset: ${data.tuples.length} tuples (${data.options.users} users, ${data.options.orgs} orgs, ${data.options.orgs * data.options.teamsPerOrg} teams, ${data.options.orgs * data.options.reposPerOrg} repositories) generated in ${fmt(micros(process.hrtime.bigint() - t0))}`);

  const store = createMemoryStore();
  const writer = createEngine({ store });
  await writer.writeModel(data.model);
  t0 = process.hrtime.bigint();
  for (let i = 0; i < data.tuples.length; i += 100) await writer.writeTuples(data.tuples.slice(i, i + 100));
  console.log(`write: ${data.tuples.length} tuples in batches of 100 (validated, indexed) in ${fmt(micros(process.hrtime.bigint() - t0))}`);

  const engine: Engine = createEngine({ store }); // a second replica: loads the whole store on first use
  t0 = process.hrtime.bigint();
  await engine.warm();
  console.log(`snapshot load: ${data.tuples.length} tuples into in-memory indexes in ${fmt(micros(process.hrtime.bigint() - t0))}`);
  globalThis.gc?.();
  console.log(`memory: heap used ${(process.memoryUsage().heapUsed / 2 ** 20).toFixed(0)} MiB with the dataset, the memory store and two engine snapshots`);

  const rnd = prng(7);
  const pick = (n: number): number => Math.floor(rnd() * n);
  const { users, orgs, reposPerOrg } = data.options;
  const sample = (): { user: string; object: string } => {
    const u = `user:u${pick(users)}`;
    if (rnd() < 0.5) {
      const org = data.orgsOf.get(u)?.[0] ?? 'organization:o0';
      return { user: u, object: `repository:${org.slice('organization:'.length)}-r${pick(reposPerOrg)}` };
    }
    return { user: u, object: `repository:o${pick(orgs)}-r${pick(reposPerOrg)}` };
  };

  for (let i = 0; i < 5000; i++) {
    const s = sample();
    await engine.check(s.user, [{ relation: 'can_read', object: s.object }]);
  }
  const N = 50_000;
  const single: number[] = [];
  let allowed = 0;
  for (let i = 0; i < N; i++) {
    const s = sample();
    const start = process.hrtime.bigint();
    const [r] = await engine.check(s.user, [{ relation: 'can_read', object: s.object }]);
    single.push(micros(process.hrtime.bigint() - start));
    if (r?.allowed) allowed++;
  }
  const sortedSingle = [...single].sort((a, b) => a - b);
  console.log(`check (1 per call, ${N} calls, ${((allowed * 100) / N).toFixed(0)}% allowed): p50 ${fmt(pct(sortedSingle, 50))}, p99 ${fmt(pct(sortedSingle, 99))}, max ${fmt(sortedSingle[sortedSingle.length - 1] ?? NaN)}`);

  // Cold: the first time this subject asks about these objects. Warm: the same question again, answered
  // from the subject's remembered resolver (the engine keeps them until the snapshot changes).
  const B = 2000;
  const cold1: number[] = [];
  const cold100: number[] = [];
  const warm1: number[] = [];
  const warm100: number[] = [];
  for (let i = 0; i < B; i++) {
    const s = sample();
    const org = s.object.slice('repository:'.length).split('-')[0] ?? 'o0';
    // 101 distinct repositories (7 is prime to 200): the 1-check call asks the last, the 100-check call the
    // others, so both are first-time for this call's subject
    const all = Array.from({ length: 101 }, (_, k) => ({ relation: k % 2 ? 'can_read' : 'writer', object: `repository:${org}-r${(k * 7 + i) % reposPerOrg}` }));
    const checks = all.slice(0, 100);
    const timed = async (list: typeof checks, into: number[]): Promise<void> => {
      const start = process.hrtime.bigint();
      await engine.check(s.user, list);
      into.push(micros(process.hrtime.bigint() - start));
    };
    await timed([all[100]!], cold1);
    await timed(checks, cold100);
    await timed(checks, warm100);
    await timed([checks[0]!], warm1);
  }
  const p50 = (xs: number[]): number => pct([...xs].sort((a, b) => a - b), 50);
  console.log(`batch, cold: 100-check call p50 ${fmt(p50(cold100))} vs 1-check call p50 ${fmt(p50(cold1))}: ${(p50(cold100) / p50(cold1)).toFixed(1)}x, ${(p50(cold100) / 100).toFixed(2)} µs per check`);
  const floor = firstTimeReadFloor(data);
  console.log(`first-time floor: the tuple reads alone of 100 first-time checks on repositories anywhere (each repository's five role buckets, its organization's member and admin buckets; no team, no resolution, no memo): p50 ${fmt(floor)} per 100 checks, ${(floor / 100).toFixed(2)} µs per check`);
  console.log(`batch, warm (asked before, snapshot unchanged): 100-check call p50 ${fmt(p50(warm100))} vs 1-check call p50 ${fmt(p50(warm1))}: ${(p50(warm100) / p50(warm1)).toFixed(1)}x, ${(p50(warm100) / 100).toFixed(2)} µs per check`);

  // A listing page: one user, can_read on 100 repositories of their own organization (shared memo across the batch).
  const page: number[] = [];
  for (let i = 0; i < 1000; i++) {
    const u = `user:u${pick(users)}`;
    const org = (data.orgsOf.get(u)?.[0] ?? 'organization:o0').slice('organization:'.length);
    const checks = Array.from({ length: 100 }, (_, k) => ({ relation: 'can_read', object: `repository:${org}-r${(k + i) % reposPerOrg}` }));
    const start = process.hrtime.bigint();
    await engine.check(u, checks);
    page.push(micros(process.hrtime.bigint() - start));
  }
  const sp = page.sort((a, b) => a - b);
  console.log(`batch, listing page (can_read on 100 repositories of the user's organization): p50 ${fmt(pct(sp, 50))}, p99 ${fmt(pct(sp, 99))}; ${(pct(sp, 50) / pct(sortedSingle, 50)).toFixed(1)}x the single-check p50`);

  const times: number[] = [];
  let count = 0;
  for (let i = 0; i < 20; i++) {
    const start = process.hrtime.bigint();
    const res = await engine.listPermissions(data.powerUser, { relation: 'can_read', object_type: 'repository' });
    times.push(micros(process.hrtime.bigint() - start));
    count = res.permissions.length;
  }
  const st = [...times].sort((a, b) => a - b);
  console.log(`list objects (${data.powerUser} can_read repository): ${count} objects, p50 ${fmt(pct(st, 50))}, max ${fmt(st[st.length - 1] ?? NaN)}`);

  const start = process.hrtime.bigint();
  const all = await engine.listPermissions(data.powerUser, {});
  console.log(`list_permissions (${data.powerUser}, every type and relation): ${all.permissions.length} entries, truncated=${all.truncated}, in ${fmt(micros(process.hrtime.bigint() - start))}`);
  const sqlite = await openSqlite();
  const sqlStore = createSqlStore(sqlite.port);
  const sqlEngine = createEngine({ store: sqlStore });
  await sqlEngine.writeModel(data.model);
  for (let i = 0; i < data.tuples.length; i += 1000) await sqlStore.writeTuples(data.tuples.slice(i, i + 1000), []);
  t0 = process.hrtime.bigint();
  await sqlEngine.warm();
  const sqlLoad = micros(process.hrtime.bigint() - t0);
  const sqlTimes: number[] = [];
  for (let i = 0; i < 20_000; i++) {
    const s = sample();
    const start = process.hrtime.bigint();
    await sqlEngine.check(s.user, [{ relation: 'can_read', object: s.object }]);
    sqlTimes.push(micros(process.hrtime.bigint() - start));
  }
  const sq = sqlTimes.sort((a, b) => a - b);
  console.log(`check over the SQLite store (snapshot load ${fmt(sqlLoad)}; test adapter, one revision query per call: production SQLite skips it via PRAGMA data_version): p50 ${fmt(pct(sq, 50))}, p99 ${fmt(pct(sq, 99))}`);
  await sqlite.close();

  const lu = process.hrtime.bigint();
  const usersOf = await engine.listUsers({ object: 'repository:o0-r0', relation: 'can_read', user_type: 'user' });
  console.log(`list users (repository:o0-r0 can_read user): ${usersOf.users.length} users, truncated=${usersOf.truncated}, in ${fmt(micros(process.hrtime.bigint() - lu))}`);
}

await main();
