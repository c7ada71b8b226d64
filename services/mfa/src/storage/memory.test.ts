/** @module memory.test: the in-memory MfaStore passes the conformance suite. */
import { createMemoryMfaStore } from './memory.ts';
import { describeMfaStore } from './ports.suite.ts';
import { describePasskeyStore } from './passkeys.suite.ts';

const openMemory = async (clock: () => number) => {
  const store = createMemoryMfaStore({ clock });
  return { store, outbox: async () => [...store.published], close: async () => undefined };
};

describeMfaStore('memory', openMemory);
describePasskeyStore('memory', openMemory);
