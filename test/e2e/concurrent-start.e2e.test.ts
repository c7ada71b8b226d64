/**
 * @module test/e2e/concurrent-start
 * Issue 37 §5: the split services started at the same moment against one database that does not exist
 * yet, each with `--database-create`, as a Helm install or `compose up` starts them. Every process used
 * to race the others: four of six died on "database already exists" or a duplicate key in the
 * migrations table. Now one CREATE DATABASE wins and the others connect to what it made, and each
 * service's migrations run under its lock (PostgreSQL `pg_advisory_xact_lock`, MariaDB `GET_LOCK`), so
 * every process comes up, each migration is recorded once, and the deployment serves a sign-up.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { createLogger } from '@gatehouse/observability';
import { openDatabase, type DatabaseType } from '@gatehouse/db';
import { startDeployment, type Deployment } from '@gatehouse/testing';
import { SERVICE_NAMES } from '@gatehouse/contracts/service-names';
import { signupUser } from '../support/authz-surfaces.ts';
import { readyz, until } from '../support/readyz.ts';

/** The HTTP base URL of a service process, from its `--http-port` flag. */
const httpOf = (d: Deployment, command: string): string =>
  `http://127.0.0.1:${d.processes.find((p) => p.command === command)!.child.spawnargs.find((a) => a.startsWith('--http-port='))!.split('=')[1]}`;

describe.each(['postgres', 'mariadb'] as const satisfies readonly DatabaseType[])('split mode, %s: every service started at once with --database-create on a fresh database', (type) => {
  let d: Deployment;
  beforeAll(async () => {
    d = await startDeployment('split', { database: type, databaseCreate: true, startTogether: true, readyTimeoutMs: 300_000 });
  }, 360_000);
  afterAll(async () => { await d?.stop(); });

  it('starts all seven processes, none of which died or logged a fatal error', () => {
    const commands = d.processes.map((p) => p.command).sort();
    expect(commands).toEqual(['gateway', ...SERVICE_NAMES].sort());
    // the database did not exist: the harness gave each process --database-create and nothing else made it
    for (const p of d.processes) {
      if (p.command !== 'gateway') expect(p.child.spawnargs).toContain('--database-create');
    }
    expect(d.processes.filter((p) => !p.alive()).map((p) => p.command)).toEqual([]);
    expect(d.output()).not.toMatch(/FATAL|already exists|Duplicate entry|duplicate key/);
  });

  it('every service is Ready on its own database connection, and the gateway sees each of them', async () => {
    for (const command of SERVICE_NAMES) {
      const r = await readyz(httpOf(d, command));
      expect({ command, status: r.status, database: r.body.checks?.database }).toEqual({ command, status: 200, database: 'ok' });
    }
    const gw = await until(() => readyz(d.url), (r) => r.status === 200 && Object.values(r.body.checks).every((c) => c === 'ok'), 60_000);
    expect(gw.body.checks).toEqual({ redis: 'ok', 'service:admin': 'ok', 'service:authn': 'ok', 'service:authz': 'ok', 'service:mfa': 'ok', 'service:orgs': 'ok' });
  });

  it('recorded each migration once, in one migrations table per service', async () => {
    const db = await openDatabase({ type, url: d.databaseUrl }, { service: 'probe', entities: [], migrations: [] }, { logger: createLogger('silent') });
    try {
      const schemaOf = type === 'postgres' ? 'current_schema()' : 'database()';
      const tables = (await db.execute<{ name: string }>(
        `select table_name as name from information_schema.tables where table_schema = ${schemaOf} and table_name like ?`, ['%\\_migrations'],
      )).map((t) => t.name).filter((t) => t !== 'probe_migrations').sort();
      expect(tables.length).toBeGreaterThanOrEqual(5);
      for (const table of tables) {
        const q = type === 'postgres' ? `"${table}"` : `\`${table}\``;
        const rows = await db.execute<{ name: string }>(`select name from ${q}`);
        expect({ table, duplicates: rows.length - new Set(rows.map((r) => r.name)).size, empty: rows.length === 0 }).toEqual({ table, duplicates: 0, empty: false });
      }
    } finally {
      await db.close();
    }
  });

  it('serves a sign-up through the gateway', async () => {
    const user = await signupUser(d.url, `together-${randomBytes(5).toString('hex')}@example.com`);
    expect(user.token.split('.')).toHaveLength(3);
  });
});
