/** @module memory.test: the in-memory store passes the storage conformance suite. */
import { describe, expect, it } from '@jest/globals';
import { createMemoryStore } from './memory.ts';
import { runStorageSuite } from './ports.suite.ts';

runStorageSuite('memory', async () => ({ store: createMemoryStore(), close: async () => undefined }));

describe('memory store: the revision without I/O', () => {
  it('knows its revision at once, before and after every write', async () => {
    const store = createMemoryStore();
    expect(store.knownRevision!()).toBe(await store.revision());
    const r1 = await store.writeTuples([{ user: 'user:anne', relation: 'viewer', object: 'doc:1' }], []);
    expect(store.knownRevision!()).toBe(r1);
    const r2 = await store.appendModel({ id: '01ARZ3NDEKTSV4RRFFQ69G5FAV', dsl: 'model' });
    expect(store.knownRevision!()).toBe(r2);
    expect(r2).toBeGreaterThan(r1);
  });
});
