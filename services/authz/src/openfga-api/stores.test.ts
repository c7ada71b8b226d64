/**
 * @module authz/openfga-api/stores.test
 * The OpenFGA API's stores (issue 36 §1: CreateStore, GetStore, ListStores, UpdateStore, DeleteStore, each store with
 * its own models, tuples, change log and assertions; Gatehouse's store one of them and never deleted),
 * pinned model versions (a query naming an older `authorization_model_id` answers with that version) and
 * Expand with contextual tuples, through the operations the HTTP listener serves, over the memory catalog
 * and over SQLite (the `fga_store_*` tables).
 */
import { describe, it, expect, beforeEach, afterEach } from '@jest/globals';
import { transformer } from '@openfga/syntax-transformer';
import { monotonicFactory } from 'ulid';
import { createEngine } from '../domain/index.ts';
import { createMemoryCatalog, createMemoryStore } from '../storage/memory.ts';
import { createSqlStore } from '../storage/sql/store.ts';
import { createSqlCatalog } from '../storage/sql/catalog.ts';
import type { AuthzStore, StoreCatalog } from '../storage/ports.ts';
import { runStorageSuite } from '../storage/ports.suite.ts';
import { openSqlite } from '../../test/sql-adapters.ts';
import { OpenFgaError } from './errors.ts';
import { createOpenFgaOperations, GATEHOUSE_STORE_ID, type OpenFgaOperations } from './operations.ts';
import { createStoreDirectory } from './stores.ts';

const LIMITS = { maxTuplesPerWrite: 100, maxChecksPerBatchCheck: 50, listObjectsMaxResults: 1000, listUsersMaxResults: 1000, listDeadlineMs: 0 };
const V1 = `model
  schema 1.1
type user
type group
  relations
    define member: [user]
type doc
  relations
    define editor: [user, group#member]
    define viewer: [user] or editor
`;
// the next version: editors no longer view
const V2 = V1.replace('define viewer: [user] or editor', 'define viewer: [user]');
const json = (dsl: string): Record<string, unknown> => transformer.transformDSLToJSONObject(dsl) as unknown as Record<string, unknown>;
const key = (user: string, relation: string, object: string): Record<string, string> => ({ user, relation, object });

/** The OpenFGA error `call` failed with, as `[status, code]`. */
async function failure(call: Promise<unknown>): Promise<[number, string]> {
  try {
    await call;
  } catch (err) {
    if (err instanceof OpenFgaError) return [err.status, err.code];
    throw err;
  }
  throw new Error('the call succeeded');
}

const backends: Array<[string, () => Promise<{ store: AuthzStore; catalog: StoreCatalog; close(): Promise<void> }>]> = [
  ['memory', async () => ({ store: createMemoryStore(), catalog: createMemoryCatalog(), close: async () => undefined })],
  ['SQLite', async () => {
    const db = await openSqlite();
    return { store: createSqlStore(db.port), catalog: createSqlCatalog(db.port), close: db.close };
  }],
];

describe.each(backends)('OpenFGA API stores over %s', (_name, open) => {
  let ops: OpenFgaOperations;
  let close: () => Promise<void>;
  beforeEach(async () => {
    const b = await open();
    close = b.close;
    ops = createOpenFgaOperations(createStoreDirectory({ engine: createEngine({ store: b.store }), store: b.store, catalog: b.catalog, newId: monotonicFactory() }), LIMITS);
  });
  afterEach(async () => close());

  it('creates, gets, lists in pages and deletes stores; Gatehouse\'s store is listed first and cannot be deleted', async () => {
    const a = await ops.CreateStore({ name: 'team-a' });
    await ops.CreateStore({ name: 'team b' });
    expect(a.id).toMatch(/^[0-9A-HJKMNP-TV-Z]{26}$/);
    expect(a.name).toBe('team-a');
    expect(Date.parse(String(a.created_at))).not.toBeNaN();
    expect(await ops.GetStore(String(a.id))).toEqual(a);
    const all = await ops.ListStores({});
    expect((all.stores as Array<{ id: string; name: string }>).map((s) => s.name)).toEqual(['gatehouse', 'team-a', 'team b']);
    const page1 = await ops.ListStores({ page_size: '2' });
    expect((page1.stores as Array<{ name: string }>).map((s) => s.name)).toEqual(['gatehouse', 'team-a']);
    const page2 = await ops.ListStores({ page_size: '2', continuation_token: String(page1.continuation_token) });
    expect((page2.stores as Array<{ name: string }>).map((s) => s.name)).toEqual(['team b']);
    expect(page2.continuation_token).toBe('');
    expect(((await ops.ListStores({ name: 'team-a' })).stores as Array<{ id: string }>).map((s) => s.id)).toEqual([a.id]);
    expect(await failure(ops.CreateStore({ name: '' }))).toEqual([400, 'validation_error']);
    expect(await failure(ops.ListStores({ continuation_token: 'bad' }))).toEqual([400, 'invalid_continuation_token']);
    expect(await failure(ops.DeleteStore(GATEHOUSE_STORE_ID))).toEqual([400, 'validation_error']);
    await ops.DeleteStore(String(a.id));
    expect(await failure(ops.GetStore(String(a.id)))).toEqual([404, 'store_id_not_found']);
    expect(await failure(ops.Check(String(a.id), { tuple_key: key('user:a', 'viewer', 'doc:1') }))).toEqual([404, 'store_id_not_found']);
    expect(await failure(ops.DeleteStore(String(a.id)))).toEqual([404, 'store_id_not_found']);
    expect(((await ops.ListStores({})).stores as Array<{ name: string }>).map((s) => s.name)).toEqual(['gatehouse', 'team b']);
  });

  it('UpdateStore renames a created store (its updated_at moves, its data stays); Gatehouse\'s store keeps its name', async () => {
    const a = await ops.CreateStore({ name: 'team-a' });
    const id = String(a.id);
    await ops.WriteAuthorizationModel(id, json(V1));
    await ops.Write(id, { writes: { tuple_keys: [key('user:ann', 'editor', 'doc:1')] } });
    await new Promise((r) => setTimeout(r, 5));
    const renamed = await ops.UpdateStore(id, { name: 'team alpha' });
    expect(renamed).toEqual({ id, name: 'team alpha', created_at: a.created_at, updated_at: renamed.updated_at });
    expect(Date.parse(String(renamed.updated_at))).toBeGreaterThan(Date.parse(String(a.updated_at)));
    expect(await ops.GetStore(id)).toEqual(renamed);
    expect(((await ops.ListStores({ name: 'team alpha' })).stores as Array<{ id: string }>).map((s) => s.id)).toEqual([id]);
    expect((await ops.ListStores({ name: 'team-a' })).stores).toEqual([]);
    // the store's model and tuples are untouched
    expect((await ops.Check(id, { tuple_key: key('user:ann', 'viewer', 'doc:1') })).allowed).toBe(true);
    // OpenFGA's name rule, as CreateStore's
    expect(await failure(ops.UpdateStore(id, { name: '' }))).toEqual([400, 'validation_error']);
    expect(await failure(ops.UpdateStore(id, { name: 'x'.repeat(65) }))).toEqual([400, 'validation_error']);
    expect(await failure(ops.UpdateStore(id, { name: 'ab' }))).toEqual([400, 'validation_error']);
    expect(await failure(ops.UpdateStore(id, { name: 'semi;colon' }))).toEqual([400, 'validation_error']);
    expect(await failure(ops.CreateStore({ name: 'ab' }))).toEqual([400, 'validation_error']);
    expect((await ops.UpdateStore(id, { name: 'a/b_c.d-e f^g&h@i' })).name).toBe('a/b_c.d-e f^g&h@i');
    await ops.UpdateStore(id, { name: 'team alpha' });
    expect(await failure(ops.UpdateStore(id, {}))).toEqual([400, 'validation_error']);
    // Gatehouse's store: its name is fixed; "renaming" it to that name answers the store unchanged
    expect(await failure(ops.UpdateStore(GATEHOUSE_STORE_ID, { name: 'mine' }))).toEqual([400, 'validation_error']);
    expect(await ops.UpdateStore(GATEHOUSE_STORE_ID, { name: 'gatehouse' })).toEqual(await ops.GetStore(GATEHOUSE_STORE_ID));
    expect(await failure(ops.UpdateStore('01ARZ3NDEKTSV4RRFFQ69G5FAV', { name: 'nobody' }))).toEqual([404, 'store_id_not_found']);
    await ops.DeleteStore(id);
    expect(await failure(ops.UpdateStore(id, { name: 'late' }))).toEqual([404, 'store_id_not_found']);
  });

  it('Write with on_duplicate / on_missing ignore writes nothing for what is already so (no change logged); another condition is 409 Aborted', async () => {
    const id = String((await ops.CreateStore({ name: 'dupes' })).id);
    await ops.WriteAuthorizationModel(id, json(`${V1.replace('define viewer: [user] or editor', 'define viewer: [user, user with fresh] or editor')}
condition fresh(age: int) {
  age < 10
}
`));
    const plain = key('user:ann', 'editor', 'doc:1');
    const withCondition = { ...key('user:bob', 'viewer', 'doc:1'), condition: { name: 'fresh', context: { age: 1 } } };
    await ops.Write(id, { writes: { tuple_keys: [plain, withCondition] } });
    const changes = async (): Promise<string[]> => ((await ops.ReadChanges(id, {})).changes as Array<{ operation: string; tuple_key: { user: string } }>)
      .map((c) => `${c.operation} ${c.tuple_key.user}`);
    expect(await changes()).toEqual(['TUPLE_OPERATION_WRITE user:ann', 'TUPLE_OPERATION_WRITE user:bob']);
    // the same tuples again, ignored: nothing written, nothing logged (the condition's context compared by value)
    await ops.Write(id, { writes: { tuple_keys: [plain, { ...withCondition, condition: { name: 'fresh', context: { age: 1 } } }], on_duplicate: 'ignore' } });
    expect(await changes()).toEqual(['TUPLE_OPERATION_WRITE user:ann', 'TUPLE_OPERATION_WRITE user:bob']);
    // a new tuple among ignored ones is written alone
    await ops.Write(id, { writes: { tuple_keys: [plain, key('user:cid', 'editor', 'doc:1')], on_duplicate: 'ignore' } });
    expect((await changes()).slice(2)).toEqual(['TUPLE_OPERATION_WRITE user:cid']);
    // the same key with another condition (or none) is a conflict, as OpenFGA's storage answers it
    expect(await failure(ops.Write(id, { writes: { tuple_keys: [{ ...withCondition, condition: { name: 'fresh', context: { age: 2 } } }], on_duplicate: 'ignore' } }))).toEqual([409, 'Aborted']);
    expect(await failure(ops.Write(id, { writes: { tuple_keys: [key('user:bob', 'viewer', 'doc:1')], on_duplicate: 'ignore' } }))).toEqual([409, 'Aborted']);
    // a missing delete, ignored: nothing logged; an existing one beside it is deleted
    await ops.Write(id, { deletes: { tuple_keys: [key('user:zed', 'editor', 'doc:1'), key('user:cid', 'editor', 'doc:1')], on_missing: 'ignore' } });
    await ops.Write(id, { deletes: { tuple_keys: [key('user:zed', 'editor', 'doc:1')], on_missing: 'ignore' } });
    expect((await changes()).slice(3)).toEqual(['TUPLE_OPERATION_DELETE user:cid']);
    expect(await failure(ops.Write(id, { writes: { tuple_keys: [plain] } }))).toEqual([400, 'write_failed_due_to_invalid_input']);
  });

  it('each store has its own models, tuples, change log and assertions', async () => {
    const s = String((await ops.CreateStore({ name: 'apps' })).id);
    expect(await failure(ops.Check(s, { tuple_key: key('user:a', 'viewer', 'doc:1') }))).toEqual([400, 'latest_authorization_model_not_found']);
    const own = String((await ops.WriteAuthorizationModel(GATEHOUSE_STORE_ID, json(V1))).authorization_model_id);
    const theirs = String((await ops.WriteAuthorizationModel(s, json(V1))).authorization_model_id);
    expect((await ops.ReadAuthorizationModels(s, {})).authorization_models).toHaveLength(1);
    expect(await failure(ops.ReadAuthorizationModel(s, own))).toEqual([400, 'authorization_model_not_found']);
    await ops.Write(s, { writes: { tuple_keys: [key('user:ann', 'editor', 'doc:1')] } });
    await ops.Write(GATEHOUSE_STORE_ID, { writes: { tuple_keys: [key('user:bob', 'editor', 'doc:1')] } });
    expect((await ops.Check(s, { tuple_key: key('user:ann', 'viewer', 'doc:1') })).allowed).toBe(true);
    expect((await ops.Check(s, { tuple_key: key('user:bob', 'viewer', 'doc:1') })).allowed).toBe(false);
    expect((await ops.Check(GATEHOUSE_STORE_ID, { tuple_key: key('user:ann', 'viewer', 'doc:1') })).allowed).toBe(false);
    expect((await ops.Check(GATEHOUSE_STORE_ID, { tuple_key: key('user:bob', 'viewer', 'doc:1') })).allowed).toBe(true);
    expect(((await ops.Read(s, {})).tuples as Array<{ key: { user: string } }>).map((t) => t.key.user)).toEqual(['user:ann']);
    expect((await ops.ListObjects(s, { user: 'user:ann', relation: 'viewer', type: 'doc' })).objects).toEqual(['doc:1']);
    expect((await ops.ListUsers(s, { object: { type: 'doc', id: '1' }, relation: 'viewer', user_filters: [{ type: 'user' }] })).users).toEqual([{ object: { type: 'user', id: 'ann' } }]);
    const changes = (await ops.ReadChanges(s, {})).changes as Array<{ tuple_key: { user: string }; operation: string }>;
    expect(changes.map((c) => [c.tuple_key.user, c.operation])).toEqual([['user:ann', 'TUPLE_OPERATION_WRITE']]);
    const assertions = [{ tuple_key: key('user:ann', 'viewer', 'doc:1'), expectation: true }];
    await ops.WriteAssertions(s, theirs, { assertions });
    expect((await ops.ReadAssertions(s, theirs)).assertions).toEqual(assertions);
    expect((await ops.ReadAssertions(GATEHOUSE_STORE_ID, own)).assertions).toEqual([]);
    expect(await failure(ops.ReadAssertions(GATEHOUSE_STORE_ID, theirs))).toEqual([400, 'authorization_model_not_found']);
    // deleting the store takes its data with it; Gatehouse's store keeps its own
    await ops.DeleteStore(s);
    expect((await ops.Check(GATEHOUSE_STORE_ID, { tuple_key: key('user:bob', 'viewer', 'doc:1') })).allowed).toBe(true);
  });

  it('a query naming an older model version answers with that version; an unknown id is authorization_model_not_found', async () => {
    for (const store of [GATEHOUSE_STORE_ID, String((await ops.CreateStore({ name: 'pins' })).id)]) {
      const v1 = String((await ops.WriteAuthorizationModel(store, json(V1))).authorization_model_id);
      await ops.Write(store, { writes: { tuple_keys: [key('user:ann', 'editor', 'doc:1'), key('group:eng#member', 'editor', 'doc:2')] } });
      const v2 = String((await ops.WriteAuthorizationModel(store, json(V2))).authorization_model_id);
      const check = async (model: string | null): Promise<unknown> =>
        (await ops.Check(store, { tuple_key: key('user:ann', 'viewer', 'doc:1'), ...(model ? { authorization_model_id: model } : {}) })).allowed;
      expect(await check(null)).toBe(false);
      expect(await check(v2)).toBe(false);
      expect(await check(v1)).toBe(true);
      const batch = await ops.BatchCheck(store, { authorization_model_id: v1, checks: [{ tuple_key: key('user:ann', 'viewer', 'doc:1'), correlation_id: 'x' }] });
      expect(batch.result).toEqual({ x: { allowed: true } });
      expect((await ops.ListObjects(store, { authorization_model_id: v1, user: 'user:ann', relation: 'viewer', type: 'doc' })).objects).toEqual(['doc:1']);
      expect((await ops.ListObjects(store, { user: 'user:ann', relation: 'viewer', type: 'doc' })).objects).toEqual([]);
      expect((await ops.ListUsers(store, { authorization_model_id: v1, object: { type: 'doc', id: '1' }, relation: 'viewer', user_filters: [{ type: 'user' }] })).users)
        .toEqual([{ object: { type: 'user', id: 'ann' } }]);
      const tree = (await ops.Expand(store, { authorization_model_id: v1, tuple_key: { relation: 'viewer', object: 'doc:1' } })).tree as { root: { union?: unknown } };
      expect(tree.root.union).toBeDefined();
      // a tuple written after the pin is answered by the pinned version on the next request
      await ops.Write(store, { writes: { tuple_keys: [key('user:cy', 'editor', 'doc:1')] } });
      expect((await ops.Check(store, { authorization_model_id: v1, tuple_key: key('user:cy', 'viewer', 'doc:1') })).allowed).toBe(true);
      // a write naming the older version is validated against it
      await ops.Write(store, { authorization_model_id: v1, writes: { tuple_keys: [key('user:dee', 'viewer', 'doc:3')] } });
      expect(await failure(ops.Check(store, { authorization_model_id: '01ARZ3NDEKTSV4RRFFQ69G5FAV', tuple_key: key('user:ann', 'viewer', 'doc:1') }))).toEqual([400, 'authorization_model_not_found']);
    }
  });

  it('Expand counts contextual tuples as stored', async () => {
    await ops.WriteAuthorizationModel(GATEHOUSE_STORE_ID, json(V1));
    await ops.Write(GATEHOUSE_STORE_ID, { writes: { tuple_keys: [key('user:ann', 'editor', 'doc:1')] } });
    const leaf = async (contextual: unknown[]): Promise<unknown> => {
      const tree = (await ops.Expand(GATEHOUSE_STORE_ID, { tuple_key: { relation: 'editor', object: 'doc:1' }, contextual_tuples: { tuple_keys: contextual } })).tree as { root: { leaf: { users: { users: string[] } } } };
      return tree.root.leaf.users.users;
    };
    expect(await leaf([])).toEqual(['user:ann']);
    expect(await leaf([key('group:eng#member', 'editor', 'doc:1'), key('user:ann', 'editor', 'doc:1'), key('user:bo', 'editor', 'doc:2')])).toEqual(['group:eng#member', 'user:ann']);
    expect(await failure(ops.Expand(GATEHOUSE_STORE_ID, { tuple_key: { relation: 'editor', object: 'doc:1' }, contextual_tuples: { tuple_keys: [key('user:x', 'nope', 'doc:1')] } }))).toEqual([400, 'invalid_expand_input']);
  });
});

// a created store's rows pass the same storage conformance suite as Gatehouse's, and neither sees the other's
runStorageSuite('sqlite, a created store (fga_store_* tables)', async () => {
  const db = await openSqlite();
  const catalog = createSqlCatalog(db.port);
  const { id } = await catalog.create({ id: '01KB0000000000000000000001', name: 'suite' });
  // rows of Gatehouse's store and of another store around it, which the suite must never see
  await createSqlStore(db.port).writeTuples([{ user: 'user:noise', relation: 'r', object: 'doc:noise' }], []);
  await catalog.create({ id: '01KB0000000000000000000002', name: 'other' });
  await catalog.open('01KB0000000000000000000002').writeTuples([{ user: 'user:noise', relation: 'r', object: 'doc:noise' }], []);
  return { store: catalog.open(id), close: db.close };
});
