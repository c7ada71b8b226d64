/** @module memory.test: the in-memory store passes the storage conformance suite. */
import { createMemoryStore } from './memory.ts';
import { runStorageSuite } from './storage.suite.ts';

runStorageSuite('memory', async () => ({ store: createMemoryStore(), close: async () => undefined }));
