/** @module conformance.test: the YAML conformance data against the memory store and SQLite, checks also through the partial index. */
import { createMemoryStore } from '../src/storage/memory.ts';
import { createSqlStore } from '../src/storage/sql/store.ts';
import { describeConformance } from './conformance.ts';
import { openSqlite } from './sql-adapters.ts';

describeConformance('memory', async () => ({ store: createMemoryStore(), close: async () => undefined }));
describeConformance('sqlite', async () => {
  const db = await openSqlite();
  return { store: createSqlStore(db.port), close: db.close };
});

// the same checks answered while the full snapshot load is held open (issue 22 §3)
describeConformance('memory', async () => ({ store: createMemoryStore(), close: async () => undefined }), { partial: true });
describeConformance('sqlite', async () => {
  const db = await openSqlite();
  return { store: createSqlStore(db.port), close: db.close };
}, { partial: true });
