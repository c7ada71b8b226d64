/**
 * `npm run test:fga-cli`: OpenFGA's own `fga` CLI (github.com/openfga/cli, built by
 * scripts/install-fga-cli.sh) against the authz service's OpenFGA HTTP API (issue 36). A system test run
 * on demand, not part of `npm test`: the CLI takes minutes to build cold.
 *
 * Starts Gatehouse all-in-one on 127.0.0.1 (SQLite) with the OpenFGA HTTP listener on
 * (`--openfga-http-port`), twice: with `--openfga-authn-method=none`, and with a preshared key that the CLI
 * presents with `--api-token` (without it, and with another key, the CLI must fail with OpenFGA's 401
 * codes). In each it runs, as a user runs the CLI, and asserts stdout and the exit status of:
 * `fga store create` (with `--model`, and bare), `fga store get` / `list`, `fga model write` / `get` /
 * `list`, `fga tuple write` (plain and with a condition), `fga query check` (allowed and denied, with
 * contextual tuples and a condition's context), `fga query list-objects`, `fga query list-users`,
 * `fga query expand`, `fga tuple read`, `fga tuple changes`, `fga tuple delete`, `fga model test
 * --tests test/fga-cli/passing.fga.yaml` (check, list_objects and list_users assertions; exit 0) and
 * `--tests test/fga-cli/failing.fga.yaml` (one wrong assertion: exit 1), `fga tuple write|delete --file`
 * of a CSV file, `fga query check --consistency`, `fga query list-relations`, `fga tuple changes --type` /
 * `--start-time`, `fga store import` of a store file and `fga store export` of it, and `fga store delete`.
 * With the preshared key, the same again with `--api-url` the gateway's public URL
 * (`--gateway-openfga-url` routes `/stores` to the listener). Prints each step and a summary; exits 1 on
 * the first failed assertion.
 *
 * Usage: `npm run test:fga-cli` (`node test/fga-cli/fga-cli-system.ts`; builds the CLI first when missing).
 */
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort, startDeployment, waitForHttp, type Deployment } from '@gatehouse/testing';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.resolve(HERE, '../..');
const FGA = path.join(ROOT, '.tools/bin/fga');
/** Gatehouse's own store in the OpenFGA API (a fixed ULID on every installation). */
const GATEHOUSE_STORE_ID = '01JDQ7GATEHSE0000000000000';
const ULID = /^[0-9A-HJKMNP-TV-Z]{26}$/;
const started = Date.now();
let commands = 0;

function step(text: string): void {
  process.stdout.write(`[test:fga-cli ${((Date.now() - started) / 1000).toFixed(1)} s] ${text}\n`);
}

/** One run of the CLI: its exit status, stdout and stderr. */
interface Run { code: number; stdout: string; stderr: string }

/**
 * Runs `fga args…` with only `env` in its environment (the CLI reads FGA_* variables and a
 * ~/.fga.yaml: an empty HOME keeps the caller's out). Never throws on a non-zero exit.
 */
function fga(args: string[], env: Record<string, string>): Run {
  commands++;
  const r = spawnSync(FGA, args, { encoding: 'utf8', timeout: 60_000, env: { HOME: env.HOME ?? tmpdir(), ...env } });
  return { code: r.status ?? -1, stdout: r.stdout ?? '', stderr: r.stderr ?? '' };
}

/** The JSON the CLI printed, after asserting it exited 0. */
function json(label: string, r: Run): Record<string, unknown> {
  assert.equal(r.code, 0, `${label}: exit ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
  try {
    return JSON.parse(r.stdout) as Record<string, unknown>;
  } catch {
    throw new Error(`${label}: stdout is not JSON: ${r.stdout}\nstderr: ${r.stderr}`);
  }
}

const sortKeys = (tuples: Array<{ key: { user: string; relation: string; object: string } }>): string[] =>
  tuples.map((t) => `${t.key.user} ${t.key.relation} ${t.key.object}`).sort();

/** Everything the CLI does against one Gatehouse; `token` is the preshared key it presents, if any. */
async function scenario(label: string, apiUrl: string, token: string | null, work: string): Promise<string[]> {
  const done: string[] = [];
  const home = mkdtempSync(path.join(work, 'home-'));
  const env: Record<string, string> = { HOME: home, FGA_API_URL: apiUrl, ...(token ? { FGA_API_TOKEN: token } : {}) };
  const run = (...args: string[]): Run => fga(args, env);
  const ok = (what: string): void => {
    done.push(what);
    step(`${label}: ${what}`);
  };

  // store create with --model: the store, then its model, in one command
  const created = json('store create', run('store', 'create', '--name', `cli-${label}`, '--model', path.join(HERE, 'model.fga')));
  const store = created.store as { id: string; name: string; created_at: string };
  assert.match(store.id, ULID);
  assert.equal(store.name, `cli-${label}`);
  const firstModel = (created.model as { authorization_model_id: string }).authorization_model_id;
  assert.match(firstModel, ULID);
  ok(`fga store create --name cli-${label} --model model.fga → store ${store.id}, model ${firstModel}`);
  const s = ['--store-id', store.id];

  const got = json('store get', run('store', 'get', ...s));
  assert.deepEqual([got.id, got.name], [store.id, `cli-${label}`]);
  const listed = json('store list', run('store', 'list'));
  const ids = (listed.stores as Array<{ id: string }>).map((x) => x.id);
  assert.ok(ids.includes(store.id) && ids.includes(GATEHOUSE_STORE_ID), `store list: ${ids.join(', ')}`);
  ok('fga store get / fga store list: the new store and Gatehouse\'s own');

  // model write: a second version becomes the latest
  const written = json('model write', run('model', 'write', ...s, '--file', path.join(HERE, 'model.fga')));
  const model = written.authorization_model_id as string;
  assert.match(model, ULID);
  assert.notEqual(model, firstModel);
  const models = json('model list', run('model', 'list', ...s));
  assert.deepEqual((models.authorization_models as Array<{ id: string }>).map((m) => m.id), [model, firstModel]);
  const dsl = run('model', 'get', ...s, '--format', 'fga');
  assert.equal(dsl.code, 0, dsl.stderr);
  assert.match(dsl.stdout, /define viewer: \[user, user:\*, group#member, user with non_expired\] or editor or viewer from parent/);
  assert.match(dsl.stdout, /condition non_expired\(current_time: timestamp, expires: timestamp\)/);
  ok(`fga model write → ${model}; fga model list (newest first); fga model get --format fga (the DSL back, condition included)`);

  // tuple write: plain, and with a condition
  const w1 = json('tuple write', run('tuple', 'write', ...s, 'user:anne', 'viewer', 'document:roadmap'));
  assert.equal((w1.successful as unknown[]).length, 1, JSON.stringify(w1));
  assert.equal((w1.failed as unknown[] | undefined)?.length ?? 0, 0, JSON.stringify(w1));
  json('tuple write', run('tuple', 'write', ...s, 'user:erin', 'viewer', 'folder:plans'));
  json('tuple write', run('tuple', 'write', ...s, 'user:zoe', 'owner', 'document:draft'));
  const w2 = json('tuple write (condition)', run('tuple', 'write', ...s, 'user:dave', 'viewer', 'document:roadmap',
    '--condition-name', 'non_expired', '--condition-context', '{"expires":"2026-06-01T00:00:00Z"}'));
  assert.equal((w2.successful as unknown[]).length, 1, JSON.stringify(w2));
  // the same tuple again: OpenFGA's "already exists" error, reported by the CLI (exit 1); ignored with --on-duplicate ignore
  const dup = run('tuple', 'write', ...s, 'user:anne', 'viewer', 'document:roadmap');
  assert.equal(dup.code, 1, `duplicate write: exit ${dup.code} ${dup.stdout} ${dup.stderr}`);
  assert.match(dup.stderr, /failed to write tuple.*write_failed_due_to_invalid_input/s);
  json('tuple write --on-duplicate ignore', run('tuple', 'write', ...s, 'user:anne', 'viewer', 'document:roadmap', '--on-duplicate', 'ignore'));
  ok('fga tuple write ×4 (one with --condition-name non_expired --condition-context); a duplicate is write_failed_due_to_invalid_input (exit 1), accepted with --on-duplicate ignore');

  // query check: allowed, denied, through a condition, with contextual tuples
  const check = (...args: string[]): boolean => json(`query check ${args.join(' ')}`, run('query', 'check', ...s, ...args)).allowed as boolean;
  assert.equal(check('user:anne', 'viewer', 'document:roadmap'), true);
  assert.equal(check('user:bob', 'viewer', 'document:roadmap'), false);
  assert.equal(check('user:zoe', 'editor', 'document:draft'), true, 'owner implies editor');
  assert.equal(check('user:dave', 'viewer', 'document:roadmap', '--context', '{"current_time":"2026-01-01T00:00:00Z"}'), true);
  assert.equal(check('user:dave', 'viewer', 'document:roadmap', '--context', '{"current_time":"2026-07-01T00:00:00Z"}'), false);
  assert.equal(check('user:erin', 'viewer', 'document:spec'), false);
  assert.equal(check('user:erin', 'viewer', 'document:spec', '--contextual-tuple', 'folder:plans parent document:spec'), true);
  // a check against the first model version (--model-id) answers with it
  assert.equal(check('user:anne', 'viewer', 'document:roadmap', '--model-id', firstModel), true);
  ok('fga query check: allowed, denied, owner → editor, condition true/false by --context, --contextual-tuple, --model-id');

  const lo = json('list-objects', run('query', 'list-objects', ...s, 'user:anne', 'viewer', 'document'));
  assert.deepEqual(lo.objects, ['document:roadmap']);
  const lu = json('list-users', run('query', 'list-users', ...s, '--object', 'document:roadmap', '--relation', 'viewer', '--user-filter', 'user',
    '--context', '{"current_time":"2026-01-01T00:00:00Z"}'));
  assert.deepEqual((lu.users as Array<{ object: { id: string } }>).map((u) => u.object.id).sort(), ['anne', 'dave']);
  const ex = json('expand', run('query', 'expand', ...s, 'viewer', 'document:roadmap'));
  assert.ok(JSON.stringify(ex).includes('user:anne'), `expand: ${JSON.stringify(ex)}`);
  ok('fga query list-objects, list-users (--user-filter, --context), expand');

  const read = json('tuple read', run('tuple', 'read', ...s));
  const tuples = read.tuples as Array<{ key: { user: string; relation: string; object: string; condition?: { name: string; context?: Record<string, unknown> } }; timestamp: string }>;
  assert.deepEqual(sortKeys(tuples), [
    'user:anne viewer document:roadmap', 'user:dave viewer document:roadmap', 'user:erin viewer folder:plans', 'user:zoe owner document:draft',
  ]);
  const dave = tuples.find((t) => t.key.user === 'user:dave')!;
  assert.equal(dave.key.condition?.name, 'non_expired');
  assert.deepEqual(dave.key.condition?.context, { expires: '2026-06-01T00:00:00Z' });
  assert.ok(tuples.every((t) => !Number.isNaN(Date.parse(t.timestamp))), 'every tuple has a timestamp');
  const filtered = json('tuple read --object', run('tuple', 'read', ...s, '--object', 'document:roadmap', '--relation', 'viewer'));
  assert.deepEqual(sortKeys(filtered.tuples as never), ['user:anne viewer document:roadmap', 'user:dave viewer document:roadmap']);
  const simple = run('tuple', 'read', ...s, '--simple-output', '--output-format', 'csv');
  assert.equal(simple.code, 0, simple.stderr);
  assert.match(simple.stdout, /user_type,user_id,user_relation,relation,object_type,object_id,condition_name,condition_context/);
  assert.match(simple.stdout, /user,dave,,viewer,document,roadmap,non_expired,/);
  ok('fga tuple read: all four with the condition and timestamps; filtered by --object/--relation; --output-format csv');

  // model test: the passing file (exit 0), then one wrong assertion (exit 1)
  const pass = run('model', 'test', ...s, '--tests', path.join(HERE, 'passing.fga.yaml'));
  assert.equal(pass.code, 0, `model test (passing): exit ${pass.code}\n${pass.stdout}\n${pass.stderr}`);
  const passSummary = `${pass.stdout}\n${pass.stderr}`;
  assert.match(passSummary, /Tests 1\/1 passing/);
  assert.match(passSummary, /Checks 8\/8 passing/);
  assert.match(passSummary, /ListObjects 3\/3 passing/);
  assert.match(passSummary, /ListUsers 2\/2 passing/);
  const fail = run('model', 'test', ...s, '--tests', path.join(HERE, 'failing.fga.yaml'));
  assert.equal(fail.code, 1, `model test (failing): exit ${fail.code}\n${fail.stdout}\n${fail.stderr}`);
  const failSummary = `${fail.stdout}\n${fail.stderr}`;
  assert.match(failSummary, /Tests 0\/1 passing/);
  assert.match(failSummary, /Checks 1\/2 passing/);
  assert.match(failSummary, /user:bob.*viewer.*document:roadmap|expected true, got false/is);
  ok('fga model test --tests passing.fga.yaml: 8 checks, 3 list_objects, 2 list_users pass (exit 0); failing.fga.yaml: 1/2 checks (exit 1)');

  // tuple delete and the change log
  json('tuple delete', run('tuple', 'delete', ...s, 'user:zoe', 'owner', 'document:draft'));
  assert.equal(check('user:zoe', 'editor', 'document:draft'), false);
  const changes = json('tuple changes', run('tuple', 'changes', ...s));
  const ops = (changes.changes as Array<{ operation: string; tuple_key: { user: string } }>).map((c) => `${c.operation} ${c.tuple_key.user}`);
  assert.deepEqual(ops, ['TUPLE_OPERATION_WRITE user:anne', 'TUPLE_OPERATION_WRITE user:erin', 'TUPLE_OPERATION_WRITE user:zoe',
    'TUPLE_OPERATION_WRITE user:dave', 'TUPLE_OPERATION_DELETE user:zoe']);
  ok('fga tuple delete (the check turns false); fga tuple changes: 4 writes then the delete, in order');

  // bulk: a CSV file of tuples (a userset and a condition among them) written, then deleted, by file
  const csv = path.join(work, `${label}-tuples.csv`);
  writeFileSync(csv, [
    'user_type,user_id,user_relation,relation,object_type,object_id,condition_name,condition_context',
    'user,fay,,viewer,document,csv1,,', 'group,eng,member,viewer,document,csv2,,',
    'user,gus,,viewer,document,csv3,non_expired,"{""expires"":""2026-06-01T00:00:00Z""}"', '',
  ].join('\n'));
  const bulk = json('tuple write --file', run('tuple', 'write', ...s, '--file', csv));
  assert.equal((bulk.successful as unknown[]).length, 3, JSON.stringify(bulk));
  assert.equal(check('user:fay', 'viewer', 'document:csv1'), true);
  assert.equal(check('user:gus', 'viewer', 'document:csv3', '--context', '{"current_time":"2026-01-01T00:00:00Z"}'), true);
  // again: a file import ignores the ones already there (on_duplicate: ignore)
  assert.equal((json('tuple write --file (again)', run('tuple', 'write', ...s, '--file', csv)).successful as unknown[]).length, 3);
  const bulkDelete = json('tuple delete --file', run('tuple', 'delete', ...s, '--file', csv));
  assert.equal((bulkDelete.successful as unknown[]).length, 3, JSON.stringify(bulkDelete));
  assert.equal(check('user:fay', 'viewer', 'document:csv1'), false);
  ok('fga tuple write --file <csv> (a userset, a condition) ×2 (the second ignores what exists); fga tuple delete --file');

  // query options and other readers the CLI has
  assert.equal(check('user:anne', 'viewer', 'document:roadmap', '--consistency', 'HIGHER_CONSISTENCY'), true);
  const relations = json('list-relations', run('query', 'list-relations', ...s, 'user:anne', 'document:roadmap'));
  assert.deepEqual(relations.relations, ['viewer']);
  const since = json('tuple changes --start-time', run('tuple', 'changes', ...s, '--type', 'document', '--start-time', new Date(Date.now() + 60_000).toISOString()));
  assert.deepEqual(since.changes, []);
  const byType = json('tuple changes --type folder', run('tuple', 'changes', ...s, '--type', 'folder'));
  assert.deepEqual((byType.changes as Array<{ tuple_key: { object: string } }>).map((c) => c.tuple_key.object), ['folder:plans']);
  ok('fga query check --consistency HIGHER_CONSISTENCY; fga query list-relations; fga tuple changes --type / --start-time');

  // store import: a store file (model + tuples + tests) makes a new store and runs its tests against it
  const storeFile = path.join(work, `${label}-store.fga.yaml`);
  writeFileSync(storeFile, [
    // model_file is read relative to the store file, as OpenFGA's store files are
    'name: imported', `model_file: ${path.relative(work, path.join(HERE, 'model.fga'))}`,
    'tuples:', '  - user: user:kim', '    relation: owner', '    object: document:imported',
    'tests:', '  - name: kim edits', '    check:', '      - user: user:kim', '        object: document:imported',
    '        assertions:', '          editor: true', '          viewer: true', '',
  ].join('\n'));
  const imported = json('store import', run('store', 'import', '--file', storeFile));
  const importedId = (imported.store as { id: string }).id;
  assert.match(importedId, ULID);
  assert.equal(json('check in imported', run('query', 'check', '--store-id', importedId, 'user:kim', 'editor', 'document:imported')).allowed, true);
  // store export: the model, the tuples and the tests (from the assertions the import wrote) back as a store file
  const exported = run('store', 'export', '--store-id', importedId);
  assert.equal(exported.code, 0, exported.stderr);
  assert.match(exported.stdout, /define editor: \[user, group#member\] or owner/);
  assert.match(exported.stdout, /user: user:kim\n\s+relation: owner\n\s+object: document:imported/);
  assert.match(exported.stdout, /editor: true/);
  ok(`fga store import --file <store file> → store ${importedId} with its model, tuple and assertions; fga store export gives them back`);

  for (const id of [importedId, store.id]) json('store delete', run('store', 'delete', '--store-id', id, '--force'));
  const gone = run('store', 'get', '--store-id', store.id);
  assert.notEqual(gone.code, 0);
  assert.match(gone.stderr, /store_id_not_found|not found/i);
  ok('fga store delete --force ×2; fga store get of a deleted store fails (store_id_not_found)');

  // Gatehouse's own store is one of OpenFGA's stores, usable as any other
  const own = json('store get (own)', run('store', 'get', '--store-id', GATEHOUSE_STORE_ID));
  assert.equal(own.name, 'gatehouse');
  ok('fga store get --store-id 01JDQ7GATEHSE0000000000000: Gatehouse\'s own store');
  return done;
}

async function main(): Promise<void> {
  if (!existsSync(FGA)) {
    step('building the fga CLI (scripts/install-fga-cli.sh)');
    execFileSync('bash', [path.join(ROOT, 'scripts/install-fga-cli.sh')], { stdio: 'inherit' });
  }
  const version = execFileSync(FGA, ['version'], { encoding: 'utf8' }).trim();
  step(`using ${version}`);
  const work = mkdtempSync(path.join(tmpdir(), 'gatehouse-fga-cli-'));
  const summary: string[] = [];
  let d: Deployment | undefined;
  try {
    for (const mode of ['none', 'preshared'] as const) {
      const port = await freePort();
      const key = randomBytes(18).toString('base64url');
      const flags = [`--openfga-http-port=${port}`,
        ...(mode === 'none' ? ['--openfga-authn-method=none'] : [`--openfga-authn-preshared-keys=${key}`, `--gateway-openfga-url=http://127.0.0.1:${port}`])];
      step(`starting Gatehouse all-in-one with ${flags.join(' ')}`);
      d = await startDeployment('all', { flags, readyTimeoutMs: 90_000 });
      const api = `http://127.0.0.1:${port}`;
      await waitForHttp(`${api}/healthz`, 10_000);
      if (mode === 'preshared') {
        const home = mkdtempSync(path.join(work, 'home-'));
        const none = fga(['store', 'list', '--api-url', api], { HOME: home });
        assert.equal(none.code, 1, `store list without a token: exit ${none.code}`);
        assert.match(none.stderr, /bearer_token_missing|401/);
        const wrong = fga(['store', 'list', '--api-url', api, '--api-token', 'not-the-key'], { HOME: home });
        assert.equal(wrong.code, 1);
        assert.match(wrong.stderr, /unauthenticated|401/);
        const right = fga(['store', 'list', '--api-url', api, '--api-token', key], { HOME: home });
        assert.equal(right.code, 0, right.stderr);
        step('preshared: no --api-token → bearer_token_missing (exit 1); another key → unauthenticated (exit 1); --api-token <key> → exit 0');
        summary.push('preshared key: without --api-token and with a wrong one the CLI fails with OpenFGA\'s 401 codes; with it, it passes');
      }
      const done = await scenario(mode, api, mode === 'preshared' ? key : null, work);
      summary.push(...done.map((x) => `[authn ${mode}] ${x}`));
      if (mode === 'preshared') {
        // the same, with --api-url the gateway's public URL (--gateway-openfga-url routes /stores)
        step(`through the gateway: --api-url ${d.url}`);
        const viaGateway = await scenario('gateway', d.url, key, work);
        summary.push(...viaGateway.map((x) => `[through the gateway, preshared] ${x}`));
      }
      await d.stop();
      d = undefined;
    }
  } finally {
    await d?.stop();
    rmSync(work, { recursive: true, force: true });
  }
  process.stdout.write(`\n== test:fga-cli summary (${version}) ==\n${summary.map((x) => `  ok  ${x}`).join('\n')}\n`);
  process.stdout.write(`${summary.length} steps passed, ${commands} fga commands run, in ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
}

main().catch((err: unknown) => {
  process.stderr.write(`test:fga-cli FAILED after ${((Date.now() - started) / 1000).toFixed(1)} s: ${err instanceof Error ? err.stack ?? err.message : String(err)}\n`);
  process.exit(1);
});
