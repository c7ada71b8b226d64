/**
 * @module test/e2e/openapi
 * Issue 15 item 8: `/openapi.json` carries the real request and response schemas (derived from the
 * protos, not written by hand) and describes `/graphql`, `/healthz` and `/readyz`. The check is the one
 * a client generator relies on: real answers of the running server validate against the document it
 * serves (Ajv, JSON Schema 2020-12, the dialect of OpenAPI 3.1).
 */
import { describe, it, expect, beforeAll, afterAll, jest } from '@jest/globals';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { startDeployment, type Deployment } from '@gatehouse/testing';
import { PASSWORD, freshEmail } from '../support/scenario.ts';

jest.setTimeout(60_000);

type Doc = { paths: Record<string, Record<string, any>>; components: { schemas: Record<string, any> } };

describe('the OpenAPI document describes what the server answers', () => {
  let d: Deployment;
  let doc: Doc;
  let ajv: Ajv2020;
  beforeAll(async () => {
    d = await startDeployment('all', { readyTimeoutMs: 60_000 });
    doc = await (await fetch(`${d.url}/openapi.json`)).json() as Doc;
    ajv = new Ajv2020({ strict: false, allErrors: true });
    ajv.addSchema({ $id: 'openapi', components: doc.components }, 'openapi');
  }, 120_000);
  afterAll(async () => { await d?.stop(); });

  /** The validator of `path`'s `method` success response, resolved against the served components. */
  const responseValidator = (method: string, path: string) => {
    const schema = doc.paths[path]![method]!.responses['200'].content['application/json'].schema as { $ref?: string };
    return ajv.compile(schema.$ref === undefined ? schema : { $ref: `openapi${schema.$ref}` });
  };

  const call = async (method: 'GET' | 'POST', path: string, body?: unknown, headers: Record<string, string> = {}): Promise<{ status: number; json: unknown; headers: Headers }> => {
    const res = await fetch(`${d.url}${path}`, {
      method, headers: { origin: d.url, 'content-type': 'application/json', ...headers }, ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: res.status, json: await res.json(), headers: res.headers };
  };

  it('every route has typed request and response bodies, not the generic object', () => {
    const generic = JSON.stringify({ type: 'object', additionalProperties: true });
    for (const [path, item] of Object.entries(doc.paths)) {
      if (!path.startsWith('/v1/')) continue;
      for (const op of Object.values(item)) {
        expect({ path, schema: op.responses['200'].content['application/json'].schema }).toEqual({ path, schema: { $ref: expect.stringMatching(/^#\/components\/schemas\//) } });
        if (op.requestBody) expect(JSON.stringify(op.requestBody.content['application/json'].schema)).not.toBe(generic);
      }
    }
    expect(doc.components.schemas['common.v1.User']).toMatchObject({ type: 'object', required: expect.arrayContaining(['id', 'email', 'roles']) });
    expect(doc.components.schemas['authn.v1.LoginRequest.input']).toMatchObject({
      type: 'object', properties: { email: { anyOf: [{ type: 'string' }, { type: 'null' }] }, roles: { type: 'array', items: { type: 'string' } } },
    });
  });

  it('describes /graphql, /healthz and /readyz', () => {
    expect(doc.paths['/graphql']!.post.operationId).toBe('graphql');
    expect(doc.paths['/healthz']!.get.operationId).toBe('healthz');
    expect(Object.keys(doc.paths['/readyz']!.get.responses)).toEqual(['200', '503']);
  });

  it('real answers validate against their documented schema', async () => {
    const email = freshEmail('openapi');
    const answers: Array<[string, string, { status: number; json: unknown }]> = [];
    answers.push(['get', '/v1/meta', await call('GET', '/v1/meta')]);
    answers.push(['post', '/v1/signup', await call('POST', '/v1/signup', { email, password: PASSWORD, confirm_password: PASSWORD, app_data: { plan: 'pro' } })]);
    const login = await call('POST', '/v1/login', { email, password: PASSWORD });
    answers.push(['post', '/v1/login', login]);
    const token = (login.json as { access_token: string }).access_token;
    const bearer = { authorization: `Bearer ${token}` };
    answers.push(['get', '/v1/profile', await call('GET', '/v1/profile', undefined, bearer)]);
    answers.push(['post', '/v1/validate_jwt_token', await call('POST', '/v1/validate_jwt_token', { token_type: 'access_token', token })]);
    answers.push(['post', '/v1/check_permissions', await call('POST', '/v1/check_permissions', { checks: [{ relation: 'viewer', object: 'doc:1' }] }, bearer)]);
    answers.push(['get', '/.well-known/openid-configuration', await call('GET', '/.well-known/openid-configuration')]);
    for (const [method, path, answer] of answers) {
      if (answer.status !== 200) continue; // refusals are the Error schema, checked below
      const validate = responseValidator(method, path);
      expect({ path, valid: validate(answer.json), errors: validate.errors ?? null }).toEqual({ path, valid: true, errors: null });
    }
    expect(answers.filter(([, , a]) => a.status === 200).length).toBeGreaterThanOrEqual(6);
    // and the documented schema is strict enough to catch a wrong answer
    const profile = responseValidator('get', '/v1/profile');
    expect(profile({ ...(answers[3]![2].json as object), email_verified: 'yes' })).toBe(false);
  });
  it('marks no operation as not served (x-gatehouse-not-served): every route of the table is built (issue 20 served the last)', async () => {
    // the marking itself, from the handler maps, is gateway/src/routes/openapi.test.ts
    expect(notServedOperations(doc).map((o) => o.id)).toEqual([]);
    for (const path of ['/v1/meta', '/v1/profile']) expect(doc.paths[path]!.get['x-gatehouse-not-served']).toBeUndefined();
    for (const path of ['/v1/signup', '/v1/login', '/v1/check_permissions', '/v1/admin/create_org_oidc_connection', '/v1/admin/saml_idp_keys']) {
      expect(doc.paths[path]!.post['x-gatehouse-not-served']).toBeUndefined();
    }
  });
});

/** The operations `/openapi.json` marks `x-gatehouse-not-served`, sorted by operation id. */
function notServedOperations(doc: Doc): Array<{ id: string; method: string; path: string; operation: Record<string, any> }> {
  return Object.entries(doc.paths)
    .flatMap(([path, item]) => Object.entries(item).map(([method, operation]) => ({ id: String(operation.operationId), method, path, operation })))
    .filter((op) => op.operation['x-gatehouse-not-served'] === true)
    .sort((a, b) => a.id.localeCompare(b.id));
}

describe('split mode: the gateway asks each service which RPCs it serves', () => {
  let all: Deployment;
  let split: Deployment;
  beforeAll(async () => {
    [all, split] = await Promise.all([startDeployment('all', { readyTimeoutMs: 60_000 }), startDeployment('split', { readyTimeoutMs: 60_000 })]);
  }, 180_000);
  afterAll(async () => { await Promise.all([all?.stop(), split?.stop()]); });

  it('marks the same operations as all-in-one, over gRPC: none, once every service has answered', async () => {
    const ids = async (dep: Deployment): Promise<string[]> => notServedOperations(await (await fetch(`${dep.url}/openapi.json`)).json() as Doc).map((o) => o.id);
    const fromSplit = await ids(split);
    expect(fromSplit).toEqual([]);
    expect(fromSplit).toEqual(await ids(all));
  });
});

