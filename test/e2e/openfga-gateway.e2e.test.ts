/**
 * @module test/e2e/openfga-gateway
 * `--gateway-openfga-url` (issue 36 §2): OpenFGA's HTTP API routed through the gateway under `/stores`, to
 * the authz service's OpenFGA HTTP listener. OpenFGA's JavaScript SDK (`@openfga/sdk`, unchanged) is
 * pointed at the gateway's public URL of `gatehouse all` and works as against the listener itself:
 * stores, models, writes, checks, StreamedListObjects (streamed through), UpdateStore; the listener's
 * OpenFGA 401 codes reach the caller unchanged; a state-changing call without a bearer token is refused
 * by the gateway's CSRF check; the gateway's own routes are untouched; an unreachable listener is 503.
 */
import { describe, it, expect, beforeAll, afterAll } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { CredentialsMethod, OpenFgaClient } from '@openfga/sdk';
import { transformer } from '@openfga/syntax-transformer';
import { freePort, startDeployment, waitForHttp, type Deployment } from '@gatehouse/testing';

const MODEL = `model
  schema 1.1
type user
type doc
  relations
    define owner: [user]
    define viewer: [user] or owner
`;

describe('OpenFGA\'s HTTP API through the gateway (--gateway-openfga-url, all-in-one)', () => {
  let d: Deployment;
  let fga: OpenFgaClient;
  const key = randomBytes(18).toString('base64url');
  /** a call to the gateway's `path` with the key as bearer token (or none) */
  const viaGateway = (path: string, init: RequestInit = {}, token: string | null = key): Promise<Response> =>
    fetch(`${d.url}${path}`, { ...init, headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) } });

  beforeAll(async () => {
    const port = await freePort();
    d = await startDeployment('all', {
      flags: [`--openfga-http-port=${port}`, `--openfga-authn-preshared-keys=${key}`, `--gateway-openfga-url=http://127.0.0.1:${port}`],
      readyTimeoutMs: 90_000,
    });
    await waitForHttp(`http://127.0.0.1:${port}/healthz`, 10_000);
    fga = new OpenFgaClient({ apiUrl: d.url, credentials: { method: CredentialsMethod.ApiToken, config: { token: key } } });
  }, 120_000);
  afterAll(async () => { await d?.stop(); });

  it('the SDK at the gateway\'s URL: a store, its model, writes, checks, a streamed ListObjects and a rename', async () => {
    const store = await fga.createStore({ name: 'through the gateway' });
    expect(store.id).toMatch(/^[0-9A-HJKMNP-TV-Z]{26}$/);
    const client = new OpenFgaClient({ apiUrl: d.url, storeId: store.id, credentials: { method: CredentialsMethod.ApiToken, config: { token: key } } });
    const { authorization_model_id: modelId } = await client.writeAuthorizationModel(transformer.transformDSLToJSONObject(MODEL) as never);
    expect(modelId).toMatch(/^[0-9A-HJKMNP-TV-Z]{26}$/);
    await client.write({ writes: [{ user: 'user:ann', relation: 'owner', object: 'doc:1' }, { user: 'user:bob', relation: 'viewer', object: 'doc:2' }] });
    expect((await client.check({ user: 'user:ann', relation: 'viewer', object: 'doc:1' })).allowed).toBe(true);
    expect((await client.check({ user: 'user:bob', relation: 'viewer', object: 'doc:1' })).allowed).toBe(false);
    const streamed: string[] = [];
    for await (const r of client.streamedListObjects({ user: 'user:ann', relation: 'viewer', type: 'doc' })) streamed.push(r.object);
    expect(streamed).toEqual(['doc:1']);
    const batch = await client.batchCheck({ checks: [
      { user: 'user:bob', relation: 'viewer', object: 'doc:2', correlationId: 'b2' },
      { user: 'user:bob', relation: 'owner', object: 'doc:2', correlationId: 'b2o' },
    ] });
    expect(Object.fromEntries(batch.result.map((r) => [r.correlationId, r.allowed]))).toEqual({ b2: true, b2o: false });
    const renamed = await viaGateway(`/stores/${store.id}`, { method: 'PATCH', body: JSON.stringify({ name: 'renamed at the edge' }) });
    expect(renamed.status).toBe(200);
    expect((await client.getStore()).name).toBe('renamed at the edge');
    await client.deleteStore();
    expect((await viaGateway(`/stores/${store.id}`)).status).toBe(404);
  });

  it('passes the listener\'s OpenFGA errors through; refuses a state-changing call without a bearer token (CSRF); leaves its own routes alone', async () => {
    const none = await viaGateway('/stores', {}, null);
    expect(none.status).toBe(401);
    expect(await none.json()).toEqual({ code: 'bearer_token_missing', message: 'missing bearer token' });
    const wrong = await viaGateway('/stores', {}, 'not-the-key');
    expect([wrong.status, await wrong.json()]).toEqual([401, { code: 'unauthenticated', message: 'unauthenticated' }]);
    const unknownStore = await viaGateway('/stores/01ARZ3NDEKTSV4RRFFQ69G5FAV');
    expect([unknownStore.status, ((await unknownStore.json()) as { code: string }).code]).toEqual([404, 'store_id_not_found']);
    const badJson = await viaGateway('/stores/01ARZ3NDEKTSV4RRFFQ69G5FAV/check', { method: 'POST', body: '{"tuple_key":' });
    expect(badJson.status).toBe(400);
    // no bearer token and no Origin: the gateway's CSRF check answers before the listener is asked
    const csrf = await viaGateway('/stores', { method: 'POST', body: JSON.stringify({ name: 'no token' }) }, null);
    expect(csrf.status).toBe(403);
    // the query string travels too
    const page = await viaGateway('/stores?page_size=1');
    expect(((await page.json()) as { stores: unknown[] }).stores).toHaveLength(1);
    // /storesX is not OpenFGA's, and the gateway's own routes still answer
    expect((await viaGateway('/storesfront')).status).toBe(404);
    expect((await fetch(`${d.url}/healthz`)).status).toBe(200);
    const v1 = await fetch(`${d.url}/v1/check_permissions`, {
      method: 'POST', headers: { 'content-type': 'application/json', origin: d.url, 'x-service-admin-secret': d.adminSecret },
      body: JSON.stringify({ user: 'user:ann', checks: [{ relation: 'viewer', object: 'doc:1' }] }),
    });
    expect(v1.status).not.toBe(404);
  });
});

describe('--gateway-openfga-url to a listener that is down', () => {
  let d: Deployment;
  beforeAll(async () => {
    // a port nothing listens on
    d = await startDeployment('all', { flags: [`--gateway-openfga-url=http://127.0.0.1:${await freePort()}`], readyTimeoutMs: 90_000 });
  }, 120_000);
  afterAll(async () => { await d?.stop(); });

  it('answers 503 unavailable, never a 500', async () => {
    const res = await fetch(`${d.url}/stores`, { headers: { authorization: 'Bearer k' } });
    expect(res.status).toBe(503);
    expect(((await res.json()) as { code: string }).code).toBe('unavailable');
  });
});
