/**
 * @module test/e2e/authz-disabled
 * Engine store selection (spec §1 last rule, behaviour.md §7.1 "Engine off"):
 * - with a NoSQL main database and no `--fga-store`, every authorization endpoint answers 400
 *   `failed_precondition` `authorization engine is not enabled`, on REST, GraphQL and gRPC;
 * - the same NoSQL authz process with `--fga-store=memory` has a working engine;
 * - `--fga-store=memory` works on an all-in-one deployment;
 * - `--fga-store=postgres|mysql` with `--fga-store-url` keeps the engine's tables in that database, apart
 *   from the main SQLite database of an all-in-one deployment.
 * No MongoDB server runs here and `gatehouse all` cannot start without its main database, so the
 * engine-off case runs in split mode: the deployment's authn (PostgreSQL) plus an authz process
 * started with `--database-type=mongodb` (authz never opens the main database when the engine is
 * off) and a gateway routing authz to it.
 */
import { describe, it, expect, beforeAll, afterAll } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import BetterSqlite3 from 'better-sqlite3';
import { createScratchDatabase, type ScratchDatabase } from '@gatehouse/db';
import { startDeployment, type Deployment } from '@gatehouse/testing';
import { openSql } from '../support/sql.ts';
import { SURFACES } from '../support/surfaces.ts';
import { authzGrpc, closeAuthzClients, expectAllError, okBody, onAll, signupUser, type AuthzCreds, type AuthzOp } from '../support/authz-surfaces.ts';
import { DOCS_MODEL } from '../support/authz-fixtures.ts';
import { startExtraAuthz, startGatewayFor, type Started } from '../support/authz-processes.ts';

const NOSQL = { '--database-type': 'mongodb', '--database-url': 'mongodb://127.0.0.1:1/gatehouse', '--log-level': 'info' };

const EVERY_OP: Array<[AuthzOp, Record<string, unknown>, 'user' | 'admin']> = [
  ['check_permissions', { checks: [{ relation: 'viewer', object: 'doc:1' }] }, 'user'],
  ['list_permissions', {}, 'user'],
  ['_fga_get_model', {}, 'admin'],
  ['_fga_write_model', { dsl: DOCS_MODEL }, 'admin'],
  ['_fga_write_tuples', { tuples: [{ user: 'user:1', relation: 'viewer', object: 'doc:1' }] }, 'admin'],
  ['_fga_delete_tuples', { tuples: [{ user: 'user:1', relation: 'viewer', object: 'doc:1' }] }, 'admin'],
  ['_fga_read_tuples', {}, 'admin'],
  ['_fga_list_users', { object: 'doc:1', relation: 'viewer', user_type: 'user' }, 'admin'],
  ['_fga_expand', { relation: 'viewer', object: 'doc:1' }, 'admin'],
  ['_fga_reset', {}, 'admin'],
];

describe('engine off: NoSQL main database without --fga-store (split)', () => {
  let d: Deployment;
  let off: Started;
  let on: Started;
  let gw: Started & { url: string };
  let user: { token: string; subject: string };
  beforeAll(async () => {
    d = await startDeployment('split');
    [off, on] = await Promise.all([startExtraAuthz(d, NOSQL), startExtraAuthz(d, { ...NOSQL, '--fga-store': 'memory' })]);
    gw = await startGatewayFor(d, off);
    user = await signupUser(gw.url, `off-${randomBytes(5).toString('hex')}@example.com`);
  }, 120_000);
  afterAll(async () => {
    closeAuthzClients();
    await Promise.all([gw?.stop(), off?.stop(), on?.stop()]);
    await d?.stop();
  });

  it('the authz process started with --database-type=mongodb and no engine store', () => {
    expect(off.process.child.spawnargs).toContain('--database-type=mongodb');
    expect(off.process.output()).toMatch(/"store":null.*authz started/);
  });

  it('every authorization endpoint answers 400 failed_precondition on REST, GraphQL and gRPC', async () => {
    const target = { url: gw.url, grpcAddress: gw.grpcAddress };
    for (const [op, args, who] of EVERY_OP) {
      const creds: AuthzCreds = who === 'admin' ? { adminSecret: d.adminSecret } : { bearer: user.token };
      const a = await onAll(target, { op, args, creds });
      expectAllError(a, 'failed_precondition', 'authorization engine is not enabled');
      // the replica's own gRPC port (the direct API for internal platforms) answers the same
      const direct = await authzGrpc(target, { op, args, creds }, off.grpcAddress);
      expect(direct.ok ? { ok: true } : { code: direct.code, message: direct.message })
        .toEqual({ code: 'failed_precondition', message: 'authorization engine is not enabled' });
    }
  });

  it('the rest of the API still works through the same gateway', async () => {
    const res = await fetch(`${gw.url}/v1/profile`, { headers: { authorization: `Bearer ${user.token}` } });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { id: string }).id).toBe(user.subject.slice('user:'.length));
  });

  it('the same NoSQL configuration with --fga-store=memory has a working engine', async () => {
    const target = { url: gw.url, grpcAddress: on.grpcAddress };
    const admin = { adminSecret: d.adminSecret };
    okBody(await authzGrpc(target, { op: '_fga_write_model', args: { dsl: DOCS_MODEL }, creds: admin }));
    okBody(await authzGrpc(target, { op: '_fga_write_tuples', args: { tuples: [{ user: user.subject, relation: 'viewer', object: 'doc:1' }] }, creds: admin }));
    const r = okBody(await authzGrpc(target, { op: 'check_permissions', args: { checks: [{ relation: 'viewer', object: 'doc:1' }, { relation: 'owner', object: 'doc:1' }] }, creds: { bearer: user.token } }));
    expect(r.results).toEqual([{ relation: 'viewer', object: 'doc:1', allowed: true }, { relation: 'owner', object: 'doc:1', allowed: false }]);
  });
});

describe('--fga-store=memory on all-in-one', () => {
  let d: Deployment;
  let user: { token: string; subject: string };
  beforeAll(async () => {
    d = await startDeployment('all', { flags: ['--fga-store=memory'] });
    user = await signupUser(d.url, `mem-${randomBytes(5).toString('hex')}@example.com`);
  }, 60_000);
  afterAll(async () => { closeAuthzClients(); await d?.stop(); });

  it('starts with an empty store, installs a model, writes tuples and answers checks on every surface', async () => {
    const admin = { adminSecret: d.adminSecret };
    const empty = await onAll(d, { op: '_fga_get_model', creds: admin });
    for (const s of SURFACES) expect(okBody(empty[s])).toEqual({ id: '', dsl: '' });
    okBody((await onAll(d, { op: '_fga_write_model', args: { dsl: DOCS_MODEL }, creds: admin })).rest);
    okBody((await onAll(d, { op: '_fga_write_tuples', args: { tuples: [{ user: user.subject, relation: 'owner', object: 'doc:m' }] }, creds: admin })).rest);
    const a = await onAll(d, { op: 'check_permissions', args: { checks: [{ relation: 'viewer', object: 'doc:m' }, { relation: 'viewer', object: 'doc:n' }] }, creds: { bearer: user.token } });
    for (const s of SURFACES) expect(okBody(a[s]).results.map((r: { allowed: boolean }) => r.allowed)).toEqual([true, false]);
    expect(d.processes[0]!.child.spawnargs).toContain('--fga-store=memory');
  });
});

describe.each([['postgres', 'postgres'], ['mysql', 'mariadb']] as const)('--fga-store=%s with --fga-store-url on all-in-one (SQLite main database)', (store, dbType) => {
  let d: Deployment;
  let fga: ScratchDatabase;
  let user: { token: string; subject: string };
  beforeAll(async () => {
    fga = await createScratchDatabase(dbType);
    d = await startDeployment('all', { flags: [`--fga-store=${store}`, `--fga-store-url=${fga.options.url!}`] });
    user = await signupUser(d.url, `fga-${store}-${randomBytes(5).toString('hex')}@example.com`);
  }, 60_000);
  afterAll(async () => { closeAuthzClients(); await d?.stop(); await fga?.drop(); });

  it('keeps models and tuples in the engine database and answers from them on every surface', async () => {
    const admin = { adminSecret: d.adminSecret };
    okBody((await onAll(d, { op: '_fga_write_model', args: { dsl: DOCS_MODEL }, creds: admin })).rest);
    okBody((await onAll(d, { op: '_fga_write_tuples', args: { tuples: [{ user: user.subject, relation: 'owner', object: 'doc:s' }] }, creds: admin })).rest);
    const a = await onAll(d, { op: 'check_permissions', args: { checks: [{ relation: 'viewer', object: 'doc:s' }, { relation: 'viewer', object: 'doc:t' }] }, creds: { bearer: user.token } });
    for (const s of SURFACES) expect(okBody(a[s]).results.map((r: { allowed: boolean }) => r.allowed)).toEqual([true, false]);
    const sql = await openSql(fga.options.url!);
    try {
      expect(await sql.query('SELECT object_type, object_id, relation FROM fga_tuples')).toEqual([{ object_type: 'doc', object_id: 's', relation: 'owner' }]);
      // one model version per surface that wrote it
      expect(Number((await sql.query<{ n: unknown }>('SELECT COUNT(*) AS n FROM fga_models'))[0]!.n)).toBe(3);
    } finally {
      await sql.close();
    }
    // the main database holds no engine tables
    const main = new BetterSqlite3(d.databaseUrl, { readonly: true });
    try {
      const tables = (pattern: string): unknown => main.prepare("SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name LIKE ?").pluck().get(pattern);
      expect(tables('authn_users')).toBe(1);
      expect(tables('fga%')).toBe(0);
    } finally {
      main.close();
    }
  });
});
