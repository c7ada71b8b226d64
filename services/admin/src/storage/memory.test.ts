/** @module memory.test: the in-memory AdminStore passes the conformance suite. */
import { createMemoryAdminStore } from './memory.ts';
import { describeAdminStore } from './ports.suite.ts';

describeAdminStore('memory', async (clock) => {
  const store = createMemoryAdminStore(clock);
  return { store, outbox: async () => [...store.published], close: async () => undefined };
});
