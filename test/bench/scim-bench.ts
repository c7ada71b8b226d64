/**
 * @module bench/scim-bench
 * `npm run bench:scim`: SCIM at size (issue 31). One `gatehouse all` on PostgreSQL; an org with a SCIM
 * endpoint and 100,000 provisioned users; then, one request at a time through the gateway:
 * - a filtered `GET /Users` (`userName eq`, and a value path `emails[type eq "work" and value eq …]`)
 *   on random users,
 * - a `PATCH /Users/{id}` (`replace name.givenName`, which writes authn's account and the SCIM view),
 * - on a group of `--group-members` (10,000) of those users, filled through the API (PATCH `add members`,
 *   1,000 values a request), Entra ID's member PATCHes: `add members [{value}]` of one user and `remove
 *   members[value eq "…"]` of the same user (each writes the member tuple in authz, the group row and its
 *   `group.updated`), sent as Entra ID sends them (no query, so the answer lists the members), and Entra's read
 *   `GET /Groups/{id}?excludedAttributes=members`,
 * and prints p50/p99 of each against the 100 ms target, with the load average before and after.
 *
 * Seeding: the first users are created through the SCIM API (POST /Users); the rest are copies of the
 * first one's rows (authn's account, the membership, the SCIM view and its email row) with fresh ids,
 * user names and emails, written with one INSERT … SELECT per table straight into PostgreSQL — every
 * column as the server wrote it, so the copies are resources like any other (the bench reads and
 * patches them through the API). Options: --users=<n> (100000), --samples=<n> (300), --group-members=<n>
 * (10000; 0 skips the group part), --time-limit=<s> (1800: counted from the end of the seeding; the measuring loops stop early past it, and say so).
 * Not a test: it asserts only that every request answered as expected.
 */
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { startDeployment } from '@gatehouse/testing';

const args = Object.fromEntries(process.argv.slice(2).map((a) => a.replace(/^--/, '').split('=')) as Array<[string, string]>);
const USERS = Number(args['users'] ?? 100_000);
const SAMPLES = Number(args['samples'] ?? 300);
const TARGET_MS = 100;
const GROUP_MEMBERS = Number(args['group-members'] ?? 10_000);
const TIME_LIMIT_MS = Number(args['time-limit'] ?? 1800) * 1000;
/** when the measuring loops stop: `--time-limit` after the seeding ended */
let DEADLINE = Infinity;
const load = async (): Promise<string> => (await import('node:os')).loadavg().map((l) => l.toFixed(1)).join(' ');
const GROUP_MODEL = 'model\n  schema 1.1\ntype user\ntype group\n  relations\n    define member: [user, group#member]\n';

const quantile = (xs: number[], q: number): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))]!;
};

async function main(): Promise<void> {
  const loadBefore = await load();
  const d = await startDeployment('all', { database: 'postgres', flags: ['--rate-limit-rps=0'], readyTimeoutMs: 120_000 });
  const db = new pg.Client({ connectionString: d.databaseUrl });
  try {
    // the admin API is CSRF-checked: same-origin requests carry Origin
    const admin = { 'x-service-admin-secret': d.adminSecret, 'content-type': 'application/json', origin: d.url };
    const adminPost = async (path: string, body: unknown): Promise<Record<string, unknown>> => {
      const res = await fetch(`${d.url}${path}`, { method: 'POST', headers: admin, body: JSON.stringify(body) });
      const json = await res.json() as Record<string, unknown>;
      if (res.status !== 200) throw new Error(`${path}: ${res.status} ${JSON.stringify(json)}`);
      return json;
    };
    const org = await adminPost('/v1/admin/create_organization', { name: `bench-${randomUUID().slice(0, 8)}` }) as { id: string };
    const ep = await adminPost('/v1/admin/create_scim_endpoint', { org_id: org.id }) as { token: string };
    const headers = { authorization: `Bearer ${ep.token}`, 'content-type': 'application/scim+json' };
    const scim = async (method: string, path: string, body?: unknown): Promise<{ status: number; body: any; ms: number }> => {
      const t0 = performance.now();
      const res = await fetch(`${d.url}/scim/v2${path}`, { method, headers, ...(body ? { body: JSON.stringify(body) } : {}) });
      const json = await res.json() as unknown;
      return { status: res.status, body: json, ms: performance.now() - t0 };
    };
    const template = await scim('POST', '/Users', {
      schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'], userName: 'bench-0', name: { givenName: 'Bench', familyName: 'User' },
      emails: [{ value: 'bench-0@bench.example', type: 'work', primary: true }],
    });
    if (template.status !== 201) throw new Error(`template user: ${template.status} ${JSON.stringify(template.body)}`);
    const tid = template.body.id as string;

    await db.connect();
    const t0 = performance.now();
    await db.query('create temporary table bench_ids as select i, gen_random_uuid() as uid from generate_series(1, $1::int) i', [USERS - 1]);
    // one copy of each row of the template per id, with every other column as the server wrote it
    const copy = async (table: string, where: string, overrides: string): Promise<void> => {
      await db.query(`insert into ${table} select (jsonb_populate_record(null::${table}, to_jsonb(t) || ${overrides})).* from ${table} t, bench_ids b where ${where}`, [tid]);
    };
    await copy('authn_users', 't.id = $1', `jsonb_build_object('id', b.uid, 'email', 'bench-' || b.i || '@bench.example')`);
    await copy('orgs_members', 't.user_id = $1::text', `jsonb_build_object('id', gen_random_uuid(), 'user_id', b.uid::text)`);
    await copy('orgs_scim_users', 't.user_id = $1::text', `jsonb_build_object('id', gen_random_uuid(), 'user_id', b.uid::text, 'user_name', 'bench-' || b.i, 'user_name_key', 'bench-' || b.i,
      'emails', '[{"value":"bench-' || b.i || '@bench.example","type":"work","primary":true}]')`);
    await copy('orgs_scim_user_values', 't.user_id = $1::text', `jsonb_build_object('id', gen_random_uuid(), 'user_id', b.uid::text, 'value_key', 'bench-' || b.i || '@bench.example')`);
    await db.query('analyze');
    const seededS = (performance.now() - t0) / 1000;
    const total = await scim('GET', '/Users?count=1');
    if (total.body.totalResults !== USERS) throw new Error(`expected ${USERS} users, the server lists ${total.body.totalResults}`);
    console.log(`seeded ${USERS} users (1 through POST /Users, ${USERS - 1} copied in ${seededS.toFixed(1)} s); GET /Users?count=1 → totalResults ${total.body.totalResults}`);

    DEADLINE = Date.now() + TIME_LIMIT_MS;
    const pick = (): number => 1 + Math.floor(Math.random() * (USERS - 1));
    const results: Record<string, number[]> = { 'GET /Users?filter=userName eq': [], 'GET /Users?filter=emails[type eq and value eq]': [], 'PATCH /Users/{id} replace name.givenName': [] };
    const ids: string[] = [];
    let measured = 0;
    for (let n = 0; n < SAMPLES + 20 && Date.now() < DEADLINE; n++) {
      const i = pick();
      const a = await scim('GET', `/Users?filter=${encodeURIComponent(`userName eq "bench-${i}"`)}`);
      if (a.status !== 200 || a.body.totalResults !== 1) throw new Error(`filter userName: ${a.status} ${JSON.stringify(a.body).slice(0, 200)}`);
      const b = await scim('GET', `/Users?filter=${encodeURIComponent(`emails[type eq "work" and value eq "BENCH-${i}@bench.example"]`)}`);
      if (b.status !== 200 || b.body.totalResults !== 1) throw new Error(`filter emails: ${b.status} ${JSON.stringify(b.body).slice(0, 200)}`);
      const id = a.body.Resources[0].id as string;
      const c = await scim('PATCH', `/Users/${id}`, { schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'], Operations: [{ op: 'replace', path: 'name.givenName', value: `G${n}` }] });
      if (c.status !== 200 || c.body.name?.givenName !== `G${n}`) throw new Error(`patch: ${c.status} ${JSON.stringify(c.body).slice(0, 200)}`);
      if (n < 20) continue; // warm-up
      measured++;
      ids.push(id);
      results['GET /Users?filter=userName eq']!.push(a.ms);
      results['GET /Users?filter=emails[type eq and value eq]']!.push(b.ms);
      results['PATCH /Users/{id} replace name.givenName']!.push(c.ms);
    }
    if (GROUP_MEMBERS > 0 && Date.now() < DEADLINE) {
      const model = await fetch(`${d.url}/v1/admin/fga/model`, { method: 'POST', headers: admin, body: JSON.stringify({ dsl: GROUP_MODEL }) });
      if (model.status !== 200) throw new Error(`model: ${model.status}`);
      const g = await scim('POST', '/Groups', { schemas: ['urn:ietf:params:scim:schemas:core:2.0:Group'], displayName: `bench-group-${randomUUID().slice(0, 8)}` });
      if (g.status !== 201) throw new Error(`group: ${g.status} ${JSON.stringify(g.body).slice(0, 200)}`);
      const gid = g.body.id as string;
      const members = (await db.query<{ user_id: string }>('select user_id from orgs_scim_users where org_id = $1 order by created_at, id limit $2', [org.id, GROUP_MEMBERS + SAMPLES + 20])).rows.map((r) => r.user_id);
      const t1 = performance.now();
      for (let i = 0; i < GROUP_MEMBERS; i += 1000) {
        const batch = members.slice(i, Math.min(i + 1000, GROUP_MEMBERS)).map((value) => ({ value }));
        const r = await scim('PATCH', `/Groups/${gid}?excludedAttributes=members`, { schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'], Operations: [{ op: 'add', path: 'members', value: batch }] });
        if (r.status !== 200) throw new Error(`fill: ${r.status} ${JSON.stringify(r.body).slice(0, 200)}`);
      }
      console.log(`group filled with ${GROUP_MEMBERS} members through PATCH add (1,000 a request) in ${((performance.now() - t1) / 1000).toFixed(1)} s`);
      const add = 'PATCH /Groups/{id} add members (1 user), group of ' + GROUP_MEMBERS;
      const remove = 'PATCH /Groups/{id} remove members[value eq] (1 user)';
      const read = 'GET /Groups/{id}?excludedAttributes=members';
      results[add] = [];
      results[remove] = [];
      results[read] = [];
      const outsiders = members.slice(GROUP_MEMBERS);
      for (let n = 0; n < outsiders.length && Date.now() < DEADLINE; n++) {
        const uid = outsiders[n]!;
        const a = await scim('PATCH', `/Groups/${gid}`, { schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'], Operations: [{ op: 'Add', path: 'members', value: [{ value: uid }] }] });
        if (a.status !== 200 || a.body.members?.length !== GROUP_MEMBERS + 1) throw new Error(`add: ${a.status} ${JSON.stringify(a.body).slice(0, 200)}`);
        const r = await scim('PATCH', `/Groups/${gid}`, { schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'], Operations: [{ op: 'Remove', path: `members[value eq "${uid}"]` }] });
        if (r.status !== 200 || r.body.members?.length !== GROUP_MEMBERS) throw new Error(`remove: ${r.status} ${JSON.stringify(r.body).slice(0, 200)}`);
        const c = await scim('GET', `/Groups/${gid}?excludedAttributes=members`);
        if (c.status !== 200 || c.body.members !== undefined) throw new Error(`read: ${c.status}`);
        if (n < 20) continue; // warm-up
        results[add]!.push(a.ms);
        results[remove]!.push(r.ms);
        results[read]!.push(c.ms);
      }
    }
    const timedOut = Date.now() >= DEADLINE ? ' (stopped at --time-limit)' : '';
    console.log(`\n${measured} sequential requests each (user part), ${USERS} users in the org, PostgreSQL, one gatehouse all${timedOut}; load average before ${loadBefore}, after ${await load()}`);
    console.log('| request | p50 ms | p99 ms | target |');
    console.log('|---|---|---|---|');
    for (const [name, xs] of Object.entries(results)) {
      if (xs.length === 0) continue;
      const p50 = quantile(xs, 0.5);
      const p99 = quantile(xs, 0.99);
      console.log(`| ${name} (n=${xs.length}) | ${p50.toFixed(1)} | ${p99.toFixed(1)} | < ${TARGET_MS} ms: p50 ${p50 < TARGET_MS ? 'met' : 'missed'}, p99 ${p99 < TARGET_MS ? 'met' : 'missed'} |`);
    }
  } finally {
    await db.end().catch(() => undefined);
    await d.stop();
  }
}

await main();
