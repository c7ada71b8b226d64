/**
 * @module test/e2e/scim
 * The SCIM 2.0 server and its endpoint administration (issue 19, behaviour.md §6.4; RFC 7643, RFC
 * 7644) in both modes, driven over HTTP as identity providers drive it: the request sequences that
 * Microsoft Entra ID and Okta document (services/orgs/test/scim/entra.json, okta.json) replayed end to
 * end, every answer checked against RFC 7644 (status, `schemas`, `application/scim+json`, Location);
 * token rotation, org isolation, deprovisioning that ends sessions, groups as authorization tuples
 * that check_permissions sees, the SCIM error of each malformed input, and the §8 events delivered to
 * webhooks.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createCallContext, createGrpcClient, serviceDescriptor } from '@gatehouse/rpc';
import { startDeployment, startSmtpSink, type Deployment, type SmtpSink } from '@gatehouse/testing';
import { bearer, emailFlags, get, post, sleep } from './email-support.ts';
import { gql } from '../support/http.ts';
import { startReceiver, type Receiver } from '../support/webhook-receiver.ts';

const SCIM_TYPE = /^application\/scim\+json(;|$)/;
const ERROR_SCHEMA = 'urn:ietf:params:scim:api:messages:2.0:Error';
const USER_SCHEMA = 'urn:ietf:params:scim:schemas:core:2.0:User';
const LIST_SCHEMA = 'urn:ietf:params:scim:api:messages:2.0:ListResponse';
const PATCH_SCHEMA = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';
const GROUP_SCHEMA = 'urn:ietf:params:scim:schemas:core:2.0:Group';
const MODEL = 'model\n  schema 1.1\ntype user\ntype group\n  relations\n    define member: [user, group#member]\ntype document\n  relations\n    define viewer: [group#member]\n';
const EVENTS = ['user.provisioned', 'user.deprovisioned', 'user.scim_updated', 'group.created', 'group.updated', 'group.deleted'];

interface Step {
  name: string;
  method: string;
  path: string;
  body?: unknown;
  expect: { status: number; location?: boolean; schemas?: string[]; match?: Record<string, unknown> };
  save?: Record<string, string>;
  events?: string[];
  tuple?: { user: string; present: boolean };
}
interface Sequence { provider: string; source: string; steps: Step[] }

const load = (name: string): Sequence => JSON.parse(readFileSync(new URL(`../../services/orgs/test/scim/${name}.json`, import.meta.url), 'utf8')) as Sequence;

interface ScimReply { status: number; type: string | null; location: string | null; challenge: string | null; etag: string | null; body: any; text: string }

/** One SCIM request with a bearer token (no Origin: CSRF exempts bearer SCIM requests, §2.5); `extra`: more headers (If-Match, If-None-Match). */
async function scim(base: string, token: string | null, method: string, path: string, body?: unknown, raw?: string, extra: Record<string, string> = {}): Promise<ScimReply> {
  const headers: Record<string, string> = { accept: 'application/scim+json', ...extra };
  if (token !== null) headers['authorization'] = `Bearer ${token}`;
  if (body !== undefined || raw !== undefined) headers['content-type'] = 'application/scim+json';
  const res = await fetch(`${base}/scim/v2${path}`, { method, headers, ...(raw !== undefined ? { body: raw } : body !== undefined ? { body: JSON.stringify(body) } : {}) });
  const text = await res.text();
  let parsed: unknown = null;
  try { parsed = text ? JSON.parse(text) : null; } catch { parsed = text; }
  return {
    status: res.status, type: res.headers.get('content-type'), location: res.headers.get('location'), challenge: res.headers.get('www-authenticate'),
    etag: res.headers.get('etag'), body: parsed, text,
  };
}

/** RFC 7644 §3.12: the error body, `application/scim+json`. */
function expectScimError(r: ScimReply, status: number, scimType?: string): void {
  expect({ status: r.status, type: SCIM_TYPE.test(r.type ?? '') }).toEqual({ status, type: true });
  expect(r.body).toEqual({ schemas: [ERROR_SCHEMA], status: String(status), ...(scimType ? { scimType } : {}), detail: expect.any(String) });
  // RFC 7644 §2, RFC 7235 §3.1: every 401 carries the challenge
  expect(r.challenge).toBe(status === 401 ? 'Bearer realm="scim"' : null);
}

const at = (obj: unknown, path: string): unknown => path.split('.').reduce<unknown>((o, k) => (o === null || o === undefined ? undefined : (o as Record<string, unknown>)[k]), obj);
const fill = (text: string, vars: Record<string, string>): string => text.replace(/\{\{(\w+)\}\}/g, (_, k: string) => {
  if (vars[k] === undefined) throw new Error(`no value saved for {{${k}}}`);
  return vars[k]!;
});
const fillDeep = (v: unknown, vars: Record<string, string>): unknown => JSON.parse(fill(JSON.stringify(v), vars));

describe.each(['all', 'split'] as const)('SCIM 2.0 (%s)', (mode) => {
  let d: Deployment;
  let rx: Receiver;
  let sink: SmtpSink;
  let admin: Record<string, string>;
  let orgX = '';
  let orgY = '';
  let tokenX = '';
  let tokenY = '';

  const check = async (user: string, object: string): Promise<boolean> => {
    const r = await post(d.url, '/v1/check_permissions', { user: `user:${user}`, checks: [{ relation: 'member', object }] }, admin);
    expect(r.status).toBe(200);
    return r.body.results[0].allowed as boolean;
  };
  const hookPath = (event: string) => `/hook/${mode}/${event}`;
  const createOrg = async (tag: string): Promise<string> => {
    const r = await post(d.url, '/v1/admin/create_organization', { name: `${tag}-${randomUUID().slice(0, 8)}` }, admin);
    expect(r.status).toBe(200);
    return r.body.id as string;
  };

  beforeAll(async () => {
    rx = await startReceiver();
    sink = await startSmtpSink();
    d = await startDeployment(mode, { flags: [...emailFlags(sink), '--allow-private-webhook-targets'], readyTimeoutMs: 90_000 });
    admin = { 'x-service-admin-secret': d.adminSecret };
    expect((await post(d.url, '/v1/admin/fga/model', { dsl: MODEL }, admin)).status).toBe(200);
    for (const event of EVENTS) {
      expect((await post(d.url, '/v1/admin/add_webhook', { event_name: event, endpoint: `${rx.url}${hookPath(event)}` }, admin)).status).toBe(200);
    }
    orgX = await createOrg('scim-x');
    orgY = await createOrg('scim-y');
    const y = await post(d.url, '/v1/admin/create_scim_endpoint', { org_id: orgY }, admin);
    expect(y.status).toBe(200);
    tokenY = y.body.token;
  }, 150_000);
  afterAll(async () => {
    await d?.stop();
    await rx?.close();
    await sink?.close();
  });

  it('create_scim_endpoint returns {scim_endpoint, token} once; scim_endpoint never shows the token; a second is 409', async () => {
    const created = await post(d.url, '/v1/admin/create_scim_endpoint', { org_id: orgX }, admin);
    expect(created.status).toBe(200);
    expect(created.body).toEqual({
      scim_endpoint: { id: expect.any(String), org_id: orgX, enabled: true, created_at: expect.any(Number), updated_at: expect.any(Number) },
      token: expect.stringMatching(/^[0-9a-f-]{36}\.[0-9a-f]{64}$/),
    });
    expect(created.body.token.startsWith(`${created.body.scim_endpoint.id}.`)).toBe(true);
    tokenX = created.body.token;
    const again = await post(d.url, '/v1/admin/create_scim_endpoint', { org_id: orgX }, admin);
    expect({ status: again.status, body: again.body }).toEqual({ status: 409, body: { code: 'already_exists', message: 'a scim endpoint already exists for this organization' } });
    const read = await post(d.url, '/v1/admin/scim_endpoint', { org_id: orgX }, admin);
    expect(read.body).toEqual(created.body.scim_endpoint);
    expect(JSON.stringify(read.body)).not.toContain(tokenX.split('.')[1]);
    // anonymous and plain callers are refused by the admin gate (§5.1)
    const anon = await post(d.url, '/v1/admin/scim_endpoint', { org_id: orgX });
    expect({ status: anon.status, body: anon.body }).toEqual({ status: 401, body: { code: 'unauthenticated', message: 'unauthorized' } });
    const missing = await post(d.url, '/v1/admin/scim_endpoint', { org_id: await createOrg('no-scim') }, admin);
    expect({ status: missing.status, body: missing.body }).toEqual({ status: 404, body: { code: 'not_found', message: 'scim endpoint not found' } });
    const noOrg = await post(d.url, '/v1/admin/create_scim_endpoint', { org_id: randomUUID() }, admin);
    expect({ status: noOrg.status, body: noOrg.body }).toEqual({ status: 404, body: { code: 'not_found', message: 'organization not found' } });
  });

  it('the endpoint administration answers the same on GraphQL and gRPC', async () => {
    const org = await createOrg('surfaces');
    const created = await gql(d.url, 'mutation($p: CreateScimEndpointRequest!) { _create_scim_endpoint(params: $p) { token scim_endpoint { id org_id enabled } } }', { p: { org_id: org } }, { origin: d.url, ...admin });
    expect(created.status).toBe(200);
    const data = (created.body as any).data._create_scim_endpoint;
    expect(data.scim_endpoint).toEqual({ id: expect.any(String), org_id: org, enabled: true });
    const client = createGrpcClient(serviceDescriptor('orgs'), { address: d.grpcAddress });
    try {
      const ctx = createCallContext({ headers: admin, protocol: 'grpc' });
      const got = await client.call('ScimEndpoint', { org_id: org }, ctx);
      expect(got).toMatchObject({ id: data.scim_endpoint.id, org_id: org, enabled: true });
      const rotated = await client.call('RotateScimToken', { org_id: org }, ctx);
      expect(rotated['token']).not.toBe(data.token);
      expect((await scim(d.url, data.token, 'GET', '/ServiceProviderConfig')).status).toBe(401);
      expect((await scim(d.url, String(rotated['token']), 'GET', '/ServiceProviderConfig')).status).toBe(200);
      expect(await client.call('DeleteScimEndpoint', { org_id: org }, ctx)).toEqual({ message: 'scim endpoint deleted successfully' });
      expectScimError(await scim(d.url, String(rotated['token']), 'GET', '/ServiceProviderConfig'), 401);
    } finally {
      client.close();
    }
  });

  it("an org admin manages its own org's SCIM endpoint; another org's is 401 (behaviour.md §5.1); a disabled org's token is refused", async () => {
    const org = await createOrg('own');
    const email = `orgadmin-${randomUUID().slice(0, 8)}@example.com`;
    expect((await post(d.url, '/v1/signup', { email, password: 'Str0ng!pass', confirm_password: 'Str0ng!pass' })).status).toBe(200);
    // email verification is on in this deployment (the SMTP sink): the link's token signs the user in
    const verified = await post(d.url, '/v1/verify_email', { token: sink.tokenLink(await sink.waitForMail(email)).searchParams.get('token') });
    expect(verified.status).toBe(200);
    const member = await post(d.url, '/v1/admin/add_org_member', { org_id: org, user_id: verified.body.user.id, roles: ['service:org_admin'] }, admin);
    expect(member.status).toBe(200);
    const orgAdmin = bearer(verified.body.access_token as string);
    const created = await post(d.url, '/v1/admin/create_scim_endpoint', { org_id: org }, orgAdmin);
    expect(created.status).toBe(200);
    expect((await post(d.url, '/v1/admin/scim_endpoint', { org_id: org }, orgAdmin)).status).toBe(200);
    const rotated = await post(d.url, '/v1/admin/rotate_scim_token', { org_id: org }, orgAdmin);
    expect(rotated.status).toBe(200);
    for (const op of ['scim_endpoint', 'rotate_scim_token', 'delete_scim_endpoint', 'create_scim_endpoint']) {
      const other = await post(d.url, `/v1/admin/${op}`, { org_id: orgY }, orgAdmin);
      expect({ op, status: other.status, body: other.body }).toEqual({ op, status: 401, body: { code: 'unauthenticated', message: 'unauthorized' } });
    }
    expect((await scim(d.url, rotated.body.token, 'GET', '/Users')).status).toBe(200);
    expect((await post(d.url, '/v1/admin/update_organization', { id: org, enabled: false }, admin)).status).toBe(200);
    expectScimError(await scim(d.url, rotated.body.token, 'GET', '/Users'), 401);
    expect((await post(d.url, '/v1/admin/update_organization', { id: org, enabled: true }, admin)).status).toBe(200);
    expect((await scim(d.url, rotated.body.token, 'GET', '/Users')).status).toBe(200);
    const del = await post(d.url, '/v1/admin/delete_scim_endpoint', { org_id: org }, orgAdmin);
    expect(del.body).toEqual({ message: 'scim endpoint deleted successfully' });
    expectScimError(await scim(d.url, rotated.body.token, 'GET', '/Users'), 401);
  });

  it('discovery: ServiceProviderConfig, ResourceTypes and Schemas (RFC 7644 §4), behind the token', async () => {
    const spc = await scim(d.url, tokenX, 'GET', '/ServiceProviderConfig');
    expect(spc.status).toBe(200);
    expect(spc.type).toMatch(SCIM_TYPE);
    expect(spc.body).toMatchObject({
      schemas: ['urn:ietf:params:scim:schemas:core:2.0:ServiceProviderConfig'],
      patch: { supported: true }, bulk: { supported: false }, sort: { supported: false }, etag: { supported: true },
      changePassword: { supported: false }, filter: { supported: true, maxResults: 1000 },
      authenticationSchemes: [expect.objectContaining({ type: 'oauthbearertoken' })],
    });
    const types = await scim(d.url, tokenX, 'GET', '/ResourceTypes');
    expect(types.body).toMatchObject({ schemas: [LIST_SCHEMA], totalResults: 2 });
    expect(types.body.Resources.map((r: any) => [r.name, r.endpoint])).toEqual([['User', '/Users'], ['Group', '/Groups']]);
    const schemas = await scim(d.url, tokenX, 'GET', '/Schemas');
    expect(schemas.body.Resources.map((r: any) => r.id)).toEqual([USER_SCHEMA, 'urn:ietf:params:scim:schemas:core:2.0:Group']);
    expect((await scim(d.url, tokenX, 'GET', `/Schemas/${USER_SCHEMA}`)).body.id).toBe(USER_SCHEMA);
    for (const path of ['/ServiceProviderConfig', '/ResourceTypes', '/Schemas', '/Users']) {
      expectScimError(await scim(d.url, null, 'GET', path), 401);
      // one character changed (never to itself: a token that already ends in 0 gets a 1)
      expectScimError(await scim(d.url, `${tokenX.slice(0, -1)}${tokenX.endsWith('0') ? '1' : '0'}`, 'GET', path), 401);
      expectScimError(await scim(d.url, 'not-a-token', 'GET', path), 401);
    }
    expectScimError(await scim(d.url, tokenX, 'GET', '/Nothing'), 404);
  });

  it.each(['entra', 'okta'])('replays the %s provisioning sequence end to end, every answer per RFC 7644', async (name) => {
    const seq = load(name);
    const vars: Record<string, string> = { run: Math.random().toString(36).slice(2, 10) };
    const expectedEvents: Record<string, number> = {};
    for (const step of seq.steps) {
      const path = fill(step.path, vars).replace(/ /g, '%20').replace(/"/g, '%22');
      const r = await scim(d.url, tokenX, step.method, path, step.body === undefined ? undefined : fillDeep(step.body, vars));
      const label = `${seq.provider}: ${step.name}`;
      expect({ label, status: r.status }).toEqual({ label, status: step.expect.status });
      if (r.status === 204) {
        expect({ label, text: r.text }).toEqual({ label, text: '' });
      } else {
        expect({ label, type: r.type }).toEqual({ label, type: expect.stringMatching(SCIM_TYPE) });
        if (step.expect.schemas) expect({ label, schemas: r.body.schemas }).toEqual({ label, schemas: step.expect.schemas });
      }
      if (step.expect.location) {
        expect({ label, location: r.location }).toEqual({ label, location: `${d.url}/scim/v2/${r.body.meta.resourceType}s/${r.body.id}` });
        expect(r.body.meta.location).toBe(r.location);
        expect(r.body.meta.created).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/);
      }
      for (const [key, want] of Object.entries(step.expect.match ?? {})) {
        const got = at(r.body, key);
        if (want === '<absent>') expect({ label, key, got }).toEqual({ label, key, got: undefined });
        else expect({ label, key, got }).toEqual({ label, key, got: fillDeep(want, vars) });
      }
      for (const [k, p] of Object.entries(step.save ?? {})) vars[k] = String(at(r.body, p));
      for (const e of step.events ?? []) expectedEvents[e] = (expectedEvents[e] ?? 0) + 1;
      if (step.tuple) {
        const object = `group:${orgX}/${vars['groupId']}`;
        expect({ label, allowed: await check(fill(step.tuple.user, vars), object) }).toEqual({ label, allowed: step.tuple.present });
      }
    }
    // the §8 events reached the webhooks (admin's fan-out → notifications' delivery); deliveries are
    // asynchronous and unordered, so each is matched by its resource id
    for (const [event, count] of Object.entries(expectedEvents)) {
      const ours = (b: any) => (event.startsWith('group.') ? b.group?.id === vars['groupId'] && b.group?.org_id === orgX : b.user?.id === vars['userId']);
      const until = Date.now() + 30_000;
      while (rx.at(hookPath(event)).filter((r) => ours(r.body)).length < count && Date.now() < until) await sleep(100);
      const got = rx.at(hookPath(event)).filter((r) => ours(r.body));
      expect({ event, delivered: got.length >= count }).toEqual({ event, delivered: true });
      expect(got.every((r) => r.body.event_name === event)).toBe(true);
    }
  });

  it('a rotated token is refused at once; the new one works', async () => {
    const before = await scim(d.url, tokenX, 'GET', '/Users?count=1');
    expect(before.status).toBe(200);
    const rotated = await post(d.url, '/v1/admin/rotate_scim_token', { org_id: orgX }, admin);
    expect(rotated.status).toBe(200);
    expect(rotated.body.scim_endpoint.org_id).toBe(orgX);
    expectScimError(await scim(d.url, tokenX, 'GET', '/Users?count=1'), 401);
    tokenX = rotated.body.token;
    expect((await scim(d.url, tokenX, 'GET', '/Users?count=1')).status).toBe(200);
  });

  it("org X's token on org Y's user and group ids → 404; lists never show the other org's users", async () => {
    const email = `iso-${randomUUID().slice(0, 8)}@example.com`;
    const userY = await scim(d.url, tokenY, 'POST', '/Users', { schemas: [USER_SCHEMA], userName: email });
    expect(userY.status).toBe(201);
    const groupY = await scim(d.url, tokenY, 'POST', '/Groups', { schemas: ['urn:ietf:params:scim:schemas:core:2.0:Group'], displayName: `iso ${email}` });
    expect(groupY.status).toBe(201);
    for (const [method, path] of [['GET', `/Users/${userY.body.id}`], ['DELETE', `/Users/${userY.body.id}`], ['GET', `/Groups/${groupY.body.id}`], ['DELETE', `/Groups/${groupY.body.id}`]] as const) {
      expectScimError(await scim(d.url, tokenX, method, path), 404);
    }
    expectScimError(await scim(d.url, tokenX, 'PATCH', `/Users/${userY.body.id}`, { schemas: [PATCH_SCHEMA], Operations: [{ op: 'replace', value: { active: false } }] }), 404);
    expectScimError(await scim(d.url, tokenX, 'PUT', `/Users/${userY.body.id}`, { schemas: [USER_SCHEMA], userName: email }), 404);
    const list = await scim(d.url, tokenX, 'GET', `/Users?filter=${encodeURIComponent(`userName eq "${email}"`)}`);
    expect(list.body).toMatchObject({ totalResults: 0, Resources: [] });
    // the userName belongs to a user outside org X: creating it there is a uniqueness conflict
    expectScimError(await scim(d.url, tokenX, 'POST', '/Users', { schemas: [USER_SCHEMA], userName: email }), 409, 'uniqueness');
    // Y's user is still active
    expect((await scim(d.url, tokenY, 'GET', `/Users/${userY.body.id}`)).body.active).toBe(true);
  });

  it("deprovisioning (PATCH active false, then DELETE) ends the user's sessions before answering", async () => {
    const email = `deprov-${randomUUID().slice(0, 8)}@example.com`;
    const created = await scim(d.url, tokenX, 'POST', '/Users', { schemas: [USER_SCHEMA], userName: email, name: { givenName: 'Dee', familyName: 'Prov' } });
    expect(created.status).toBe(201);
    // the provisioned user has no password; it sets one through the reset mail, then logs in
    const login = async (): Promise<string> => {
      expect((await post(d.url, '/v1/forgot_password', { email })).status).toBe(200);
      const mail = await sink.waitForMail(email);
      const token = sink.tokenLink(mail).searchParams.get('token')!;
      expect((await post(d.url, '/v1/reset_password', { token, password: 'Str0ng!pass', confirm_password: 'Str0ng!pass' })).status).toBe(200);
      const r = await post(d.url, '/v1/login', { email, password: 'Str0ng!pass' });
      expect(r.status).toBe(200);
      return r.body.access_token as string;
    };
    const access = await login();
    expect((await get(d.url, '/v1/profile', bearer(access))).status).toBe(200);
    const off = await scim(d.url, tokenX, 'PATCH', `/Users/${created.body.id}`, { schemas: [PATCH_SCHEMA], Operations: [{ op: 'replace', value: { active: false } }] });
    expect(off.body.active).toBe(false);
    // no wait: the sessions were gone when the PATCH answered
    expect((await get(d.url, '/v1/profile', bearer(access))).status).toBe(401);
    expect((await post(d.url, '/v1/login', { email, password: 'Str0ng!pass' })).status).toBe(401);
    const on = await scim(d.url, tokenX, 'PATCH', `/Users/${created.body.id}`, { schemas: [PATCH_SCHEMA], Operations: [{ op: 'Replace', path: 'active', value: 'True' }] });
    expect(on.body.active).toBe(true);
    const relogin = await post(d.url, '/v1/login', { email, password: 'Str0ng!pass' });
    expect(relogin.status).toBe(200);
    const again = relogin.body.access_token as string;
    expect((await get(d.url, '/v1/profile', bearer(again))).status).toBe(200);
    const del = await scim(d.url, tokenX, 'DELETE', `/Users/${created.body.id}`);
    expect({ status: del.status, text: del.text }).toEqual({ status: 204, text: '' });
    expect((await get(d.url, '/v1/profile', bearer(again))).status).toBe(401);
    // RFC 7644 §3.6: the deleted resource is gone for every operation, and from lists
    expectScimError(await scim(d.url, tokenX, 'GET', `/Users/${created.body.id}`), 404);
    expectScimError(await scim(d.url, tokenX, 'PUT', `/Users/${created.body.id}`, { schemas: [USER_SCHEMA], userName: email }), 404);
    expectScimError(await scim(d.url, tokenX, 'PATCH', `/Users/${created.body.id}`, { schemas: [PATCH_SCHEMA], Operations: [{ op: 'replace', value: { active: true } }] }), 404);
    expectScimError(await scim(d.url, tokenX, 'DELETE', `/Users/${created.body.id}`), 404);
    expect((await scim(d.url, tokenX, 'GET', `/Users?filter=${encodeURIComponent(`id eq "${created.body.id}"`)}`)).body.totalResults).toBe(0);
    // the account stays, revoked, for the audit trail
    expect((await post(d.url, '/v1/login', { email, password: 'Str0ng!pass' })).status).toBe(401);
  });

  it('groups become tuples user:<id> member group:<org>/<group> that check_permissions sees, through the model', async () => {
    const mk = async (tag: string) => (await scim(d.url, tokenX, 'POST', '/Users', { schemas: [USER_SCHEMA], userName: `${tag}-${randomUUID().slice(0, 8)}@example.com` })).body.id as string;
    const [a, b] = [await mk('ga'), await mk('gb')];
    const outsider = randomUUID();
    const g = await scim(d.url, tokenX, 'POST', '/Groups', { schemas: ['urn:ietf:params:scim:schemas:core:2.0:Group'], displayName: `eng ${a}`, externalId: `ext-${a}`, members: [{ value: a }, { value: outsider }] });
    expect(g.status).toBe(201);
    // non-members of the org are skipped silently
    expect(g.body.members.map((m: any) => m.value)).toEqual([a]);
    const object = `group:${orgX}/${g.body.id}`;
    expect(await check(a, object)).toBe(true);
    expect(await check(b, object)).toBe(false);
    // a document shared with the group: its members see it (the model's group#member)
    expect((await post(d.url, '/v1/admin/fga/tuples', { tuples: [{ user: `${object}#member`, relation: 'viewer', object: `document:${g.body.id}` }] }, admin)).status).toBe(200);
    const viewer = await post(d.url, '/v1/check_permissions', { user: `user:${a}`, checks: [{ relation: 'viewer', object: `document:${g.body.id}` }] }, admin);
    expect(viewer.body.results[0].allowed).toBe(true);
    // the same externalId again is a uniqueness conflict (RFC 7644 §3.3)
    expectScimError(await scim(d.url, tokenX, 'POST', '/Groups', { schemas: ['urn:ietf:params:scim:schemas:core:2.0:Group'], displayName: 'whatever', externalId: `ext-${a}` }), 409, 'uniqueness');
    // displayName unique in the org
    expectScimError(await scim(d.url, tokenX, 'POST', '/Groups', { schemas: ['urn:ietf:params:scim:schemas:core:2.0:Group'], displayName: `ENG ${a}` }), 409, 'uniqueness');
    // replace members (PUT), then an unfiltered remove clears all
    const put = await scim(d.url, tokenX, 'PUT', `/Groups/${g.body.id}`, { schemas: ['urn:ietf:params:scim:schemas:core:2.0:Group'], displayName: `eng ${a}`, members: [{ value: b }] });
    expect(put.body.members.map((m: any) => m.value)).toEqual([b]);
    expect([await check(a, object), await check(b, object)]).toEqual([false, true]);
    const cleared = await scim(d.url, tokenX, 'PATCH', `/Groups/${g.body.id}`, { schemas: [PATCH_SCHEMA], Operations: [{ op: 'remove', path: 'members' }] });
    expect(cleared.body.members).toEqual([]);
    expect(await check(b, object)).toBe(false);
    const replaced = await scim(d.url, tokenX, 'PATCH', `/Groups/${g.body.id}`, { schemas: [PATCH_SCHEMA], Operations: [{ op: 'replace', path: 'members', value: [{ value: a }, { value: b }] }] });
    expect(replaced.body.members.map((m: any) => m.value)).toEqual([a, b]);
    // issue 31: an add and a filtered remove as Entra ID sends them touch those members only, and the
    // group.updated webhook carries the change, not the whole list
    const c = await mk('gc');
    const changed = await scim(d.url, tokenX, 'PATCH', `/Groups/${g.body.id}`, { schemas: [PATCH_SCHEMA], Operations: [
      { op: 'Add', path: 'members', value: [{ value: c }, { value: a }] }, { op: 'Remove', path: `members[value eq "${b}"]` },
    ] });
    expect(changed.body.members.map((m: any) => m.value)).toEqual([a, c]);
    expect([await check(a, object), await check(b, object), await check(c, object)]).toEqual([true, false, true]);
    const delta = (body: any) => body.group?.id === g.body.id && (body.group?.members_added ?? []).includes(c);
    const until = Date.now() + 30_000;
    while (!rx.at(hookPath('group.updated')).some((r) => delta(r.body)) && Date.now() < until) await sleep(100);
    const hook = rx.at(hookPath('group.updated')).find((r) => delta(r.body))?.body;
    expect({ added: hook?.group?.members_added, removed: hook?.group?.members_removed, all: hook?.group?.member_ids ?? [] }).toEqual({ added: [c], removed: [b], all: [] });
    // a deleted user leaves every group: not listed as a member, its member tuple gone (RFC 7644 §3.6)
    expect((await scim(d.url, tokenX, 'DELETE', `/Users/${a}`)).status).toBe(204);
    expect((await scim(d.url, tokenX, 'GET', `/Groups/${g.body.id}`)).body.members.map((m: any) => m.value)).toEqual([c]);
    expect([await check(a, object), await check(c, object)]).toEqual([false, true]);
    expect((await scim(d.url, tokenX, 'DELETE', `/Groups/${g.body.id}`)).status).toBe(204);
    expect([await check(a, object), await check(c, object)]).toEqual([false, false]);
  });

  it('malformed filters, bodies and PatchOps → the SCIM error with the right scimType; never a 5xx', async () => {
    const id = (await scim(d.url, tokenX, 'POST', '/Users', { schemas: [USER_SCHEMA], userName: `bad-${randomUUID().slice(0, 8)}@example.com` })).body.id as string;
    const gid = (await scim(d.url, tokenX, 'POST', '/Groups', { schemas: ['urn:ietf:params:scim:schemas:core:2.0:Group'], displayName: `bad ${id}` })).body.id as string;
    const filters = [
      'nickName eq "a"', 'userName eq', 'userName', '"a" eq userName', 'active co "t"', 'active gt false', 'emails[display eq "x"]',
      'active eq "true"', 'userName eq true', 'userName eq "unterminated', 'userName eq "a" and', '(userName eq "a"', '',
    ];
    for (const f of filters.slice(0, -1)) {
      const r = await scim(d.url, tokenX, 'GET', `/Users?filter=${encodeURIComponent(f)}`);
      expect({ f, status: r.status, scimType: r.body.scimType }).toEqual({ f, status: 400, scimType: 'invalidFilter' });
      expectScimError(r, 400, 'invalidFilter');
    }
    expectScimError(await scim(d.url, tokenX, 'GET', `/Groups?filter=${encodeURIComponent('title co "x"')}`), 400, 'invalidFilter');
    expectScimError(await scim(d.url, tokenX, 'GET', `/Groups?filter=${encodeURIComponent('displayName eq 1')}`), 400, 'invalidFilter');
    expectScimError(await scim(d.url, tokenX, 'GET', '/Users?startIndex=abc'), 400, 'invalidValue');
    // bodies
    expectScimError(await scim(d.url, tokenX, 'POST', '/Users', undefined, '{not json'), 400, 'invalidSyntax');
    expectScimError(await scim(d.url, tokenX, 'POST', '/Users', undefined, '[1,2]'), 400, 'invalidSyntax');
    expectScimError(await scim(d.url, tokenX, 'POST', '/Users', undefined, ''), 400, 'invalidSyntax');
    expectScimError(await scim(d.url, tokenX, 'POST', '/Users', { schemas: [USER_SCHEMA] }), 400, 'invalidValue');
    expectScimError(await scim(d.url, tokenX, 'POST', '/Users', { schemas: [USER_SCHEMA], userName: '   ' }), 400, 'invalidValue');
    expectScimError(await scim(d.url, tokenX, 'POST', '/Users', { schemas: [USER_SCHEMA], userName: 'x', phoneNumbers: [{ value: '555-0100' }] }), 400, 'invalidValue');
    expectScimError(await scim(d.url, tokenX, 'POST', '/Users', { schemas: [USER_SCHEMA], userName: 42 }), 400, 'invalidValue');
    expectScimError(await scim(d.url, tokenX, 'POST', '/Groups', { schemas: ['urn:ietf:params:scim:schemas:core:2.0:Group'] }), 400, 'invalidValue');
    expectScimError(await scim(d.url, tokenX, 'POST', '/Groups', { displayName: 'x', members: 'nope' }), 400, 'invalidValue');
    // PatchOps
    const badPatches: Array<[unknown, string]> = [
      [{ Operations: [{ op: 'replace', value: { active: false } }] }, 'invalidSyntax'],
      [{ schemas: [PATCH_SCHEMA] }, 'invalidSyntax'],
      [{ schemas: [PATCH_SCHEMA], Operations: [] }, 'invalidSyntax'],
      [{ schemas: [PATCH_SCHEMA], Operations: [{ path: 'active', value: false }] }, 'invalidSyntax'],
      [{ schemas: [PATCH_SCHEMA], Operations: [{ op: 'replace', path: 'active' }] }, 'invalidSyntax'],
      [{ schemas: [PATCH_SCHEMA], Operations: 'x' }, 'invalidSyntax'],
      [{ schemas: [PATCH_SCHEMA], Operations: [{ op: 'replace', path: 'active', value: 'maybe' }] }, 'invalidValue'],
      [{ schemas: [PATCH_SCHEMA], Operations: [{ op: 'replace', value: 'x' }] }, 'invalidValue'],
      [{ schemas: [PATCH_SCHEMA], Operations: [{ op: 'replace', path: 'emails[type eq "work"', value: 'x@example.com' }] }, 'invalidPath'],
    ];
    for (const [body, scimType] of badPatches) expectScimError(await scim(d.url, tokenX, 'PATCH', `/Users/${id}`, body), 400, scimType);
    expectScimError(await scim(d.url, tokenX, 'PATCH', `/Groups/${gid}`, { schemas: [PATCH_SCHEMA], Operations: [{ op: 'remove', path: 'members[display eq "x"]' }] }), 400, 'invalidFilter');
    expectScimError(await scim(d.url, tokenX, 'PATCH', `/Groups/${gid}`, { schemas: [PATCH_SCHEMA], Operations: [{ op: 'add', path: 'members', value: [{ display: 'no value' }] }] }), 400, 'invalidValue');
    // an unknown op, an attribute the server does not keep, a read-only one (RFC 7644 §3.5.2)
    expectScimError(await scim(d.url, tokenX, 'PATCH', `/Users/${id}`, { schemas: [PATCH_SCHEMA], Operations: [{ op: 'move', path: 'active', value: false }] }), 400, 'invalidSyntax');
    expectScimError(await scim(d.url, tokenX, 'PATCH', `/Users/${id}`, { schemas: [PATCH_SCHEMA], Operations: [{ op: 'replace', path: 'nickName', value: 'x' }] }), 400, 'invalidPath');
    expectScimError(await scim(d.url, tokenX, 'PATCH', `/Users/${id}`, { schemas: [PATCH_SCHEMA], Operations: [{ op: 'replace', path: 'meta.lastModified', value: 'x' }] }), 400, 'mutability');
    // none of the refused PATCHes changed the user
    expect((await scim(d.url, tokenX, 'GET', `/Users/${id}`)).body.active).toBe(true);
    // odd ids, methods and paths
    for (const [method, path] of [['GET', '/Users/..%2F..'], ['GET', '/Users/%E0%A4%A'], ['GET', '/Users/x/y'], ['GET', `/Groups/${'9'.repeat(300)}`], ['DELETE', '/ServiceProviderConfig'], ['PUT', '/Users']] as const) {
      const r = await scim(d.url, tokenX, method, path);
      expect({ path, ok: r.status >= 400 && r.status < 500 }).toEqual({ path, ok: true });
      expect(r.body.schemas).toEqual([ERROR_SCHEMA]);
    }
  });

  it('the list supports startIndex and count (1-based, count at most 1000)', async () => {
    const all = await scim(d.url, tokenX, 'GET', '/Users?count=1000');
    expect(all.body.totalResults).toBeGreaterThanOrEqual(3);
    const page = await scim(d.url, tokenX, 'GET', '/Users?startIndex=2&count=2');
    expect(page.body).toMatchObject({ schemas: [LIST_SCHEMA], totalResults: all.body.totalResults, startIndex: 2, itemsPerPage: 2 });
    expect(page.body.Resources.map((r: any) => r.id)).toEqual(all.body.Resources.slice(1, 3).map((r: any) => r.id));
    const zero = await scim(d.url, tokenX, 'GET', '/Users?count=0');
    expect(zero.body).toMatchObject({ totalResults: all.body.totalResults, itemsPerPage: 0, Resources: [] });
    const co = await scim(d.url, tokenX, 'GET', `/Users?filter=${encodeURIComponent('userName co "@EXAMPLE.com"')}`);
    expect(co.body.totalResults).toBeGreaterThanOrEqual(1);
    const inactive = await scim(d.url, tokenX, 'GET', `/Users?filter=${encodeURIComponent('active eq false')}`);
    expect(inactive.body.Resources.every((r: any) => r.active === false)).toBe(true);
    await sleep(0);
  });

  it('RFC 7643/7644 cases: any userName, 409 uniqueness, noTarget, tel: phones, If-Match, attributes, the filter grammar in the database, POST /.search', async () => {
    const tag = randomUUID().slice(0, 8);
    // any userName (RFC 7643 §4.1.1): not an address, with its email given apart; RFC 3966 phone values
    const jdoe = await scim(d.url, tokenX, 'POST', '/Users', {
      schemas: [USER_SCHEMA], userName: `JDoe-${tag}`, externalId: `ext-${tag}`, name: { givenName: 'Jane', familyName: 'Doe' },
      emails: [{ value: `jane-${tag}@work.example.com`, type: 'work', primary: true }], phoneNumbers: [{ value: 'tel:+1-201-555-0123', type: 'work' }],
    });
    expect(jdoe.status).toBe(201);
    expect(jdoe.body).toMatchObject({ userName: `JDoe-${tag}`, phoneNumbers: [{ value: '+12015550123', type: 'work' }], meta: { version: 'W/"1"' } });
    const id = jdoe.body.id as string;
    // a userName or externalId already held in the org, case-insensitively for userName → 409
    expectScimError(await scim(d.url, tokenX, 'POST', '/Users', { schemas: [USER_SCHEMA], userName: `jdoe-${tag}` }), 409, 'uniqueness');
    expectScimError(await scim(d.url, tokenX, 'POST', '/Users', { schemas: [USER_SCHEMA], userName: `other-${tag}`, externalId: `ext-${tag}` }), 409, 'uniqueness');
    expectScimError(await scim(d.url, tokenX, 'POST', '/Users', { schemas: [USER_SCHEMA], userName: `third-${tag}`, emails: [{ value: `JANE-${tag}@work.example.com` }] }), 409, 'uniqueness');
    // a user with no email at all
    const bare = await scim(d.url, tokenX, 'POST', '/Users', { schemas: [USER_SCHEMA], userName: `bare-${tag}` });
    expect({ status: bare.status, emails: bare.body.emails }).toEqual({ status: 201, emails: [] });

    // RFC 7644 §3.5.2.3: a value path that matches nothing → 400 noTarget, and the login email is unchanged
    expectScimError(await scim(d.url, tokenX, 'PATCH', `/Users/${id}`, { schemas: [PATCH_SCHEMA], Operations: [{ op: 'replace', path: 'emails[type eq "home"].value', value: `eve-${tag}@evil.example.com` }] }), 400, 'noTarget');
    const still = await scim(d.url, tokenX, 'GET', `/Users/${id}`);
    expect(still.body.emails).toEqual([{ value: `jane-${tag}@work.example.com`, type: 'work', primary: true }]);
    const account = await post(d.url, '/v1/admin/user', { id }, admin);
    expect({ status: account.status, email: account.body.email }).toEqual({ status: 200, email: `jane-${tag}@work.example.com` });

    // If-Match (RFC 7644 §3.14): the current version applies, a stale one → 412
    const v1 = still.body.meta.version as string;
    const patched = await fetch(`${d.url}/scim/v2/Users/${id}`, {
      method: 'PATCH', headers: { authorization: `Bearer ${tokenX}`, 'content-type': 'application/scim+json', 'if-match': v1 },
      body: JSON.stringify({ schemas: [PATCH_SCHEMA], Operations: [{ op: 'replace', path: 'name.givenName', value: 'Janet' }] }),
    });
    expect(patched.status).toBe(200);
    const v2 = ((await patched.json()) as any).meta.version as string;
    expect(v2).not.toBe(v1);
    const stale = await fetch(`${d.url}/scim/v2/Users/${id}`, {
      method: 'PUT', headers: { authorization: `Bearer ${tokenX}`, 'content-type': 'application/scim+json', 'if-match': v1 },
      body: JSON.stringify({ schemas: [USER_SCHEMA], userName: `JDoe-${tag}` }),
    });
    expect({ status: stale.status, body: await stale.json() }).toEqual({ status: 412, body: { schemas: [ERROR_SCHEMA], status: '412', detail: expect.any(String) } });

    // attributes / excludedAttributes (RFC 7644 §3.4.2.5)
    const narrow = await scim(d.url, tokenX, 'GET', `/Users/${id}?attributes=userName,name.givenName`);
    expect(Object.keys(narrow.body).sort()).toEqual(['id', 'meta', 'name', 'schemas', 'userName']);
    expect(narrow.body.name).toEqual({ givenName: 'Janet' });
    const wide = await scim(d.url, tokenX, 'GET', `/Users/${id}?excludedAttributes=emails,phoneNumbers`);
    expect([wide.body.emails, wide.body.phoneNumbers, wide.body.userName]).toEqual([undefined, undefined, `JDoe-${tag}`]);

    // the whole filter grammar, run in the database
    const q = async (f: string) => (await scim(d.url, tokenX, 'GET', `/Users?filter=${encodeURIComponent(f)}&attributes=userName`)).body;
    const ids = async (f: string) => ((await q(f)).Resources as any[]).map((r) => r.id).sort();
    expect(await ids(`emails[type eq "work" and value co "jane-${tag}@"]`)).toEqual([id]);
    expect(await ids(`userName sw "jdoe-${tag}" or userName eq "BARE-${tag}"`)).toEqual([id, bare.body.id].sort());
    expect(await ids(`(userName ew "-${tag}") and not (emails pr)`)).toEqual([bare.body.id]);
    expect(await ids(`phoneNumbers.value eq "+12015550123" and name.givenName eq "janet"`)).toEqual([id]);
    expect(await ids(`externalId eq "EXT-${tag}"`)).toEqual([]);
    expect(await ids(`meta.created ge "2000-01-01T00:00:00Z" and userName co "${tag}"`)).toEqual([id, bare.body.id].sort());

    // POST /Users/.search (RFC 7644 §3.4.3)
    const search = await scim(d.url, tokenX, 'POST', '/Users/.search', {
      schemas: ['urn:ietf:params:scim:api:messages:2.0:SearchRequest'], filter: `userName co "${tag}"`, attributes: ['userName'], startIndex: 1, count: 1,
    });
    expect(search.body).toMatchObject({ schemas: [LIST_SCHEMA], totalResults: 2, itemsPerPage: 1, startIndex: 1 });
    expect(Object.keys(search.body.Resources[0]).sort()).toEqual(['id', 'meta', 'schemas', 'userName']);
    expectScimError(await scim(d.url, tokenX, 'POST', '/Users/.search', { filter: 'userName pr' }), 400, 'invalidSyntax');
  });
  it('Groups and Users: attributes / excludedAttributes, meta.version as the ETag, If-Match → 412, If-None-Match → 304 (RFC 7644 §3.4.2.5, §3.14)', async () => {
    const tag = randomUUID().slice(0, 8);
    const user = async (name: string) => {
      const r = await scim(d.url, tokenX, 'POST', '/Users', { schemas: [USER_SCHEMA], userName: `${name}-${tag}`, emails: [{ value: `${name}-${tag}@etag.example.com`, type: 'work', primary: true }] });
      expect(r.status).toBe(201);
      // RFC 7644 §3.14: the ETag header carries the version of meta.version
      expect([r.etag, r.body.meta.version]).toEqual(['W/"1"', 'W/"1"']);
      return r.body.id as string;
    };
    const ada = await user('ada');
    const bob = await user('bob');

    // Okta creates the group with its members; the answer carries meta.version and the ETag
    const created = await scim(d.url, tokenX, 'POST', '/Groups', { schemas: [GROUP_SCHEMA], displayName: `ETag ${tag}`, members: [{ value: ada }] });
    expect({ status: created.status, etag: created.etag, version: created.body.meta.version }).toEqual({ status: 201, etag: 'W/"1"', version: 'W/"1"' });
    const gid = created.body.id as string;

    // Entra ID reads groups with excludedAttributes=members, by id and in filtered lists
    const lean = await scim(d.url, tokenX, 'GET', `/Groups/${gid}?excludedAttributes=members`);
    expect(Object.keys(lean.body).sort()).toEqual(['displayName', 'id', 'meta', 'schemas']);
    expect(lean.etag).toBe('W/"1"');
    const listed = await scim(d.url, tokenX, 'GET', `/Groups?excludedAttributes=members&filter=${encodeURIComponent(`displayName eq "ETag ${tag}"`)}`);
    expect(listed.body.Resources.map((g: any) => [g.id, g.members])).toEqual([[gid, undefined]]);
    // attributes: only those named, and the ones always returned (id, schemas, meta)
    const named = await scim(d.url, tokenX, 'GET', `/Groups/${gid}?attributes=displayName`);
    expect(Object.keys(named.body).sort()).toEqual(['displayName', 'id', 'meta', 'schemas']);
    const values = await scim(d.url, tokenX, 'GET', `/Groups/${gid}?attributes=urn:ietf:params:scim:schemas:core:2.0:Group:members.value`);
    expect(values.body.members).toEqual([{ value: ada }]);
    expect(values.body.displayName).toBeUndefined();
    const searched = await scim(d.url, tokenX, 'POST', '/Groups/.search', {
      schemas: ['urn:ietf:params:scim:api:messages:2.0:SearchRequest'], filter: `displayName eq "ETag ${tag}"`, attributes: ['externalId'],
    });
    expect(Object.keys(searched.body.Resources[0]).sort()).toEqual(['id', 'meta', 'schemas']);

    // If-None-Match with the current version → 304, no body; a stale one → 200
    const unchanged = await scim(d.url, tokenX, 'GET', `/Groups/${gid}`, undefined, undefined, { 'if-none-match': 'W/"1"' });
    expect({ status: unchanged.status, text: unchanged.text, etag: unchanged.etag }).toEqual({ status: 304, text: '', etag: 'W/"1"' });

    // Okta's PATCH adding a member, conditional on the version read: applies and moves the version on
    const patch = { schemas: [PATCH_SCHEMA], Operations: [{ op: 'add', path: 'members', value: [{ value: bob }] }] };
    const added = await scim(d.url, tokenX, 'PATCH', `/Groups/${gid}?excludedAttributes=members`, patch, undefined, { 'if-match': 'W/"1"' });
    expect({ status: added.status, etag: added.etag, version: added.body.meta.version, members: added.body.members }).toEqual({ status: 200, etag: 'W/"2"', version: 'W/"2"', members: undefined });
    expect((await scim(d.url, tokenX, 'GET', `/Groups/${gid}`, undefined, undefined, { 'if-none-match': 'W/"1"' })).status).toBe(200);

    // a write conditional on the stale version → 412, and nothing changes
    const removeAda = { schemas: [PATCH_SCHEMA], Operations: [{ op: 'remove', path: `members[value eq "${ada}"]` }] };
    expectScimError(await scim(d.url, tokenX, 'PATCH', `/Groups/${gid}`, removeAda, undefined, { 'if-match': 'W/"1"' }), 412);
    expectScimError(await scim(d.url, tokenX, 'PUT', `/Groups/${gid}`, { schemas: [GROUP_SCHEMA], displayName: `Renamed ${tag}` }, undefined, { 'if-match': 'W/"1"' }), 412);
    expectScimError(await scim(d.url, tokenX, 'DELETE', `/Groups/${gid}`, undefined, undefined, { 'if-match': 'W/"1"' }), 412);
    const now = await scim(d.url, tokenX, 'GET', `/Groups/${gid}`);
    expect({ name: now.body.displayName, members: now.body.members.map((m: any) => m.value).sort(), etag: now.etag }).toEqual({ name: `ETag ${tag}`, members: [ada, bob].sort(), etag: 'W/"2"' });
    expect(await check(bob, `group:${orgX}/${gid}`)).toBe(true);
    // `*` matches any version
    expect((await scim(d.url, tokenX, 'PATCH', `/Groups/${gid}`, removeAda, undefined, { 'if-match': '*' })).body.meta.version).toBe('W/"3"');
    expect(await check(ada, `group:${orgX}/${gid}`)).toBe(false);

    // Users: the same headers
    const read = await scim(d.url, tokenX, 'GET', `/Users/${ada}`);
    expect(read.etag).toBe(read.body.meta.version);
    expect((await scim(d.url, tokenX, 'GET', `/Users/${ada}`, undefined, undefined, { 'if-none-match': read.etag! })).status).toBe(304);
    const renamed = await scim(d.url, tokenX, 'PATCH', `/Users/${ada}`, { schemas: [PATCH_SCHEMA], Operations: [{ op: 'replace', path: 'name.givenName', value: 'Ada' }] }, undefined, { 'if-match': read.etag! });
    expect(renamed.etag).toBe('W/"2"');
    expectScimError(await scim(d.url, tokenX, 'DELETE', `/Users/${ada}`, undefined, undefined, { 'if-match': read.etag! }), 412);
    expect((await scim(d.url, tokenX, 'DELETE', `/Groups/${gid}`, undefined, undefined, { 'if-match': 'W/"3"' })).status).toBe(204);
  });
});
