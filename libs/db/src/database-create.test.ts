/**
 * @module @gatehouse/db/database-create.test
 * `--database-create` with several processes starting at once on one fresh PostgreSQL or MariaDB
 * database (issue 37 §5: six split services started together used to lose four to "database already
 * exists" / a duplicate key): every process comes up, the database exists once and each migration is
 * recorded once. The processes wait at a start barrier once loaded, so they open the database together;
 * the same race inside one process (six opens at once) loses every time without the retry of a lost
 * CREATE DATABASE (open.ts) or the migration lock (migrate.ts): removing either makes it fail.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, it, expect } from '@jest/globals';
import { createLogger } from '@gatehouse/observability';
import { openDatabase, reserveScratchDatabase } from './index.ts';
import { testSchema } from './test-schema.ts';

const child = fileURLToPath(new URL('./create-child.fixture.ts', import.meta.url));
/** as many processes as split mode has database-owning services */
const PROCESSES = 6;

type Run = { code: number | null; out: string; err: string };

/**
 * Starts the fixture process; `ready` resolves once its modules are loaded (it then waits), `go()`
 * releases it, `done` is its outcome (stderr without the `ready` line).
 */
function start(type: string, url: string): { ready: Promise<void>; go(): void; done: Promise<Run> } {
  // eslint-disable-next-line no-restricted-properties -- passes the inherited environment through; reads no configuration
  const p = spawn(process.execPath, [child, type, url], { stdio: ['pipe', 'pipe', 'pipe'], env: { ...process.env, NODE_OPTIONS: '' } });
  let out = '';
  let err = '';
  let signalReady: () => void = () => undefined;
  const ready = new Promise<void>((resolve) => (signalReady = resolve));
  p.stdout.on('data', (d) => (out += d));
  p.stderr.on('data', (d) => {
    err += d;
    if (err.startsWith('ready\n')) signalReady();
  });
  const done = new Promise<Run>((resolve) => p.on('exit', (code) => {
    signalReady(); // a process that died before its barrier must not hold the others
    resolve({ code, out, err: err.replace(/^ready\n/, '') });
  }));
  return { ready, go: () => p.stdin.end('go\n'), done };
}

describe.each(['postgres', 'mariadb'] as const)('--database-create from %s processes starting at once', (type) => {
  it(`${PROCESSES} processes create, migrate and use one fresh database, all of them`, async () => {
    const scratch = reserveScratchDatabase(type);
    try {
      const url = scratch.options.url!;
      const procs = Array.from({ length: PROCESSES }, () => start(type, url));
      // all loaded, then all released at once: they check for the database, create it and migrate together
      await Promise.all(procs.map((p) => p.ready));
      for (const p of procs) p.go();
      const results = await Promise.all(procs.map((p) => p.done));
      for (const [i, r] of results.entries()) expect({ i, code: r.code, out: r.out, err: r.err }).toEqual({ i, code: 0, out: 'ok', err: '' });
      const db = await openDatabase(scratch.options, testSchema, { logger: createLogger('silent') });
      try {
        const migrations = await db.execute<{ name: string }>('select name from dbtest_migrations order by name');
        expect(migrations.map((m) => m.name)).toEqual(['0000_dbtest_outbox', '0000_dbtest_outbox_trace_parent', '0001_notes', '0002_notes_body_idx']);
        expect(await db.execute('select id from dbtest_notes')).toHaveLength(PROCESSES);
      } finally {
        await db.close();
      }
    } finally {
      await scratch.drop();
    }
  }, 180_000);

  it(`${PROCESSES} connections of one process open the fresh database together: each creates or finds it and migrates it once`, async () => {
    // The same race without process start-up in between: each open checks for the database, finds it
    // missing and creates it while the others do the same (MikroORM's check, reconnect, CREATE
    // DATABASE), so all but one lose, and must connect to what the winner made.
    const scratch = reserveScratchDatabase(type);
    try {
      const logger = createLogger('silent');
      const opened = await Promise.allSettled(Array.from({ length: PROCESSES }, () => openDatabase({ ...scratch.options, create: true }, testSchema, { logger })));
      const failures = opened.flatMap((r) => (r.status === 'rejected' ? [String((r.reason as Error).message)] : []));
      for (const r of opened) if (r.status === 'fulfilled') await r.value.close();
      expect(failures).toEqual([]);
    } finally {
      await scratch.drop();
    }
  }, 120_000);
});
