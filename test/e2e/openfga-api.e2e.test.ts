/**
 * @module test/e2e/openfga-api
 * OpenFGA's own HTTP API on the authz service (issue 36 §1, §2, §4), driven by OpenFGA's JavaScript SDK
 * (`@openfga/sdk`, unchanged) against `gatehouse all` with `--openfga-http-port`: stores, models, Write
 * (writes and deletes, conditions, OpenFGA's conflict rules and limits), Read, ReadChanges, Check,
 * BatchCheck with correlation ids, Expand, ListObjects, StreamedListObjects, ListUsers and assertions; preshared-key
 * authentication; OpenFGA's error codes; a tuple written through either API seen by the other on the next
 * request; the calls counted under `api="openfga"`; the same API over two split-mode replicas, with
 * OIDC client-credentials authentication, and over the OpenFGA backend (`--fga-store=openfga`).
 */
import { describe, it, expect, beforeAll, afterAll } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { CredentialsMethod, FgaApiError, OpenFgaClient, type WriteAuthorizationModelRequest } from '@openfga/sdk';
import { transformer } from '@openfga/syntax-transformer';
import { freePort, startDeployment, waitForHttp, type Deployment } from '@gatehouse/testing';
import { backendFlags } from '../support/authz-backends.ts';

const STORE_ID = '01JDQ7GATEHSE0000000000000';
const ULID = /^[0-9A-HJKMNP-TV-Z]{26}$/;
const MODEL = `model
  schema 1.1
type user
type group
  relations
    define member: [user]
type folder
  relations
    define owner: [user]
type doc
  relations
    define parent: [folder]
    define owner: [user]
    define editor: [user, group#member] or owner or owner from parent
    define viewer: [user, user:*, user with in_hours] or editor
condition in_hours(hour: int) {
  hour >= 9 && hour < 17
}
`;

/** The error an SDK call failed with, as `{status, code, message}` (OpenFGA's body). */
async function failure(call: Promise<unknown>): Promise<{ status: number | undefined; code: string; message: string }> {
  try {
    await call;
  } catch (err) {
    if (err instanceof FgaApiError) {
      const data = err.responseData as { code?: string; message?: string } | undefined;
      return { status: err.statusCode, code: data?.code ?? '', message: data?.message ?? '' };
    }
    throw err;
  }
  throw new Error('the call succeeded');
}

describe('OpenFGA API on the authz service (all-in-one, SQLite)', () => {
  let d: Deployment;
  let base: string;
  let fga: OpenFgaClient;
  const key = randomBytes(18).toString('base64url');
  const raw = (path: string, init: RequestInit = {}, token: string | null = key): Promise<Response> =>
    fetch(`${base}${path}`, { ...init, headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) } });
  /** `/v1/check_permissions` as super-admin for `user` (the spec's API). */
  const v1Check = async (user: string, relation: string, object: string): Promise<boolean> => {
    const res = await fetch(`${d.url}/v1/check_permissions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: d.url, 'x-service-admin-secret': d.adminSecret },
      body: JSON.stringify({ user, checks: [{ relation, object }] }),
    });
    expect(res.status).toBe(200);
    return ((await res.json()) as { results: Array<{ allowed: boolean }> }).results[0]!.allowed;
  };

  beforeAll(async () => {
    const port = await freePort();
    d = await startDeployment('all', { flags: [`--openfga-http-port=${port}`, `--openfga-authn-preshared-keys=other-key,${key}`], readyTimeoutMs: 90_000 });
    base = `http://127.0.0.1:${port}`;
    await waitForHttp(`${base}/healthz`, 10_000);
    fga = new OpenFgaClient({ apiUrl: base, storeId: STORE_ID, credentials: { method: CredentialsMethod.ApiToken, config: { token: key } } });
  }, 120_000);
  afterAll(async () => { await d?.stop(); });

  it('authenticates as OpenFGA does: no bearer token is 401 bearer_token_missing, a wrong key 401 unauthenticated', async () => {
    const none = await raw('/stores', {}, null);
    expect(none.status).toBe(401);
    expect(await none.json()).toEqual({ code: 'bearer_token_missing', message: 'missing bearer token' });
    const wrong = await raw('/stores', {}, 'not-a-key');
    expect(wrong.status).toBe(401);
    expect(await wrong.json()).toEqual({ code: 'unauthenticated', message: 'unauthenticated' });
    const health = await raw('/healthz', {}, null);
    expect(await health.json()).toEqual({ status: 'SERVING' });
    const unknown = await raw('/nowhere');
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toEqual({ code: 'undefined_endpoint', message: 'Not Found' });
    const wrongMethod = await raw('/stores', { method: 'PATCH' });
    expect(wrongMethod.status).toBe(405);
    expect(await wrongMethod.json()).toEqual({ code: 'undefined_endpoint', message: 'Method Not Allowed' });
    const notJson = await raw(`/stores/${STORE_ID}/check`, { method: 'POST', body: '{"tuple_key":' });
    expect(notJson.status).toBe(400);
    expect(await notJson.json()).toEqual({ code: 'validation_error', message: 'request body is not valid JSON' });
    const array = await raw(`/stores/${STORE_ID}/check`, { method: 'POST', body: '[]' });
    expect(await array.json()).toEqual({ code: 'validation_error', message: 'request body must be a JSON object' });
  });

  it('UpdateStore (PATCH /stores/{store_id}) renames a created store; Gatehouse\'s keeps its name; the gateway does not route /stores by default', async () => {
    const created = await fga.createStore({ name: 'before rename' });
    const res = await raw(`/stores/${created.id}`, { method: 'PATCH', body: JSON.stringify({ name: 'after rename' }) });
    expect(res.status).toBe(200);
    const renamed = (await res.json()) as { id: string; name: string; created_at: string; updated_at: string };
    expect([renamed.id, renamed.name, renamed.created_at]).toEqual([created.id, 'after rename', created.created_at]);
    expect((await fga.getStore({ storeId: created.id })).name).toBe('after rename');
    const bad = await raw(`/stores/${created.id}`, { method: 'PATCH', body: JSON.stringify({ name: 'x' }) });
    expect([bad.status, ((await bad.json()) as { code: string }).code]).toEqual([400, 'validation_error']);
    const own = await raw(`/stores/${STORE_ID}`, { method: 'PATCH', body: JSON.stringify({ name: 'renamed' }) });
    expect([own.status, ((await own.json()) as { code: string }).code]).toEqual([400, 'validation_error']);
    const unauthenticated = await raw(`/stores/${created.id}`, { method: 'PATCH', body: JSON.stringify({ name: 'nobody' }) }, null);
    expect(unauthenticated.status).toBe(401);
    await fga.deleteStore({ storeId: created.id });
    // OpenFGA's API stays off the public edge unless --gateway-openfga-url routes it
    const edge = await fetch(`${d.url}/stores`, { headers: { authorization: `Bearer ${key}` } });
    expect(edge.status).toBe(404);
  });

  it('stores: Gatehouse\'s own store is listed and read, and cannot be deleted; an unknown id is 404 store_id_not_found', async () => {
    const list = await fga.listStores();
    expect(list.stores.map((s) => [s.id, s.name])).toEqual([[STORE_ID, 'gatehouse']]);
    const got = await fga.getStore();
    expect(got.id).toBe(STORE_ID);
    expect(Date.parse(got.created_at)).not.toBeNaN();
    const other = await failure(fga.getStore({ storeId: '01ARZ3NDEKTSV4RRFFQ69G5FAV' }));
    expect(other).toEqual({ status: 404, code: 'store_id_not_found', message: 'store not found' });
    const del = await failure(fga.deleteStore());
    expect(del.status).toBe(400);
    expect(del.code).toBe('validation_error');
  });

  it('models: none at first (latest_authorization_model_not_found); a JSON model is written, read back and is the /v1 model', async () => {
    expect((await fga.readAuthorizationModels()).authorization_models).toEqual([]);
    const early = await failure(fga.check({ user: 'user:a', relation: 'viewer', object: 'doc:1' }));
    expect(early).toEqual({ status: 400, code: 'latest_authorization_model_not_found', message: `No authorization models found for store '${STORE_ID}'` });
    const json = transformer.transformDSLToJSONObject(MODEL) as unknown as WriteAuthorizationModelRequest;
    const bad = await failure(fga.writeAuthorizationModel({ ...json, type_definitions: [{ type: 'doc', relations: { viewer: { computedUserset: { relation: 'nope' } } }, metadata: { relations: {} } }] }));
    expect(bad.status).toBe(400);
    expect(bad.code).toBe('invalid_authorization_model');
    const { authorization_model_id: id } = await fga.writeAuthorizationModel(json);
    expect(id).toMatch(ULID);
    const { authorization_model: m } = await fga.readAuthorizationModel({ authorizationModelId: id });
    expect(m?.id).toBe(id);
    expect(m?.type_definitions.map((t) => t.type)).toEqual(['user', 'group', 'folder', 'doc']);
    expect(Object.keys(m?.conditions ?? {})).toEqual(['in_hours']);
    expect((await fga.readLatestAuthorizationModel()).authorization_model?.id).toBe(id);
    const missing = await failure(fga.readAuthorizationModel({ authorizationModelId: '01ARZ3NDEKTSV4RRFFQ69G5FAV' }));
    expect(missing).toEqual({ status: 400, code: 'authorization_model_not_found', message: 'Authorization Model \'01ARZ3NDEKTSV4RRFFQ69G5FAV\' not found' });
    const v1 = await fetch(`${d.url}/v1/admin/fga/model`, { headers: { origin: d.url, 'x-service-admin-secret': d.adminSecret } });
    expect(((await v1.json()) as { id: string }).id).toBe(id);
  });

  it('model versions: every stored version is read and listed newest first in pages; a query naming an older one answers with it', async () => {
    const json = transformer.transformDSLToJSONObject(MODEL) as unknown as WriteAuthorizationModelRequest;
    const first = (await fga.readLatestAuthorizationModel()).authorization_model!.id;
    const { authorization_model_id: second } = await fga.writeAuthorizationModel(json);
    expect((await fga.readAuthorizationModel({ authorizationModelId: first })).authorization_model?.id).toBe(first);
    const page1 = await fga.readAuthorizationModels({ pageSize: 1 });
    expect(page1.authorization_models.map((m) => m.id)).toEqual([second]);
    const page2 = await fga.readAuthorizationModels({ pageSize: 1, continuationToken: page1.continuation_token });
    expect(page2.authorization_models.map((m) => m.id)).toEqual([first]);
    expect(page2.continuation_token).toBe('');
    // a third version in which owners no longer view: the first still answers as it did
    const narrower = transformer.transformDSLToJSONObject(MODEL.replace('define viewer: [user, user:*, user with in_hours] or editor', 'define viewer: [user, user:*, user with in_hours]')) as unknown as WriteAuthorizationModelRequest;
    const { authorization_model_id: third } = await fga.writeAuthorizationModel(narrower);
    await fga.writeTuples([{ user: 'user:pia', relation: 'owner', object: 'doc:pinned' }]);
    expect((await fga.check({ user: 'user:pia', relation: 'viewer', object: 'doc:pinned' })).allowed).toBe(false);
    expect((await fga.check({ user: 'user:pia', relation: 'viewer', object: 'doc:pinned' }, { authorizationModelId: first })).allowed).toBe(true);
    expect((await fga.listObjects({ user: 'user:pia', relation: 'viewer', type: 'doc' }, { authorizationModelId: first })).objects).toEqual(['doc:pinned']);
    await fga.deleteTuples([{ user: 'user:pia', relation: 'owner', object: 'doc:pinned' }]);
    // the later tests use the full model again
    await fga.writeAuthorizationModel(json);
    expect(third).toMatch(ULID);
  });

  it('created stores: each has its own model and tuples, unseen by Gatehouse\'s store and /v1; listed, read and deleted', async () => {
    const created = await fga.createStore({ name: 'platform-a' });
    expect(created.id).toMatch(ULID);
    expect(created.name).toBe('platform-a');
    const other = new OpenFgaClient({ apiUrl: base, storeId: created.id, credentials: { method: CredentialsMethod.ApiToken, config: { token: key } } });
    expect((await other.getStore()).name).toBe('platform-a');
    expect((await fga.listStores()).stores.map((s) => s.name)).toEqual(['gatehouse', 'platform-a']);
    const early = await failure(other.check({ user: 'user:zoe', relation: 'viewer', object: 'doc:z' }));
    expect(early).toEqual({ status: 400, code: 'latest_authorization_model_not_found', message: `No authorization models found for store '${created.id}'` });
    await other.writeAuthorizationModel(transformer.transformDSLToJSONObject(MODEL) as unknown as WriteAuthorizationModelRequest);
    await other.writeTuples([{ user: 'user:zoe', relation: 'owner', object: 'doc:z' }]);
    expect((await other.check({ user: 'user:zoe', relation: 'viewer', object: 'doc:z' })).allowed).toBe(true);
    expect((await other.read({ object: 'doc:z' })).tuples.map((t) => t.key.user)).toEqual(['user:zoe']);
    expect((await other.readChanges({ type: 'doc' })).changes.map((c) => c.tuple_key.user)).toEqual(['user:zoe']);
    // Gatehouse's store (the one /v1 answers for) has none of it
    expect((await fga.read({ object: 'doc:z' })).tuples).toEqual([]);
    expect(await v1Check('user:zoe', 'viewer', 'doc:z')).toBe(false);
    await other.deleteStore();
    expect((await failure(other.getStore())).code).toBe('store_id_not_found');
    expect((await failure(other.check({ user: 'user:zoe', relation: 'viewer', object: 'doc:z' }))).status).toBe(404);
    expect((await fga.listStores()).stores.map((s) => s.name)).toEqual(['gatehouse']);
  });

  it('Write: writes and deletes in one call; OpenFGA\'s conflict rules, duplicate and limit errors; Read and ReadChanges page them', async () => {
    await fga.write({
      writes: [
        { user: 'user:anne', relation: 'owner', object: 'doc:1' },
        { user: 'group:eng#member', relation: 'editor', object: 'doc:2' },
        { user: 'user:bob', relation: 'member', object: 'group:eng' },
        { user: 'folder:f', relation: 'parent', object: 'doc:3' },
        { user: 'user:carl', relation: 'owner', object: 'folder:f' },
        { user: 'user:*', relation: 'viewer', object: 'doc:public' },
        { user: 'user:dora', relation: 'viewer', object: 'doc:timed', condition: { name: 'in_hours', context: {} } },
        { user: 'user:gone', relation: 'viewer', object: 'doc:1' },
      ],
    });
    await fga.write({ writes: [{ user: 'user:erin', relation: 'viewer', object: 'doc:1' }], deletes: [{ user: 'user:gone', relation: 'viewer', object: 'doc:1' }] });
    const again = await failure(fga.writeTuples([{ user: 'user:anne', relation: 'owner', object: 'doc:1' }]));
    expect(again.status).toBe(400);
    expect(again.code).toBe('write_failed_due_to_invalid_input');
    expect(again.message).toContain('cannot write a tuple which already exists');
    await fga.writeTuples([{ user: 'user:anne', relation: 'owner', object: 'doc:1' }], { conflict: { onDuplicateWrites: 'ignore' as never } });
    const notThere = await failure(fga.deleteTuples([{ user: 'user:nobody', relation: 'owner', object: 'doc:1' }]));
    expect(notThere.code).toBe('write_failed_due_to_invalid_input');
    const invalidTuple = await failure(fga.writeTuples([{ user: 'user:x', relation: 'approver', object: 'doc:1' }]));
    expect(invalidTuple.status).toBe(400);
    expect(invalidTuple.code).toBe('validation_error');
    expect(invalidTuple.message).toContain('approver');
    const tooMany = await raw(`/stores/${STORE_ID}/write`, {
      method: 'POST', body: JSON.stringify({ writes: { tuple_keys: Array.from({ length: 101 }, (_, i) => ({ user: `user:u${i}`, relation: 'viewer', object: 'doc:many' })) } }),
    });
    expect(tooMany.status).toBe(400);
    expect(await tooMany.json()).toEqual({ code: 'exceeded_entity_limit', message: 'The number of write operations exceeds the allowed limit of 100' });
    const dup = await raw(`/stores/${STORE_ID}/write`, {
      method: 'POST', body: JSON.stringify({ writes: { tuple_keys: [{ user: 'user:z', relation: 'viewer', object: 'doc:z' }] }, deletes: { tuple_keys: [{ user: 'user:z', relation: 'viewer', object: 'doc:z' }] } }),
    });
    expect(((await dup.json()) as { code: string }).code).toBe('cannot_allow_duplicate_tuples_in_one_request');
    const empty = await raw(`/stores/${STORE_ID}/write`, { method: 'POST', body: '{}' });
    expect(((await empty.json()) as { code: string }).code).toBe('invalid_write_input');

    const onDoc1 = await fga.read({ object: 'doc:1' });
    expect(onDoc1.tuples.map((t) => `${t.key.user} ${t.key.relation}`).sort()).toEqual(['user:anne owner', 'user:erin viewer']);
    const first = await fga.read({}, { pageSize: 3 });
    expect(first.tuples).toHaveLength(3);
    expect(first.continuation_token).not.toBe('');
    const rest = await fga.read({}, { pageSize: 100, continuationToken: first.continuation_token });
    expect(first.tuples.length + rest.tuples.length).toBe(8);
    const timed = await fga.read({ user: 'user:dora', relation: 'viewer', object: 'doc:timed' });
    expect(timed.tuples[0]?.key.condition?.name).toBe('in_hours');
    // each tuple's write time (OpenFGA's Tuple.timestamp), and each change's
    const age = Date.now() - Date.parse(timed.tuples[0]!.timestamp);
    expect(age).toBeGreaterThanOrEqual(0);
    expect(age).toBeLessThan(120_000);

    const page1 = await fga.readChanges({ type: 'doc' }, { pageSize: 5 });
    expect(page1.changes).toHaveLength(5);
    const page2 = await fga.readChanges({ type: 'doc' }, { pageSize: 100, continuationToken: page1.continuation_token });
    const all = [...page1.changes, ...page2.changes].map((c) => `${c.operation} ${c.tuple_key.user} ${c.tuple_key.object}`);
    expect([...page1.changes, ...page2.changes].every((c) => Date.now() - Date.parse(c.timestamp) < 120_000)).toBe(true);
    const fromNow = await fga.readChanges({ type: 'doc', startTime: new Date(Date.now() + 60_000).toISOString() });
    expect(fromNow.changes).toEqual([]);
    expect(all).toContain('TUPLE_OPERATION_DELETE user:gone doc:1');
    expect(all).toContain('TUPLE_OPERATION_WRITE user:erin doc:1');
    expect(all.every((c) => c.endsWith('doc:1') || c.includes(' doc:'))).toBe(true);
    expect(all.some((c) => c.includes('group:eng') && !c.includes('doc:'))).toBe(false);
    // nothing new: the same token comes back, so a poller keeps its place
    const page3 = await fga.readChanges({ type: 'doc' }, { continuationToken: page2.continuation_token });
    expect(page3.changes).toEqual([]);
    expect(page3.continuation_token).toBe(page2.continuation_token);
  });

  it('Check: stored, computed, tuple-to-userset, contextual tuples and condition context; another model id is authorization_model_not_found', async () => {
    const check = async (user: string, relation: string, object: string, extra: object = {}): Promise<boolean | undefined> =>
      (await fga.check({ user, relation, object, ...extra })).allowed;
    expect(await check('user:anne', 'viewer', 'doc:1')).toBe(true);
    expect(await check('user:bob', 'editor', 'doc:2')).toBe(true);
    expect(await check('user:carl', 'editor', 'doc:3')).toBe(true);
    expect(await check('user:anne', 'editor', 'doc:2')).toBe(false);
    expect(await check('user:anyone', 'viewer', 'doc:public')).toBe(true);
    expect(await check('user:anne', 'editor', 'doc:2', { contextualTuples: [{ user: 'user:anne', relation: 'member', object: 'group:eng' }] })).toBe(true);
    expect(await check('user:dora', 'viewer', 'doc:timed', { context: { hour: 10 } })).toBe(true);
    expect(await check('user:dora', 'viewer', 'doc:timed', { context: { hour: 20 } })).toBe(false);
    const noParam = await failure(fga.check({ user: 'user:dora', relation: 'viewer', object: 'doc:timed' }));
    expect(noParam.status).toBe(400);
    expect(noParam.message).toContain('in_hours');
    const model = await failure(fga.check({ user: 'user:anne', relation: 'viewer', object: 'doc:1' }, { authorizationModelId: '01ARZ3NDEKTSV4RRFFQ69G5FAV' }));
    expect(model.code).toBe('authorization_model_not_found');
  });

  it('BatchCheck: answers by correlation id, a bad check is that check\'s error; over 50 checks is refused', async () => {
    const { result } = await fga.batchCheck({
      checks: [
        { user: 'user:anne', relation: 'viewer', object: 'doc:1', correlationId: 'a' },
        { user: 'user:anne', relation: 'editor', object: 'doc:2', correlationId: 'b' },
        { user: 'user:anne', relation: 'approver', object: 'doc:1', correlationId: 'c' },
      ],
    });
    const by = Object.fromEntries(result.map((r) => [r.correlationId, r]));
    expect(by.a?.allowed).toBe(true);
    expect(by.b?.allowed).toBe(false);
    expect(by.c?.error?.input_error).toBe('validation_error');
    expect(by.c?.error?.message).toContain('approver');
    const many = await raw(`/stores/${STORE_ID}/batch-check`, {
      method: 'POST', body: JSON.stringify({ checks: Array.from({ length: 51 }, (_, i) => ({ tuple_key: { user: 'user:anne', relation: 'viewer', object: `doc:${i}` }, correlation_id: `c${i}` })) }),
    });
    expect(many.status).toBe(400);
    expect(await many.json()).toEqual({ code: 'validation_error', message: 'batchCheck received 51 checks, the maximum allowed is 50' });
  });

  it('Expand, ListObjects, StreamedListObjects and ListUsers', async () => {
    const { tree } = await fga.expand({ relation: 'editor', object: 'doc:2' });
    expect(tree?.root?.name).toBe('doc:2#editor');
    expect(tree?.root?.union?.nodes?.length).toBeGreaterThan(0);
    const withCtx = await fga.expand({ relation: 'owner', object: 'doc:2', contextualTuples: [{ user: 'user:ctx', relation: 'owner', object: 'doc:2' }] });
    expect(withCtx.tree?.root?.leaf?.users?.users).toContain('user:ctx');
    const objects = await fga.listObjects({ user: 'user:bob', relation: 'viewer', type: 'doc' });
    expect([...objects.objects].sort()).toEqual(['doc:2', 'doc:public']);
    const streamed: string[] = [];
    for await (const r of fga.streamedListObjects({ user: 'user:carl', relation: 'viewer', type: 'doc' })) streamed.push(r.object);
    expect(streamed.sort()).toEqual(['doc:3', 'doc:public']);
    const users = await fga.listUsers({ object: { type: 'doc', id: '2' }, relation: 'editor', user_filters: [{ type: 'user' }] });
    expect(users.users).toEqual([{ object: { type: 'user', id: 'bob' } }]);
    const sets = await fga.listUsers({ object: { type: 'doc', id: '2' }, relation: 'editor', user_filters: [{ type: 'group', relation: 'member' }] });
    expect(sets.users).toEqual([{ userset: { type: 'group', id: 'eng', relation: 'member' } }]);
    const wild = await fga.listUsers({ object: { type: 'doc', id: 'public' }, relation: 'viewer', user_filters: [{ type: 'user' }] });
    expect(wild.users).toEqual([{ wildcard: { type: 'user' } }]);
  });

  it('one engine: a tuple written through either API is seen by the other on the next request', async () => {
    const doc = `doc:x${randomBytes(4).toString('hex')}`;
    await fga.writeTuples([{ user: 'user:fay', relation: 'viewer', object: doc }]);
    expect(await v1Check('user:fay', 'viewer', doc)).toBe(true);
    const res = await fetch(`${d.url}/v1/admin/fga/tuples`, {
      method: 'POST', headers: { 'content-type': 'application/json', origin: d.url, 'x-service-admin-secret': d.adminSecret },
      body: JSON.stringify({ tuples: [{ user: 'user:gus', relation: 'owner', object: doc }] }),
    });
    expect(res.status).toBe(200);
    expect((await fga.check({ user: 'user:gus', relation: 'editor', object: doc })).allowed).toBe(true);
    await fga.deleteTuples([{ user: 'user:fay', relation: 'viewer', object: doc }]);
    expect(await v1Check('user:fay', 'viewer', doc)).toBe(false);
  });

  it('assertions: written and read back per model version; an unknown model is authorization_model_not_found', async () => {
    const id = (await fga.readLatestAuthorizationModel()).authorization_model!.id;
    expect((await fga.readAssertions({ authorizationModelId: id })).assertions).toEqual([]);
    await fga.writeAssertions([{ user: 'user:x', relation: 'viewer', object: 'doc:1', expectation: false }], { authorizationModelId: id });
    // the client's writeAssertions sends tuple keys and expectations only; the API call carries the rest
    await fga.api.writeAssertions(STORE_ID, id, {
      assertions: [
        { tuple_key: { user: 'user:anne', relation: 'viewer', object: 'doc:1' }, expectation: true },
        { tuple_key: { user: 'user:zed', relation: 'editor', object: 'doc:2' }, expectation: false, contextual_tuples: [{ user: 'user:zed', relation: 'member', object: 'group:eng' }], context: { hour: 3 } },
      ],
    });
    const back = await fga.readAssertions({ authorizationModelId: id });
    expect(back.authorization_model_id).toBe(id);
    expect(back.assertions).toEqual([
      { tuple_key: { object: 'doc:1', relation: 'viewer', user: 'user:anne' }, expectation: true },
      { tuple_key: { object: 'doc:2', relation: 'editor', user: 'user:zed' }, expectation: false, contextual_tuples: [{ user: 'user:zed', relation: 'member', object: 'group:eng' }], context: { hour: 3 } },
    ]);
    const unknown = await failure(fga.readAssertions({ authorizationModelId: '01ARZ3NDEKTSV4RRFFQ69G5FAV' }));
    expect(unknown).toEqual({ status: 400, code: 'authorization_model_not_found', message: 'Authorization Model \'01ARZ3NDEKTSV4RRFFQ69G5FAV\' not found' });
    const tooMany = await raw(`/stores/${STORE_ID}/assertions/${id}`, {
      method: 'PUT', body: JSON.stringify({ assertions: Array.from({ length: 101 }, () => ({ tuple_key: { user: 'user:a', relation: 'viewer', object: 'doc:1' }, expectation: true })) }),
    });
    expect(await tooMany.json()).toEqual({ code: 'assertions_too_many_items', message: 'assertions must contain at most 100 items' });
  });

  it('the calls are counted under api="openfga"', async () => {
    const metrics = await (await fetch(d.metricsUrl)).text();
    expect(metrics).toMatch(/gatehouse_authz_api_requests_total\{api="openfga",method="Check",code="200"\} \d+/);
    expect(metrics).toMatch(/gatehouse_authz_api_requests_total\{api="openfga",method="ListStores",code="401"\} 2/);
  });
});

describe('OpenFGA API on two authz replicas (split mode, PostgreSQL)', () => {
  let d: Deployment;
  let replicas: OpenFgaClient[];
  let ports: number[];
  const key = randomBytes(18).toString('base64url');

  beforeAll(async () => {
    ports = [await freePort(), await freePort()];
    d = await startDeployment('split', {
      authzReplicas: 2,
      flags: [`--openfga-authn-preshared-keys=${key}`],
      replicaFlags: (command, i) => (command === 'authz' ? [`--openfga-http-port=${ports[i]}`] : []),
      readyTimeoutMs: 150_000,
    });
    replicas = ports.map((port) => new OpenFgaClient({ apiUrl: `http://127.0.0.1:${port}`, storeId: STORE_ID, credentials: { method: CredentialsMethod.ApiToken, config: { token: key } } }));
    for (const port of ports) await waitForHttp(`http://127.0.0.1:${port}/healthz`, 10_000);
  }, 180_000);
  afterAll(async () => { await d?.stop(); });

  it('a model and tuples written through one replica are answered by the other, and by /v1, on the next request', async () => {
    const [a, b] = replicas as [OpenFgaClient, OpenFgaClient];
    const { authorization_model_id: id } = await a.writeAuthorizationModel(transformer.transformDSLToJSONObject(MODEL) as unknown as WriteAuthorizationModelRequest);
    expect((await b.readLatestAuthorizationModel()).authorization_model?.id).toBe(id);
    await a.writeTuples([{ user: 'user:hal', relation: 'owner', object: 'folder:r' }, { user: 'folder:r', relation: 'parent', object: 'doc:r' }]);
    expect((await b.check({ user: 'user:hal', relation: 'viewer', object: 'doc:r' })).allowed).toBe(true);
    expect((await b.listObjects({ user: 'user:hal', relation: 'editor', type: 'doc' })).objects).toEqual(['doc:r']);
    const v1 = async (): Promise<boolean> => {
      const res = await fetch(`${d.url}/v1/check_permissions`, {
        method: 'POST', headers: { 'content-type': 'application/json', origin: d.url, 'x-service-admin-secret': d.adminSecret },
        body: JSON.stringify({ user: 'user:hal', checks: [{ relation: 'viewer', object: 'doc:r' }] }),
      });
      return ((await res.json()) as { results: Array<{ allowed: boolean }> }).results[0]!.allowed;
    };
    expect(await v1()).toBe(true);
    await b.deleteTuples([{ user: 'folder:r', relation: 'parent', object: 'doc:r' }]);
    expect((await a.check({ user: 'user:hal', relation: 'viewer', object: 'doc:r' })).allowed).toBe(false);
    expect(await v1()).toBe(false);
  });

  it('of identical writes sent at once through both replicas (PostgreSQL), exactly one succeeds; the others are OpenFGA\'s conflict error', async () => {
    const [a, b] = replicas as [OpenFgaClient, OpenFgaClient];
    const tuple = { user: 'user:race', relation: 'owner', object: 'doc:race' };
    const outcomes = await Promise.all([a, b, a, b, a, b].map((c) => c.writeTuples([tuple]).then(() => 'ok', async (err: unknown) => (await failure(Promise.reject(err))).code)));
    expect(outcomes.filter((o) => o === 'ok')).toHaveLength(1);
    expect(outcomes.filter((o) => o !== 'ok')).toEqual(Array.from({ length: 5 }, () => 'write_failed_due_to_invalid_input'));
    expect((await b.read({ object: 'doc:race' })).tuples.map((t) => t.key.user)).toEqual(['user:race']);
    // and of identical deletes, exactly one
    const deletes = await Promise.all([b, a, b, a].map((c) => c.deleteTuples([tuple]).then(() => 'ok', async (err: unknown) => (await failure(Promise.reject(err))).code)));
    expect(deletes.filter((o) => o === 'ok')).toHaveLength(1);
    expect(deletes.filter((o) => o !== 'ok')).toEqual(['write_failed_due_to_invalid_input', 'write_failed_due_to_invalid_input', 'write_failed_due_to_invalid_input']);
    expect((await a.read({ object: 'doc:race' })).tuples).toEqual([]);
  });

  it('a store created through one replica is served by the other on the next request, and its deletion too', async () => {
    const [a, b] = replicas as [OpenFgaClient, OpenFgaClient];
    const { id } = await a.createStore({ name: 'shared' });
    const on = (c: OpenFgaClient): OpenFgaClient =>
      new OpenFgaClient({ apiUrl: `http://127.0.0.1:${ports[replicas.indexOf(c)]!}`, storeId: id, credentials: { method: CredentialsMethod.ApiToken, config: { token: key } } });
    await on(b).writeAuthorizationModel(transformer.transformDSLToJSONObject(MODEL) as unknown as WriteAuthorizationModelRequest);
    await on(a).writeTuples([{ user: 'user:ida', relation: 'owner', object: 'doc:s' }]);
    expect((await on(b).check({ user: 'user:ida', relation: 'viewer', object: 'doc:s' })).allowed).toBe(true);
    await on(b).writeTuples([{ user: 'user:jo', relation: 'owner', object: 'doc:s' }]);
    expect((await on(a).check({ user: 'user:jo', relation: 'viewer', object: 'doc:s' })).allowed).toBe(true);
    expect((await a.check({ user: 'user:jo', relation: 'viewer', object: 'doc:s' })).allowed).toBe(false);
    await on(a).deleteStore();
    expect((await failure(on(b).check({ user: 'user:jo', relation: 'viewer', object: 'doc:s' }))).code).toBe('store_id_not_found');
  });
});

describe('OpenFGA API with OIDC client-credentials authentication (all-in-one)', () => {
  let d: Deployment;
  let base: string;
  const admin = (): Record<string, string> => ({ 'content-type': 'application/json', origin: d.url, 'x-service-admin-secret': d.adminSecret });
  /** A service account and an access token Gatehouse issued to it by client_credentials (RFC 6749 §4.4). */
  const serviceAccount = async (name: string): Promise<{ clientId: string; token: string }> => {
    const made = await fetch(`${d.url}/v1/admin/create_client`, { method: 'POST', headers: admin(), body: JSON.stringify({ name, allowed_scopes: ['read:docs'], grant_types: ['client_credentials'] }) });
    const body = (await made.json()) as { client: { client_id: string }; client_secret: string };
    const token = await fetch(`${d.url}/oauth/token`, {
      method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'client_credentials', client_id: body.client.client_id, client_secret: body.client_secret }).toString(),
    });
    expect(token.status).toBe(200);
    return { clientId: body.client.client_id, token: ((await token.json()) as { access_token: string }).access_token };
  };

  beforeAll(async () => {
    const port = await freePort();
    d = await startDeployment('all', { flags: [`--openfga-http-port=${port}`, '--openfga-authn-method=oidc'], readyTimeoutMs: 90_000 });
    base = `http://127.0.0.1:${port}`;
    await waitForHttp(`${base}/healthz`, 10_000);
  }, 120_000);
  afterAll(async () => { await d?.stop(); });

  it('a Gatehouse service account\'s access token is an OpenFGA client credential; a user\'s token and a forged one are not', async () => {
    const sa = await serviceAccount('fga-client');
    const fga = new OpenFgaClient({ apiUrl: base, storeId: STORE_ID, credentials: { method: CredentialsMethod.ApiToken, config: { token: sa.token } } });
    expect((await fga.listStores()).stores.map((s) => s.id)).toEqual([STORE_ID]);
    const forged = await fetch(`${base}/stores`, { headers: { authorization: `Bearer ${sa.token.slice(0, -4)}AAAA` } });
    expect(forged.status).toBe(401);
    expect(await forged.json()).toEqual({ code: 'unauthenticated', message: 'unauthenticated' });
    const signup = await fetch(`${d.url}/v1/signup`, {
      method: 'POST', headers: { 'content-type': 'application/json', origin: d.url },
      body: JSON.stringify({ email: `fga-${randomBytes(4).toString('hex')}@example.com`, password: 'Correct-Horse-9-battery', confirm_password: 'Correct-Horse-9-battery' }),
    });
    const userToken = ((await signup.json()) as { access_token?: string }).access_token;
    expect(userToken).toBeTruthy();
    const asUser = await fetch(`${base}/stores`, { headers: { authorization: `Bearer ${userToken}` } });
    expect(asUser.status).toBe(401);
    expect(((await asUser.json()) as { code: string }).code).toBe('unauthenticated');
  });
});

describe('OpenFGA API over the OpenFGA backend (--fga-store=openfga, all-in-one)', () => {
  let d: Deployment;
  let fga: OpenFgaClient;
  let backend: Awaited<ReturnType<typeof backendFlags>>;
  const key = randomBytes(18).toString('base64url');

  beforeAll(async () => {
    backend = await backendFlags('openfga');
    const port = await freePort();
    d = await startDeployment('all', { flags: [...backend.flags, `--openfga-http-port=${port}`, `--openfga-authn-preshared-keys=${key}`], readyTimeoutMs: 90_000 });
    await waitForHttp(`http://127.0.0.1:${port}/healthz`, 10_000);
    fga = new OpenFgaClient({ apiUrl: `http://127.0.0.1:${port}`, storeId: STORE_ID, credentials: { method: CredentialsMethod.ApiToken, config: { token: key } } });
  }, 120_000);
  afterAll(async () => { await d?.stop(); await backend?.stop(); });

  it('writes and deletes in one call and checks through the backend; ReadChanges and assertions say they are not served there', async () => {
    const { authorization_model_id: id } = await fga.writeAuthorizationModel(transformer.transformDSLToJSONObject(MODEL) as unknown as WriteAuthorizationModelRequest);
    await fga.writeTuples([{ user: 'user:ivy', relation: 'viewer', object: 'doc:o' }]);
    await fga.write({ writes: [{ user: 'user:jon', relation: 'owner', object: 'doc:o' }], deletes: [{ user: 'user:ivy', relation: 'viewer', object: 'doc:o' }] });
    // an existing write and a missing delete are refused by the OpenFGA server, its error passed on
    const again = await failure(fga.writeTuples([{ user: 'user:jon', relation: 'owner', object: 'doc:o' }]));
    expect([again.status, again.code]).toEqual([400, 'write_failed_due_to_invalid_input']);
    expect(again.message).toContain("cannot write a tuple which already exists: user: 'user:jon', relation: 'owner', object: 'doc:o'");
    const gone = await failure(fga.deleteTuples([{ user: 'user:ivy', relation: 'viewer', object: 'doc:o' }]));
    expect(gone.code).toBe('write_failed_due_to_invalid_input');
    expect(gone.message).toContain('cannot delete a tuple which does not exist');
    await fga.writeTuples([{ user: 'user:jon', relation: 'owner', object: 'doc:o' }], { conflict: { onDuplicateWrites: 'ignore' as never } });
    expect((await fga.check({ user: 'user:jon', relation: 'viewer', object: 'doc:o' })).allowed).toBe(true);
    expect((await fga.check({ user: 'user:ivy', relation: 'viewer', object: 'doc:o' })).allowed).toBe(false);
    const read = await fga.read({ object: 'doc:o' });
    expect(read.tuples.map((t) => t.key.user)).toEqual(['user:jon']);
    expect(Date.now() - Date.parse(read.tuples[0]!.timestamp)).toBeLessThan(120_000);
    const changes = await failure(fga.readChanges({ type: 'doc' }));
    expect(changes.status).toBe(501);
    expect(changes.code).toBe('unimplemented');
    const assertions = await failure(fga.readAssertions({ authorizationModelId: id }));
    expect(assertions.status).toBe(501);
    expect(assertions.message).toContain('--fga-store=openfga');
  });
});
