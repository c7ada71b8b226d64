/**
 * @module bench/scim-bench
 * `npm run bench:scim`: SCIM at size (issue 31). One `gatehouse all` on PostgreSQL; an org with a SCIM
 * endpoint and 100,000 provisioned users; then, one request at a time through the gateway:
 * - a filtered `GET /Users` (`userName eq`, and a value path `emails[type eq "work" and value eq …]`)
 *   on random users,
 * - a `PATCH /Users/{id}` (`replace name.givenName`, which writes authn's account and the SCIM view),
 * and prints p50/p99 of each against the 100 ms target.
 *
 * Seeding: the first users are created through the SCIM API (POST /Users); the rest are copies of the
 * first one's rows (authn's account, the membership, the SCIM view and its email row) with fresh ids,
 * user names and emails, written with one INSERT … SELECT per table straight into PostgreSQL — every
 * column as the server wrote it, so the copies are resources like any other (the bench reads and
 * patches them through the API). Options: --users=<n> (100000), --samples=<n> (300).
 * Not a test: it asserts only that every request answered as expected.
 */
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { startDeployment } from '@gatehouse/testing';

const args = Object.fromEntries(process.argv.slice(2).map((a) => a.replace(/^--/, '').split('=')) as Array<[string, string]>);
const USERS = Number(args['users'] ?? 100_000);
const SAMPLES = Number(args['samples'] ?? 300);
const TARGET_MS = 100;

const quantile = (xs: number[], q: number): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))]!;
};

async function main(): Promise<void> {
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

    const pick = (): number => 1 + Math.floor(Math.random() * (USERS - 1));
    const results: Record<string, number[]> = { 'GET /Users?filter=userName eq': [], 'GET /Users?filter=emails[type eq and value eq]': [], 'PATCH /Users/{id} replace name.givenName': [] };
    const ids: string[] = [];
    for (let n = 0; n < SAMPLES + 20; n++) {
      const i = pick();
      const a = await scim('GET', `/Users?filter=${encodeURIComponent(`userName eq "bench-${i}"`)}`);
      if (a.status !== 200 || a.body.totalResults !== 1) throw new Error(`filter userName: ${a.status} ${JSON.stringify(a.body).slice(0, 200)}`);
      const b = await scim('GET', `/Users?filter=${encodeURIComponent(`emails[type eq "work" and value eq "BENCH-${i}@bench.example"]`)}`);
      if (b.status !== 200 || b.body.totalResults !== 1) throw new Error(`filter emails: ${b.status} ${JSON.stringify(b.body).slice(0, 200)}`);
      const id = a.body.Resources[0].id as string;
      const c = await scim('PATCH', `/Users/${id}`, { schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'], Operations: [{ op: 'replace', path: 'name.givenName', value: `G${n}` }] });
      if (c.status !== 200 || c.body.name?.givenName !== `G${n}`) throw new Error(`patch: ${c.status} ${JSON.stringify(c.body).slice(0, 200)}`);
      if (n < 20) continue; // warm-up
      ids.push(id);
      results['GET /Users?filter=userName eq']!.push(a.ms);
      results['GET /Users?filter=emails[type eq and value eq]']!.push(b.ms);
      results['PATCH /Users/{id} replace name.givenName']!.push(c.ms);
    }
    console.log(`\n${SAMPLES} sequential requests each, ${USERS} users in the org, PostgreSQL, one gatehouse all (load ${(await import('node:os')).loadavg().map((l) => l.toFixed(1)).join(' ')})`);
    console.log('| request | p50 ms | p99 ms | target |');
    console.log('|---|---|---|---|');
    for (const [name, xs] of Object.entries(results)) {
      const p50 = quantile(xs, 0.5);
      const p99 = quantile(xs, 0.99);
      console.log(`| ${name} | ${p50.toFixed(1)} | ${p99.toFixed(1)} | < ${TARGET_MS} ms: ${p99 < TARGET_MS ? 'met' : 'missed'} |`);
    }
  } finally {
    await db.end().catch(() => undefined);
    await d.stop();
  }
}

await main();
