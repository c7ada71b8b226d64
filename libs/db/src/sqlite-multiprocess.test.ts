/**
 * @module @gatehouse/db/sqlite-multiprocess.test
 * Two processes open one SQLite file at once (WAL + busy_timeout + the migration write lock):
 * both start, each migration is recorded once, and every write of both lands.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, it, expect } from '@jest/globals';
import { createLogger } from '@gatehouse/observability';
import { createScratchDatabase, openDatabase } from './index.ts';
import { testSchema } from './test-schema.ts';

const child = fileURLToPath(new URL('./sqlite-child.fixture.ts', import.meta.url));

function run(file: string, count: number): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolve) => {
    // the child inherits the environment except jest's NODE_OPTIONS (--experimental-vm-modules)
    // eslint-disable-next-line no-restricted-properties -- passes the inherited environment through; reads no configuration
    const p = spawn(process.execPath, [child, file, String(count)], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NODE_OPTIONS: '' } });
    let out = '';
    let err = '';
    p.stdout.on('data', (d) => (out += d));
    p.stderr.on('data', (d) => (err += d));
    p.on('exit', (code) => resolve({ code, out, err }));
  });
}

describe('SQLite shared by two processes', () => {
  it('both open and migrate the same new file at once and all writes land', async () => {
    const scratch = await createScratchDatabase('sqlite');
    try {
      const file = scratch.options.url!;
      const results = await Promise.all([run(file, 25), run(file, 25)]);
      for (const r of results) expect({ code: r.code, out: r.out, err: r.err }).toEqual({ code: 0, out: 'ok', err: '' });
      const db = await openDatabase(scratch.options, testSchema, { logger: createLogger('silent') });
      const migrations = await db.execute<{ name: string }>('select name from dbtest_migrations order by name');
      expect(migrations.map((m) => m.name)).toEqual(['0000_dbtest_outbox', '0000_dbtest_outbox_trace_parent', '0001_notes', '0002_notes_body_idx']);
      expect(await db.execute('select id from dbtest_notes')).toHaveLength(50);
      expect(await db.execute('select seq from dbtest_outbox')).toHaveLength(50);
      const [mode] = await db.execute<{ journal_mode: string }>('pragma journal_mode');
      expect(mode!.journal_mode).toBe('wal');
      await db.close();
    } finally {
      await scratch.drop();
    }
  }, 60_000);
});
