/**
 * @module @gatehouse/db/create-child.fixture
 * Run as a separate process by database-create.test.ts: writes `ready` to stderr once loaded and waits
 * for a line on stdin (the test's start barrier), then opens the database of type argv[2] at argv[3]
 * with `create: true` (`--database-create`), commits one note, closes, then prints "ok"; on failure
 * prints the error's message and cause to stderr and exits 1.
 */
import { randomUUID } from 'node:crypto';
import { createLogger } from '@gatehouse/observability';
import { openDatabase, type DatabaseType } from './index.ts';
import { Note, testSchema } from './test-schema.ts';

const [, , type, url] = process.argv;
// a start barrier: say "ready" once the modules are loaded, then wait for the parent's "go" on stdin,
// so every process reaches CREATE DATABASE and the migrations within milliseconds of the others (a
// loaded machine otherwise staggers their module loading by seconds and no race ever happens)
process.stderr.write('ready\n');
await new Promise<void>((resolve) => process.stdin.once('data', () => resolve()));
process.stdin.destroy();
try {
  const db = await openDatabase({ type: type as DatabaseType, url: url!, create: true }, testSchema, { logger: createLogger('silent') });
  await db.transactional(async (em) => {
    em.persist(em.create(Note, { id: randomUUID(), body: `pid ${process.pid}`, createdAt: 0 }));
  });
  await db.close();
  process.stdout.write('ok');
} catch (err) {
  const cause = (err as { cause?: unknown }).cause;
  process.stderr.write(`${(err as Error).message}${cause instanceof Error ? `: ${cause.message}` : ''}\n`);
  process.exit(1);
}
