/** @module authz/storage/ports.suite: the conformance suite every AuthzStore implementation passes (STYLE §8; OpenFGA pkg/storage/test). */
import { describe, it, expect, beforeEach, afterEach } from '@jest/globals';
import type { AuthzStore, TupleKey } from './ports.ts';
import { TupleConflictError } from './ports.ts';

/** A store under test and how to dispose of it. */
export interface StoreHarness {
  store: AuthzStore;
  close(): Promise<void>;
}

const t = (user: string, relation: string, object: string): TupleKey => ({ user, relation, object });
const plain = (rows: TupleKey[]): TupleKey[] => rows.map(({ user, relation, object }) => ({ user, relation, object }));

/** Registers the suite under `name`; `open` must return an empty store each time. */
export function runStorageSuite(name: string, open: () => Promise<StoreHarness>): void {
  describe(`storage conformance: ${name}`, () => {
    let h: StoreHarness;
    beforeEach(async () => {
      h = await open();
    });
    afterEach(async () => {
      await h.close();
    });

    it('starts empty', async () => {
      expect(await h.store.latestModel()).toBeNull();
      expect(await h.store.hasTuples()).toBe(false);
      expect(await h.store.readAll()).toEqual([]);
    });

    it('increases the revision on every write', async () => {
      const r0 = await h.store.revision();
      const r1 = await h.store.writeTuples([t('user:anne', 'viewer', 'doc:1')], []);
      expect(r1).toBeGreaterThan(r0);
      expect(await h.store.revision()).toBe(r1);
      const r2 = await h.store.appendModel({ id: '01ARZ3NDEKTSV4RRFFQ69G5FAV', dsl: 'model' });
      expect(r2).toBeGreaterThan(r1);
      const r3 = await h.store.writeTuples([], [t('user:anne', 'viewer', 'doc:1')]);
      expect(r3).toBeGreaterThan(r2);
      // a revision known without I/O is always the one revision() answers
      const known = h.store.knownRevision?.() ?? null;
      if (known !== null) expect(known).toBe(await h.store.revision());
    });

    it('writes and deletes atomically, ignoring duplicates and missing tuples', async () => {
      await h.store.writeTuples([t('user:anne', 'viewer', 'doc:1'), t('user:anne', 'viewer', 'doc:1'), t('group:eng#member', 'viewer', 'doc:1')], []);
      await h.store.writeTuples([t('user:anne', 'viewer', 'doc:1')], [t('user:zed', 'viewer', 'doc:9')]);
      expect(plain(await h.store.readAll())).toEqual([t('user:anne', 'viewer', 'doc:1'), t('group:eng#member', 'viewer', 'doc:1')]);
      await h.store.writeTuples([t('user:bob', 'viewer', 'doc:2')], [t('user:anne', 'viewer', 'doc:1')]);
      expect(plain(await h.store.readAll())).toEqual([t('group:eng#member', 'viewer', 'doc:1'), t('user:bob', 'viewer', 'doc:2')]);
    });

    it('refuses, under conflicts, an existing write or a missing delete: nothing of the call is written, the revision stays', async () => {
      const strict = { existing: 'error', missing: 'error' } as const;
      await h.store.writeTuples([t('user:anne', 'viewer', 'doc:1')], [], strict);
      const r = await h.store.revision();
      const existing = await h.store.writeTuples([t('user:bob', 'viewer', 'doc:1'), t('user:anne', 'viewer', 'doc:1')], [], strict).catch((e: unknown) => e);
      expect(existing).toBeInstanceOf(TupleConflictError);
      expect(existing).toMatchObject({ kind: 'existing', tuple: t('user:anne', 'viewer', 'doc:1') });
      const missing = await h.store.writeTuples([t('user:carl', 'viewer', 'doc:1')], [t('user:zed', 'viewer', 'doc:9')], strict).catch((e: unknown) => e);
      expect(missing).toMatchObject({ kind: 'missing', tuple: t('user:zed', 'viewer', 'doc:9') });
      expect(plain(await h.store.readAll())).toEqual([t('user:anne', 'viewer', 'doc:1')]);
      expect(await h.store.revision()).toBe(r);
      // each side refuses only when asked: an existing write ignored while a missing delete is refused
      await h.store.writeTuples([t('user:anne', 'viewer', 'doc:1')], [t('user:anne', 'viewer', 'doc:1')], { existing: 'ignore', missing: 'error' });
      expect(await h.store.readAll()).toEqual([]);
    });

    it('of concurrent identical writes under conflicts, exactly one succeeds and the tuple is written once', async () => {
      const strict = { existing: 'error', missing: 'error' } as const;
      const writes = await Promise.allSettled(Array.from({ length: 4 }, () => h.store.writeTuples([t('user:anne', 'viewer', 'doc:race')], [], strict)));
      expect(writes.filter((w) => w.status === 'fulfilled')).toHaveLength(1);
      for (const w of writes) if (w.status === 'rejected') expect(w.reason).toMatchObject({ kind: 'existing', tuple: t('user:anne', 'viewer', 'doc:race') });
      expect(plain(await h.store.readAll())).toEqual([t('user:anne', 'viewer', 'doc:race')]);
      // and of concurrent identical deletes, exactly one
      const deletes = await Promise.allSettled(Array.from({ length: 4 }, () => h.store.writeTuples([], [t('user:anne', 'viewer', 'doc:race')], strict)));
      expect(deletes.filter((w) => w.status === 'fulfilled')).toHaveLength(1);
      for (const w of deletes) if (w.status === 'rejected') expect(w.reason).toMatchObject({ kind: 'missing' });
      expect(await h.store.readAll()).toEqual([]);
    });

    it('keeps a tuple condition (name and JSON context) through reads and the change log; the key ignores it', async () => {
      const before = await h.store.revision();
      const conditioned: TupleKey = { ...t('user:anne', 'viewer', 'doc:1'), condition: { name: 'in_hours', context: { tz: 'UTC', hours: [9, 17], nested: { ok: true } } } };
      const bare: TupleKey = { ...t('user:bob', 'viewer', 'doc:1'), condition: { name: 'c', context: null } };
      await h.store.writeTuples([conditioned, bare, t('user:carl', 'viewer', 'doc:1')], []);
      // the same key with another condition is a no-op: the stored condition stays
      await h.store.writeTuples([{ ...t('user:anne', 'viewer', 'doc:1'), condition: { name: 'other', context: null } }], []);
      const expected = [conditioned, bare, t('user:carl', 'viewer', 'doc:1')];
      expect(await h.store.readAll()).toEqual(expected);
      expect((await h.store.readPage({}, 0, 10)).tuples.map(({ seq: _seq, writtenAt: _at, ...k }) => k)).toEqual(expected);
      expect(await h.store.readByObject('doc', '1', 'viewer')).toEqual(expected);
      const changes = await h.store.readChanges(before, before + 1);
      expect(changes.map((c) => c.tuple)).toEqual(expected);
    });

    it('matches exactly and case-sensitively', async () => {
      await h.store.writeTuples([t('user:Anne', 'viewer', 'doc:A'), t('user:anne', 'viewer', 'doc:a')], []);
      expect(plain((await h.store.readPage({ user: 'user:anne' }, 0, 10)).tuples)).toEqual([t('user:anne', 'viewer', 'doc:a')]);
      expect(plain(await h.store.readByObject('doc', 'A', 'viewer'))).toEqual([t('user:Anne', 'viewer', 'doc:A')]);
    });

    it('reads pages in stable insertion order with filters', async () => {
      const rows = [
        t('user:a', 'viewer', 'doc:1'),
        t('user:b', 'editor', 'doc:1'),
        t('user:a', 'viewer', 'folder:1'),
        t('user:a', 'viewer', 'doc:2'),
        t('user:c', 'viewer', 'doc:1'),
      ];
      await h.store.writeTuples(rows, []);
      const first = await h.store.readPage({}, 0, 2);
      expect(plain(first.tuples)).toEqual(rows.slice(0, 2));
      expect(first.more).toBe(true);
      const rest = await h.store.readPage({}, first.tuples[1]!.seq, 10);
      expect(plain(rest.tuples)).toEqual(rows.slice(2));
      expect(rest.more).toBe(false);
      expect(plain((await h.store.readPage({ objectType: 'doc' }, 0, 10)).tuples)).toEqual([rows[0], rows[1], rows[3], rows[4]]);
      expect(plain((await h.store.readPage({ objectType: 'doc', objectId: '1', relation: 'viewer' }, 0, 10)).tuples)).toEqual([rows[0], rows[4]]);
      expect(plain((await h.store.readPage({ user: 'user:a', relation: 'viewer' }, 0, 10)).tuples)).toEqual([rows[0], rows[2], rows[3]]);
      const exact = await h.store.readPage({ user: 'user:c' }, 0, 1);
      expect(exact.more).toBe(false);
    });

    it('answers forward and reverse lookups', async () => {
      await h.store.writeTuples([t('user:a', 'viewer', 'doc:1'), t('team:x#member', 'viewer', 'doc:1'), t('user:a', 'viewer', 'doc:2'), t('user:a', 'viewer', 'folder:1')], []);
      expect(plain(await h.store.readByObject('doc', '1', 'viewer'))).toEqual([t('user:a', 'viewer', 'doc:1'), t('team:x#member', 'viewer', 'doc:1')]);
      expect(plain(await h.store.readByUser('user:a', 'viewer', 'doc'))).toEqual([t('user:a', 'viewer', 'doc:1'), t('user:a', 'viewer', 'doc:2')]);
      expect(await h.store.readByUser('team:x#member', 'viewer', 'folder')).toEqual([]);
    });

    it('deletes the tuples of a user as user and as object', async () => {
      await h.store.writeTuples([t('user:a', 'viewer', 'doc:1'), t('user:b', 'manager', 'user:a'), t('user:b', 'viewer', 'doc:1'), t('user:a#friend', 'viewer', 'doc:3')], []);
      const before = await h.store.revision();
      const { deleted, revision } = await h.store.deleteUserTuples('user:a');
      expect(plain(deleted)).toEqual([t('user:a', 'viewer', 'doc:1'), t('user:b', 'manager', 'user:a')]);
      expect(revision).toBeGreaterThan(before);
      expect(plain(await h.store.readAll())).toEqual([t('user:b', 'viewer', 'doc:1'), t('user:a#friend', 'viewer', 'doc:3')]);
    });

    it('appends model versions, the newest latest, and resets only without tuples', async () => {
      await h.store.appendModel({ id: '01ARZ3NDEKTSV4RRFFQ69G5FAA', dsl: 'one' });
      await h.store.appendModel({ id: '01ARZ3NDEKTSV4RRFFQ69G5FAB', dsl: 'two' });
      expect(await h.store.latestModel()).toEqual({ id: '01ARZ3NDEKTSV4RRFFQ69G5FAB', dsl: 'two' });
      await h.store.writeTuples([t('user:a', 'viewer', 'doc:1')], []);
      const rev = await h.store.revision();
      expect(await h.store.resetIfEmpty()).toBe(false);
      expect(await h.store.latestModel()).toEqual({ id: '01ARZ3NDEKTSV4RRFFQ69G5FAB', dsl: 'two' });
      expect(await h.store.revision()).toBeGreaterThanOrEqual(rev);
      await h.store.writeTuples([], [t('user:a', 'viewer', 'doc:1')]);
      expect(await h.store.resetIfEmpty()).toBe(true);
      expect(await h.store.latestModel()).toBeNull();
    });

    it('logs every revision in the change log, in order', async () => {
      const r0 = await h.store.revision();
      const r1 = await h.store.writeTuples([t('user:a', 'viewer', 'doc:1'), t('group:g#member', 'viewer', 'doc:1')], [t('user:b', 'viewer', 'doc:1')]);
      const r2 = await h.store.appendModel({ id: '01ARZ3NDEKTSV4RRFFQ69G5FAD', dsl: 'model' });
      const { revision: r3 } = await h.store.deleteUserTuples('user:nobody');
      const { revision: r4 } = await h.store.deleteUserTuples('user:a');
      const changes = (await h.store.readChanges(r0, r4)).map(({ revision, op, tuple }) => ({ revision, op, tuple }));
      expect(changes).toEqual([
        { revision: r1, op: 'write', tuple: t('user:a', 'viewer', 'doc:1') },
        { revision: r1, op: 'write', tuple: t('group:g#member', 'viewer', 'doc:1') },
        { revision: r1, op: 'delete', tuple: t('user:b', 'viewer', 'doc:1') },
        { revision: r2, op: 'model', tuple: null },
        { revision: r3, op: 'none', tuple: null },
        { revision: r4, op: 'delete', tuple: t('user:a', 'viewer', 'doc:1') },
      ]);
      expect((await h.store.readChanges(r1, r2)).map((c) => c.op)).toEqual(['model']);
      expect(await h.store.readChanges(r4, r4 + 10)).toEqual([]);
    });

    it('records when each tuple and each change was written (OpenFGA\'s timestamp of Read and ReadChanges, issue 36)', async () => {
      const before = Date.now();
      const r0 = await h.store.revision();
      await h.store.writeTuples([t('user:a', 'viewer', 'doc:1')], []);
      await new Promise((resolve) => setTimeout(resolve, 20));
      const middle = Date.now();
      await h.store.writeTuples([t('user:b', 'viewer', 'doc:1')], [t('user:a', 'viewer', 'doc:1')]);
      const after = Date.now();
      const [b] = (await h.store.readPage({}, 0, 10)).tuples;
      expect(b?.user).toBe('user:b');
      expect(b?.writtenAt).toBeGreaterThanOrEqual(middle);
      expect(b?.writtenAt).toBeLessThanOrEqual(after);
      const changes = await h.store.readChanges(r0, await h.store.revision());
      expect(changes.map((c) => c.op)).toEqual(['write', 'write', 'delete']);
      expect(changes[0]!.at).toBeGreaterThanOrEqual(before);
      expect(changes[0]!.at).toBeLessThan(middle);
      expect(changes[1]!.at).toBeGreaterThanOrEqual(middle);
      expect(changes[2]!.at).toBe(changes[1]!.at);
      // the lookups the engine evaluates with answer bare tuples
      expect(await h.store.readByObject('doc', '1', 'viewer')).toEqual([t('user:b', 'viewer', 'doc:1')]);
    });

    it('keeps assertions per model version, replaced whole, dropped by a reset (OpenFGA assertions, issue 36)', async () => {
      const id = '01ARZ3NDEKTSV4RRFFQ69G5FAE';
      expect(await h.store.readModel(id)).toBeNull();
      await h.store.appendModel({ id, dsl: 'model' });
      expect(await h.store.readModel(id)).toEqual({ id, dsl: 'model' });
      expect(await h.store.readAssertions(id)).toBeNull();
      const before = await h.store.revision();
      await h.store.writeAssertions(id, '[{"expectation":true}]');
      await h.store.writeAssertions(id, '[{"expectation":false}]');
      expect(await h.store.readAssertions(id)).toBe('[{"expectation":false}]');
      expect(await h.store.revision()).toBe(before);
      expect(await h.store.resetIfEmpty()).toBe(true);
      expect(await h.store.readAssertions(id)).toBeNull();
    });

    it('reads any model version by id and lists them newest first, in pages (OpenFGA ReadAuthorizationModel(s))', async () => {
      const ids = ['01ARZ3NDEKTSV4RRFFQ69G5FA1', '01ARZ3NDEKTSV4RRFFQ69G5FA2', '01ARZ3NDEKTSV4RRFFQ69G5FA3'];
      for (const [i, id] of ids.entries()) await h.store.appendModel({ id, dsl: `model ${i}` });
      expect(await h.store.readModel(ids[0]!)).toEqual({ id: ids[0], dsl: 'model 0' });
      expect(await h.store.readModel('01ARZ3NDEKTSV4RRFFQ69G5FA9')).toBeNull();
      expect((await h.store.listModels(null, 2)).map((m) => m.id)).toEqual([ids[2], ids[1]]);
      expect(await h.store.listModels(ids[1]!, 2)).toEqual([{ id: ids[0], dsl: 'model 0' }]);
      expect(await h.store.listModels(ids[0]!, 2)).toEqual([]);
    });

    it('stores large model texts unchanged', async () => {
      const dsl = `model\n  schema 1.1\n${'type t\n'.repeat(30000)}`;
      await h.store.appendModel({ id: '01ARZ3NDEKTSV4RRFFQ69G5FAC', dsl });
      expect((await h.store.latestModel())?.dsl).toBe(dsl);
    });
  });
}
