/**
 * @module @gatehouse/db/sqlite-child.fixture
 * Run as a separate process by sqlite-multiprocess.test.ts: opens the SQLite file given as
 * argv[2] and commits argv[3] notes, each with an outbox row, then prints "ok".
 */
import { randomUUID } from 'node:crypto';
import { createLogger } from '@gatehouse/observability';
import { openDatabase } from './index.ts';
import { Note, testSchema } from './test-schema.ts';

const [, , file, count] = process.argv;
const db = await openDatabase({ type: 'sqlite', url: file! }, testSchema, { logger: createLogger('silent') });
for (let i = 0; i < Number(count); i++) {
  await db.transactional(async (em) => {
    const id = randomUUID();
    em.persist(em.create(Note, { id, body: `pid ${process.pid}`, createdAt: i }));
    db.outbox.enqueue(em, { id: randomUUID(), name: 'note.created', source: 'dbtest', occurredAt: 1, data: { id } });
  });
}
await db.close();
process.stdout.write('ok');
