/** @module memory.test: the in-memory MfaStore passes the conformance suite. */
import { createMemoryMfaStore } from './memory.ts';
import { describeMfaStore } from './ports.suite.ts';

describeMfaStore('memory', async (clock) => {
  const store = createMemoryMfaStore({ clock });
  return { store, outbox: async () => [...store.published], close: async () => undefined };
});
