/**
 * @module test/e2e/openfga-go-client
 * OpenFGA's Go SDK (`github.com/openfga/go-sdk` v0.8.2, the HTTP client of the `fga` CLI) against the authz
 * service's OpenFGA HTTP API (issue 36): a command line over the SDK, built by
 * scripts/install-openfga-go-client.sh from test/openfga-go-client, its commands and flags named as the
 * CLI's (`--api-url`, `--api-token`, `store`, `model write` of a DSL file, `tuple write` with a condition
 * and `--on-duplicate`, `tuple delete` with `--on-missing`, `query check` with contextual tuples and
 * context, `query batch-check`, `query list-objects`, `query list-users`, `query expand`, `tuple read` and
 * `tuple changes` in pages, and `model test` of an OpenFGA store test file), run as a user runs the CLI:
 * its stdout, stderr and exit status are what the test reads; in all-in-one, and on two split-mode authz
 * replicas (a write through one answered by the other). With `--openfga-authn-method=oidc`, the
 * SDK's client credentials (`--api-token-issuer`, `--client-id`, `--client-secret`; RFC 6749 §4.4) get a
 * token from Gatehouse's own `/oauth/token`. The CLI itself is not built: the Go module
 * proxy reachable here does not serve github.com/openfga/cli.
 */
import { describe, it, expect, beforeAll, afterAll } from '@jest/globals';
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort, startDeployment, waitForHttp, type Deployment } from '@gatehouse/testing';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const CLIENT = path.resolve(HERE, '../../.tools/bin/openfga-go-client');
const FIXTURES = path.join(HERE, 'fixtures/openfga-go-client');
const STORE_ID = '01JDQ7GATEHSE0000000000000';
const ULID = /^[0-9A-HJKMNP-TV-Z]{26}$/;

/** One run of the client: its exit status, stdout and stderr. */
interface Run { code: number; stdout: string; stderr: string }

/** Runs the Go SDK client with `args` (never throws on a non-zero exit: the status is returned). */
function client(args: string[], env: Record<string, string> = {}): Promise<Run> {
  if (!existsSync(CLIENT)) throw new Error(`${CLIENT} is missing: run scripts/install-openfga-go-client.sh`);
  return new Promise((resolve) => {
    // only the given variables: FGA_API_URL and the like of the test's own environment do not leak in
    execFile(CLIENT, args, { timeout: 30_000, env }, (err, stdout, stderr) => {
      const code = err ? (typeof err.code === 'number' ? err.code : -1) : 0;
      resolve({ code, stdout, stderr });
    });
  });
}

describe('OpenFGA\'s Go SDK (the fga CLI\'s client) against the authz service (all-in-one)', () => {
  let d: Deployment;
  let api: string;
  const key = randomBytes(18).toString('base64url');
  /** The client with `--api-url`, `--api-token` and `--store-id` set, as a configured CLI runs. */
  const fga = (group: string, command: string, ...rest: string[]): Promise<Run> =>
    client(['--api-url', api, '--api-token', key, group, command, '--store-id', STORE_ID, ...rest]);
  const json = (r: Run): Record<string, unknown> => {
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: '' });
    return JSON.parse(r.stdout) as Record<string, unknown>;
  };

  /** when this run started (ms): every tuple and change it reads was written after */
  const started = Date.now();

  beforeAll(async () => {
    const port = await freePort();
    d = await startDeployment('all', { flags: [`--openfga-http-port=${port}`, `--openfga-authn-preshared-keys=${key}`], readyTimeoutMs: 90_000 });
    api = `http://127.0.0.1:${port}`;
    await waitForHttp(`${api}/healthz`, 10_000);
  }, 120_000);
  afterAll(async () => { await d?.stop(); });

  it('authenticates with --api-token; without it, or with another key, the SDK reports OpenFGA\'s 401', async () => {
    const none = await client(['--api-url', api, 'store', 'list']);
    expect(none.code).toBe(1);
    expect(none.stderr).toContain('failed to list stores');
    expect(none.stderr).toContain('bearer_token_missing');
    const wrong = await client(['--api-url', api, '--api-token', 'not-the-key', 'store', 'list']);
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toContain('unauthenticated');
    const fromEnv = await client(['store', 'list'], { FGA_API_URL: api, FGA_API_TOKEN: key });
    expect((json(fromEnv).stores as Array<{ id: string; name: string }>).map((s) => [s.id, s.name])).toEqual([[STORE_ID, 'gatehouse']]);
  });

  it('store: Gatehouse\'s store is got by id; store create makes another, got by its id and listed after Gatehouse\'s', async () => {
    const got = json(await fga('store', 'get'));
    expect(got.id).toBe(STORE_ID);
    expect(got.name).toBe('gatehouse');
    const created = json(await client(['--api-url', api, '--api-token', key, 'store', 'create', '--name', 'another']));
    expect(created.id).toMatch(ULID);
    expect(created.name).toBe('another');
    const other = json(await client(['--api-url', api, '--api-token', key, 'store', 'get', '--store-id', String(created.id)]));
    expect(other.name).toBe('another');
    const list = json(await client(['--api-url', api, '--api-token', key, 'store', 'list']));
    expect((list.stores as Array<{ id: string }>).map((s) => s.id)).toEqual([STORE_ID, created.id]);
  });

  it('model write: the DSL file is written (conditions included) and read back as the latest model', async () => {
    const written = json(await fga('model', 'write', '--file', path.join(FIXTURES, 'model.fga')));
    expect(written.authorization_model_id).toMatch(ULID);
    const latest = json(await fga('model', 'get')) as { authorization_model: { id: string; type_definitions: Array<{ type: string }>; conditions: Record<string, unknown> } };
    expect(latest.authorization_model.id).toBe(written.authorization_model_id);
    expect(latest.authorization_model.type_definitions.map((t) => t.type)).toEqual(['user', 'group', 'folder', 'doc']);
    expect(Object.keys(latest.authorization_model.conditions)).toEqual(['in_hours']);
  });

  it('tuple write, query check (allowed, not allowed, contextual tuples, condition context) and query list-objects', async () => {
    json(await fga('tuple', 'write', 'user:anne', 'owner', 'folder:plans'));
    json(await fga('tuple', 'write', 'folder:plans', 'parent', 'doc:roadmap'));
    json(await fga('tuple', 'write', 'user:bob', 'member', 'group:eng'));
    json(await fga('tuple', 'write', '--condition-name', 'in_hours', 'user:carl', 'viewer', 'doc:timesheet'));
    const again = await fga('tuple', 'write', 'user:anne', 'owner', 'folder:plans');
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('write_failed_due_to_invalid_input');
    json(await fga('tuple', 'write', '--on-duplicate', 'ignore', 'user:anne', 'owner', 'folder:plans'));
    const missingDelete = await fga('tuple', 'delete', 'user:nobody', 'owner', 'folder:plans');
    expect(missingDelete.code).toBe(1);
    expect(missingDelete.stderr).toContain('write_failed_due_to_invalid_input');
    json(await fga('tuple', 'delete', '--on-missing', 'ignore', 'user:nobody', 'owner', 'folder:plans'));

    expect(json(await fga('query', 'check', 'user:anne', 'editor', 'doc:roadmap'))).toMatchObject({ allowed: true });
    expect(json(await fga('query', 'check', 'user:bob', 'editor', 'doc:roadmap'))).toMatchObject({ allowed: false });
    expect(json(await fga('query', 'check', '--contextual-tuple', 'group:eng#member editor doc:roadmap', 'user:bob', 'viewer', 'doc:roadmap'))).toMatchObject({ allowed: true });
    expect(json(await fga('query', 'check', '--context', '{"hour":10}', 'user:carl', 'viewer', 'doc:timesheet'))).toMatchObject({ allowed: true });
    expect(json(await fga('query', 'check', '--context', '{"hour":22}', 'user:carl', 'viewer', 'doc:timesheet'))).toMatchObject({ allowed: false });
    const missing = await fga('query', 'check', 'user:carl', 'viewer', 'doc:timesheet');
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('failed to check');
    expect(missing.stderr).toContain('hour');

    expect(json(await fga('query', 'list-objects', 'user:anne', 'viewer', 'doc'))).toEqual({ objects: ['doc:roadmap'] });
    const withContextual = json(await fga('query', 'list-objects', '--contextual-tuple', 'user:bob owner doc:memo', 'user:bob', 'editor', 'doc'));
    expect(withContextual).toEqual({ objects: ['doc:memo'] });
    expect(json(await fga('query', 'list-objects', '--context', '{"hour":12}', 'user:carl', 'viewer', 'doc'))).toEqual({ objects: ['doc:timesheet'] });
  });

  it('tuple read: by object, and every tuple through continuation tokens, the condition kept', async () => {
    const onRoadmap = json(await fga('tuple', 'read', '--object', 'doc:roadmap')) as { tuples: Array<{ key: { user: string; relation: string } }> };
    expect(onRoadmap.tuples.map((t) => `${t.key.user} ${t.key.relation}`)).toEqual(['folder:plans parent']);
    const all = json(await fga('tuple', 'read', '--page-size', '1', '--max-pages', '0')) as { tuples: Array<{ key: { user: string; relation: string; object: string; condition?: { name: string } }; timestamp: string }>; continuation_token: string };
    expect(all.tuples.map((t) => `${t.key.user} ${t.key.relation} ${t.key.object}`).sort()).toEqual([
      'folder:plans parent doc:roadmap', 'user:anne owner folder:plans', 'user:bob member group:eng', 'user:carl viewer doc:timesheet',
    ]);
    expect(all.tuples.find((t) => t.key.user === 'user:carl')?.key.condition?.name).toBe('in_hours');
    // each tuple's write time, as OpenFGA's Tuple.timestamp: written by this run, not the SDK's zero time
    for (const t of all.tuples) {
      expect(Date.parse(t.timestamp)).toBeGreaterThanOrEqual(started - 1000);
      expect(Date.parse(t.timestamp)).toBeLessThanOrEqual(Date.now());
    }
    expect(all.continuation_token).toBe('');
    const twoPages = json(await fga('tuple', 'read', '--page-size', '1', '--max-pages', '2')) as { tuples: unknown[]; continuation_token: string };
    expect(twoPages.tuples).toHaveLength(2);
    expect(twoPages.continuation_token).not.toBe('');
  });

  it('query batch-check (correlation ids), list-users and expand', async () => {
    const batch = json(await fga('query', 'batch-check', 'user:anne viewer doc:roadmap', 'user:bob viewer doc:roadmap', 'user:anne nope doc:roadmap')) as { result: Record<string, { allowed?: boolean; error?: { message?: string } }> };
    expect(batch.result['1']?.allowed).toBe(true);
    expect(batch.result['2']?.allowed).toBe(false);
    expect(batch.result['3']?.error?.message).toContain('nope');
    const users = json(await fga('query', 'list-users', '--object', 'folder:plans', '--relation', 'owner', '--user-filter', 'user')) as { users: Array<{ object?: { type: string; id: string } }> };
    expect(users.users.map((u) => `${u.object?.type}:${u.object?.id}`)).toEqual(['user:anne']);
    const members = json(await fga('query', 'list-users', '--object', 'doc:memo', '--relation', 'editor', '--user-filter', 'group#member', '--contextual-tuple', 'group:eng#member editor doc:memo')) as { users: Array<{ userset?: { type: string; id: string; relation: string } }> };
    expect(members.users.map((u) => u.userset)).toEqual([{ type: 'group', id: 'eng', relation: 'member' }]);
    const tree = json(await fga('query', 'expand', 'owner', 'folder:plans')) as { tree: { root: { name: string; leaf: { users: { users: string[] } } } } };
    expect(tree.tree.root.name).toBe('folder:plans#owner');
    expect(tree.tree.root.leaf.users.users).toEqual(['user:anne']);
  });

  it('tuple changes: the change log in pages, by type, with the token to go on from', async () => {
    const docs = json(await fga('tuple', 'changes', '--type', 'doc', '--page-size', '100')) as { changes: Array<{ tuple_key: { object: string }; operation: string }>; continuation_token: string };
    expect(docs.changes.map((c) => `${c.operation} ${c.tuple_key.object}`)).toEqual(['TUPLE_OPERATION_WRITE doc:roadmap', 'TUPLE_OPERATION_WRITE doc:timesheet']);
    expect(docs.continuation_token).not.toBe('');
    const first = json(await fga('tuple', 'changes', '--page-size', '1')) as { changes: unknown[]; continuation_token: string };
    expect(first.changes).toHaveLength(1);
    const next = json(await fga('tuple', 'changes', '--page-size', '100', '--continuation-token', first.continuation_token)) as { changes: Array<{ timestamp: string }> };
    expect(next.changes.length).toBeGreaterThanOrEqual(3);
    for (const c of next.changes) expect(Date.parse(c.timestamp)).toBeGreaterThanOrEqual(started - 1000);
    // --start-time (RFC 3339, whole seconds as the SDK sends it): only the changes from then on
    const from = new Date(Math.floor(Date.now() / 1000) * 1000 + 1000);
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, from.getTime() - Date.now()) + 10));
    json(await fga('tuple', 'write', 'user:dave', 'viewer', 'doc:later'));
    const since = json(await fga('tuple', 'changes', '--start-time', from.toISOString().replace('.000Z', 'Z'))) as { changes: Array<{ tuple_key: { user: string; object: string } }> };
    expect(since.changes.map((c) => `${c.tuple_key.user} ${c.tuple_key.object}`)).toEqual(['user:dave doc:later']);
    json(await fga('tuple', 'delete', 'user:dave', 'viewer', 'doc:later'));
  });

  it('tuple delete: the tuple is gone for the next check', async () => {
    json(await fga('tuple', 'delete', 'folder:plans', 'parent', 'doc:roadmap'));
    expect(json(await fga('query', 'check', 'user:anne', 'editor', 'doc:roadmap'))).toMatchObject({ allowed: false });
  });

  it('model test: the store test file\'s checks and list_objects (one conditioned) pass against the server', async () => {
    const run = await fga('model', 'test', '--tests', path.join(FIXTURES, 'docs.fga.yaml'));
    expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: '' });
    expect(run.stdout).not.toContain('FAILING');
    expect(run.stdout).toContain('# Test Summary #\nTests 2/2 passing\nChecks 6/6 passing\nListObjects 3/3 passing');
    const wrong = await fga('model', 'test', '--tests', path.join(FIXTURES, 'docs-wrong.fga.yaml'));
    expect(wrong.code).toBe(1);
    expect(wrong.stdout).toContain('(bob is said to view) FAILING CHECK: user=user:bob relation=owner object=folder:plans: expected true, got false');
    expect(wrong.stdout).toContain('Tests 0/1 passing');
    expect(wrong.stderr).toBe('Error: 1 of 1 tests failed\n');
  });

  it('tuple write --file: 40 tuples imported as the CLI imports a file (one per Write, 4 in parallel), an existing one ignored, an invalid one reported', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'fga-import-'));
    try {
      const tuples = Array.from({ length: 40 }, (_, i) => ({ user: 'user:importer', relation: 'viewer', object: `doc:import-${i}` }));
      const good = path.join(dir, 'tuples.json');
      writeFileSync(good, JSON.stringify([...tuples, { user: 'user:anne', relation: 'owner', object: 'folder:plans' }]));
      const imported = json(await fga('tuple', 'write', '--file', good, '--max-tuples-per-write', '1', '--max-parallel-requests', '4')) as { successful: unknown[]; failed: unknown[] };
      expect(imported.successful).toHaveLength(41);
      expect(imported.failed).toEqual([]);
      const listed = json(await fga('query', 'list-objects', 'user:importer', 'viewer', 'doc')) as { objects: string[] };
      expect(listed.objects.sort()).toEqual(tuples.map((t) => t.object).sort());
      const bad = path.join(dir, 'bad.yaml');
      writeFileSync(bad, '- user: user:importer\n  relation: approver\n  object: doc:import-0\n- user: user:importer\n  relation: owner\n  object: doc:import-0\n');
      const mixed = await fga('tuple', 'write', '--file', bad);
      expect(mixed.code).toBe(1);
      const out = JSON.parse(mixed.stdout) as { successful: Array<{ relation: string }>; failed: Array<{ tuple_key: { relation: string }; reason: string }> };
      expect(out.successful.map((t) => t.relation)).toEqual(['owner']);
      expect(out.failed.map((f) => f.tuple_key.relation)).toEqual(['approver']);
      expect(out.failed[0]!.reason).toContain('approver');
      expect(mixed.stderr).toBe('Error: 1 of 2 tuples were not written\n');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('OpenFGA\'s Go SDK on two authz replicas (split mode, PostgreSQL)', () => {
  let d: Deployment;
  let apis: string[];
  const key = randomBytes(18).toString('base64url');
  /** The client against replica `i`. */
  const on = (i: number, group: string, command: string, ...rest: string[]): Promise<Run> =>
    client(['--api-url', apis[i]!, '--api-token', key, group, command, '--store-id', STORE_ID, ...rest]);
  const json = (r: Run): Record<string, unknown> => {
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: '' });
    return JSON.parse(r.stdout) as Record<string, unknown>;
  };

  beforeAll(async () => {
    const ports = [await freePort(), await freePort()];
    d = await startDeployment('split', {
      authzReplicas: 2,
      flags: [`--openfga-authn-preshared-keys=${key}`],
      replicaFlags: (command, i) => (command === 'authz' ? [`--openfga-http-port=${ports[i]}`] : []),
      readyTimeoutMs: 150_000,
    });
    apis = ports.map((port) => `http://127.0.0.1:${port}`);
    for (const api of apis) await waitForHttp(`${api}/healthz`, 10_000);
  }, 180_000);
  afterAll(async () => { await d?.stop(); });

  it('a model and tuples written through one replica are answered, read and listed as changes by the other on the next call', async () => {
    const started = Date.now();
    const { authorization_model_id: id } = json(await on(0, 'model', 'write', '--file', path.join(FIXTURES, 'model.fga')));
    expect((json(await on(1, 'model', 'get')) as { authorization_model: { id: string } }).authorization_model.id).toBe(id);
    json(await on(0, 'tuple', 'write', 'user:hal', 'owner', 'folder:r'));
    json(await on(0, 'tuple', 'write', 'folder:r', 'parent', 'doc:r'));
    expect(json(await on(1, 'query', 'check', 'user:hal', 'viewer', 'doc:r'))).toMatchObject({ allowed: true });
    expect(json(await on(1, 'query', 'list-objects', 'user:hal', 'editor', 'doc'))).toEqual({ objects: ['doc:r'] });
    const read = json(await on(1, 'tuple', 'read', '--object', 'doc:r')) as { tuples: Array<{ key: { user: string }; timestamp: string }> };
    expect(read.tuples.map((t) => t.key.user)).toEqual(['folder:r']);
    expect(Date.parse(read.tuples[0]!.timestamp)).toBeGreaterThanOrEqual(started - 1000);
    json(await on(1, 'tuple', 'delete', 'folder:r', 'parent', 'doc:r'));
    expect(json(await on(0, 'query', 'check', 'user:hal', 'viewer', 'doc:r'))).toMatchObject({ allowed: false });
    const changes = json(await on(0, 'tuple', 'changes', '--type', 'doc')) as { changes: Array<{ operation: string; tuple_key: { object: string } }> };
    expect(changes.changes.map((c) => `${c.operation} ${c.tuple_key.object}`)).toEqual(['TUPLE_OPERATION_WRITE doc:r', 'TUPLE_OPERATION_DELETE doc:r']);
  });
});

describe('OpenFGA\'s Go SDK with client credentials from Gatehouse\'s own issuer (--openfga-authn-method=oidc, all-in-one)', () => {
  let d: Deployment;
  let api: string;
  /** A service account (a client with the client_credentials grant) made through the admin API. */
  const serviceAccount = async (name: string): Promise<{ id: string; secret: string }> => {
    const made = await fetch(`${d.url}/v1/admin/create_client`, {
      method: 'POST', headers: { 'content-type': 'application/json', origin: d.url, 'x-service-admin-secret': d.adminSecret },
      body: JSON.stringify({ name, allowed_scopes: ['read:docs'], grant_types: ['client_credentials'] }),
    });
    expect(made.status).toBe(200);
    const body = (await made.json()) as { client: { client_id: string }; client_secret: string };
    return { id: body.client.client_id, secret: body.client_secret };
  };

  beforeAll(async () => {
    const port = await freePort();
    d = await startDeployment('all', { flags: [`--openfga-http-port=${port}`, '--openfga-authn-method=oidc'], readyTimeoutMs: 90_000 });
    api = `http://127.0.0.1:${port}`;
    await waitForHttp(`${api}/healthz`, 10_000);
  }, 120_000);
  afterAll(async () => { await d?.stop(); });

  it('--api-token-issuer, --client-id and --client-secret: the SDK gets a token at the issuer\'s /oauth/token and is let in; a wrong secret is not', async () => {
    const sa = await serviceAccount('fga-go-client');
    const withCredentials = (secret: string, ...extra: string[]): Promise<Run> =>
      client(['--api-url', api, '--api-token-issuer', d.url, '--client-id', sa.id, '--client-secret', secret, ...extra, 'store', 'list']);
    const listed = await withCredentials(sa.secret);
    expect({ code: listed.code, stderr: listed.stderr }).toEqual({ code: 0, stderr: '' });
    expect((JSON.parse(listed.stdout) as { stores: Array<{ id: string }> }).stores.map((s) => s.id)).toEqual([STORE_ID]);
    const scoped = await withCredentials(sa.secret, '--api-scopes', 'read:docs', '--api-audience', api);
    expect({ code: scoped.code, stderr: scoped.stderr }).toEqual({ code: 0, stderr: '' });
    const wrong = await withCredentials(`${sa.secret}x`);
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toContain('invalid_client');
  });
});
