/**
 * @module @gatehouse/db/database-create.test
 * `--database-create` with several processes starting at once on one fresh PostgreSQL or MariaDB
 * database (issue 37 §5: six split services started together used to lose four to "database already
 * exists" / a duplicate key): every process comes up, the database exists once and each migration is
 * recorded once.
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

function run(type: string, url: string): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolve) => {
    // eslint-disable-next-line no-restricted-properties -- passes the inherited environment through; reads no configuration
    const p = spawn(process.execPath, [child, type, url], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NODE_OPTIONS: '' } });
    let out = '';
    let err = '';
    p.stdout.on('data', (d) => (out += d));
    p.stderr.on('data', (d) => (err += d));
    p.on('exit', (code) => resolve({ code, out, err }));
  });
}

describe.each(['postgres', 'mariadb'] as const)('--database-create from %s processes starting at once', (type) => {
  it(`${PROCESSES} processes create, migrate and use one fresh database, all of them`, async () => {
    const scratch = reserveScratchDatabase(type);
    try {
      const url = scratch.options.url!;
      const results = await Promise.all(Array.from({ length: PROCESSES }, () => run(type, url)));
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
});
