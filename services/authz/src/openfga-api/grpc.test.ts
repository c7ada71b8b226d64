/**
 * @module authz/openfga-api/grpc.test
 * The gRPC form of OpenFGA's API (issue 36 §1, `--openfga-grpc-port`), called by grpcurl (a third-party
 * client, scripts/install-grpcurl.sh) with OpenFGA's published descriptors (`openfga-v1.binpb`): stores,
 * a model, writes with a condition, Check with context and contextual tuples, BatchCheck, ListObjects,
 * StreamedListObjects, ListUsers, Read and ReadChanges timestamps, Expand, assertions; OpenFGA's gRPC error
 * codes (the numbers of openfga.v1's ErrorCode, NotFoundErrorCode and AuthErrorCode, e.g. 2000 validation_error,
 * 5002 store_id_not_found, 1500 unauthenticated) and the preshared key.
 */
import { describe, it, expect, beforeAll, afterAll } from '@jest/globals';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { Registry } from 'prom-client';
import { transformer } from '@openfga/syntax-transformer';
import { monotonicFactory } from 'ulid';
import { createLogger } from '@gatehouse/observability';
import { createEngine } from '../domain/index.ts';
import { createMemoryCatalog, createMemoryStore } from '../storage/memory.ts';
import { startOpenFgaGrpc, type OpenFgaGrpcServer } from './grpc.ts';
import { createOpenFgaOperations, GATEHOUSE_STORE_ID } from './operations.ts';
import { createStoreDirectory } from './stores.ts';

const here = path.dirname(fileURLToPath(import.meta.url));
const GRPCURL = path.resolve(here, '../../../../.tools/bin/grpcurl');
const PROTOSET = path.resolve(here, 'openfga-v1.binpb');
const KEY = 'grpc-test-key';
const MODEL = `model
  schema 1.1
type user
type group
  relations
    define member: [user]
type doc
  relations
    define owner: [user]
    define viewer: [user, group#member, user with in_hours] or owner
condition in_hours(hour: int) {
  hour >= 9 && hour < 17
}
`;

describe('OpenFGA API, gRPC form, called by grpcurl', () => {
  let server: OpenFgaGrpcServer;
  /** grpcurl's answer (JSON) to `method` with `body`; rejects with its stderr when the call fails */
  const call = async (method: string, body: unknown, key = KEY): Promise<any> => {
    const { stdout } = await promisify(execFile)(GRPCURL, [
      '-plaintext', '-protoset', PROTOSET, '-H', `authorization: Bearer ${key}`, '-d', JSON.stringify(body),
      `127.0.0.1:${server.port}`, `openfga.v1.OpenFGAService/${method}`,
    ]);
    // a streaming answer is several JSON objects one after the other
    return method === 'StreamedListObjects' ? JSON.parse(`[${stdout.trim().replace(/}\n{/g, '},{')}]`) : JSON.parse(stdout);
  };
  const failure = async (method: string, body: unknown, key = KEY): Promise<string> => {
    try {
      await call(method, body, key);
    } catch (err) {
      return String((err as { stderr?: string }).stderr);
    }
    throw new Error('the call succeeded');
  };

  beforeAll(async () => {
    if (!existsSync(GRPCURL)) throw new Error(`grpcurl not found at ${GRPCURL}: run scripts/install-grpcurl.sh`);
    const store = createMemoryStore();
    const ops = createOpenFgaOperations(createStoreDirectory({ engine: createEngine({ store }), store, catalog: createMemoryCatalog(), newId: monotonicFactory() }), {
      maxTuplesPerWrite: 100, maxChecksPerBatchCheck: 50, listObjectsMaxResults: 1000, listUsersMaxResults: 1000, listDeadlineMs: 0,
    });
    server = await startOpenFgaGrpc({ host: '127.0.0.1', port: 0, ops, authn: { method: 'preshared', keys: [KEY] }, logger: createLogger('silent'), registry: new Registry() });
  });
  afterAll(async () => server?.close());

  it('serves stores, models, writes and every query with OpenFGA\'s messages', async () => {
    const stores = await call('ListStores', {});
    expect(stores.stores.map((s: { id: string }) => s.id)).toEqual([GATEHOUSE_STORE_ID]);
    const created = await call('CreateStore', { name: 'grpc-store' });
    expect(created.name).toBe('grpc-store');
    expect(Date.parse(created.created_at)).not.toBeNaN();
    const storeId: string = created.id;
    expect((await call('GetStore', { store_id: storeId })).name).toBe('grpc-store');
    const renamed = await call('UpdateStore', { store_id: storeId, name: 'grpc store renamed' });
    expect([renamed.id, renamed.name, renamed.created_at]).toEqual([storeId, 'grpc store renamed', created.created_at]);
    expect((await call('GetStore', { store_id: storeId })).name).toBe('grpc store renamed');
    const model = transformer.transformDSLToJSONObject(MODEL) as unknown as Record<string, unknown>;
    const { authorization_model_id: authorizationModelId } = await call('WriteAuthorizationModel', { store_id: storeId, ...model });
    expect(authorizationModelId).toMatch(/^[0-9A-HJKMNP-TV-Z]{26}$/);
    const read = await call('ReadAuthorizationModel', { store_id: storeId, id: authorizationModelId });
    expect(read.authorization_model.type_definitions.map((t: { type: string }) => t.type)).toEqual(['user', 'group', 'doc']);
    expect(Object.keys(read.authorization_model.conditions)).toEqual(['in_hours']);
    await call('Write', {
      store_id: storeId,
      writes: { tuple_keys: [
        { user: 'user:ann', relation: 'owner', object: 'doc:1' },
        { user: 'group:eng#member', relation: 'viewer', object: 'doc:2' },
        { user: 'user:tim', relation: 'viewer', object: 'doc:3', condition: { name: 'in_hours', context: { hour: 10 } } },
        { user: 'user:tom', relation: 'viewer', object: 'doc:3', condition: { name: 'in_hours' } },
      ] },
    });
    const check = async (extra: object): Promise<boolean> => (await call('Check', { store_id: storeId, ...extra })).allowed === true;
    expect(await check({ tuple_key: { user: 'user:ann', relation: 'viewer', object: 'doc:1' } })).toBe(true);
    expect(await check({ tuple_key: { user: 'user:bob', relation: 'viewer', object: 'doc:2' } })).toBe(false);
    expect(await check({ tuple_key: { user: 'user:bob', relation: 'viewer', object: 'doc:2' }, contextual_tuples: { tuple_keys: [{ user: 'user:bob', relation: 'member', object: 'group:eng' }] } })).toBe(true);
    expect(await check({ tuple_key: { user: 'user:tim', relation: 'viewer', object: 'doc:3' } })).toBe(true);
    expect(await check({ tuple_key: { user: 'user:tom', relation: 'viewer', object: 'doc:3' }, context: { hour: 11 } })).toBe(true);
    expect(await check({ tuple_key: { user: 'user:tom', relation: 'viewer', object: 'doc:3' }, context: { hour: 20 } })).toBe(false);
    const batch = await call('BatchCheck', {
      store_id: storeId,
      checks: [
        { tuple_key: { user: 'user:ann', relation: 'viewer', object: 'doc:1' }, correlation_id: 'a' },
        { tuple_key: { user: 'user:ann', relation: 'nope', object: 'doc:1' }, correlation_id: 'b' },
      ],
    });
    expect(batch.result.a).toEqual({ allowed: true });
    expect(batch.result.b.error.input_error).toBe('validation_error');
    expect((await call('ListObjects', { store_id: storeId, type: 'doc', relation: 'viewer', user: 'user:ann' })).objects).toEqual(['doc:1']);
    const streamed = await call('StreamedListObjects', { store_id: storeId, type: 'doc', relation: 'viewer', user: 'user:tim' });
    expect(streamed.map((r: { object: string }) => r.object)).toEqual(['doc:3']);
    const users = await call('ListUsers', { store_id: storeId, object: { type: 'doc', id: '2' }, relation: 'viewer', user_filters: [{ type: 'group', relation: 'member' }] });
    expect(users.users).toEqual([{ userset: { type: 'group', id: 'eng', relation: 'member' } }]);
    const tuples = await call('Read', { store_id: storeId, tuple_key: { object: 'doc:1' } });
    expect(tuples.tuples.map((t: { key: { user: string } }) => t.key.user)).toEqual(['user:ann']);
    expect(Date.now() - Date.parse(tuples.tuples[0].timestamp)).toBeLessThan(60_000);
    const changes = await call('ReadChanges', { store_id: storeId, type: 'doc', page_size: 2 });
    // TUPLE_OPERATION_WRITE is the enum's 0, which proto3 does not send (grpcurl then prints no field)
    expect(changes.changes.map((c: { operation?: string; tuple_key: { user: string } }) => [c.tuple_key.user, c.operation ?? 'TUPLE_OPERATION_WRITE']))
      .toEqual([['user:ann', 'TUPLE_OPERATION_WRITE'], ['group:eng#member', 'TUPLE_OPERATION_WRITE']]);
    expect(changes.continuation_token).not.toBe('');
    const tree = await call('Expand', { store_id: storeId, tuple_key: { relation: 'viewer', object: 'doc:2' } });
    expect(tree.tree.root.name).toBe('doc:2#viewer');
    await call('WriteAssertions', { store_id: storeId, authorization_model_id: authorizationModelId, assertions: [{ tuple_key: { user: 'user:ann', relation: 'viewer', object: 'doc:1' }, expectation: false }] });
    const assertions = await call('ReadAssertions', { store_id: storeId, authorization_model_id: authorizationModelId });
    expect(assertions.assertions).toEqual([{ tuple_key: { user: 'user:ann', relation: 'viewer', object: 'doc:1' } }]);
    await call('DeleteStore', { store_id: storeId });
  });

  it('answers OpenFGA\'s gRPC error codes and refuses a wrong key', async () => {
    const missing = await failure('Check', { store_id: GATEHOUSE_STORE_ID, tuple_key: { user: 'user:a', relation: 'viewer', object: 'doc:1' } });
    expect(missing).toContain('Code: Code(2020)');
    expect(missing).toContain(`No authorization models found for store '${GATEHOUSE_STORE_ID}'`);
    const store = await failure('GetStore', { store_id: '01ARZ3NDEKTSV4RRFFQ69G5FAV' });
    expect(store).toContain('Code: Code(5002)');
    const bad = await failure('CreateStore', { name: '' });
    expect(bad).toContain('Code: Code(2000)');
    expect(await failure('UpdateStore', { store_id: GATEHOUSE_STORE_ID, name: 'renamed' })).toContain('Code: Code(2000)');
    expect(await failure('UpdateStore', { store_id: '01ARZ3NDEKTSV4RRFFQ69G5FAV', name: 'xyz' })).toContain('Code: Code(5002)');
    const key = await failure('ListStores', {}, 'wrong');
    expect(key).toContain('Code: Code(1500)');
  });
});
