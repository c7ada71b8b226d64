/**
 * @module test/e2e/http-workers
 * `gatehouse all --http-workers=2` on PostgreSQL + Redis (issue 38 §0): two worker processes share the
 * HTTP port, each answering validate_jwt_token and check_permissions from its own caches. The next-request
 * guarantees must hold across them: once a logout has been answered by one worker, the other refuses the
 * token on its next request; once a tuple write has been answered by one, the other's next check sees it.
 * Each request goes over a keep-alive connection (node:cluster hands a connection to one worker) and
 * carries its own `X-Request-Id`; the access log line with that id names the worker that answered
 * (`http_worker`), so the test proves which worker answered every request that matters.
 */
import http from 'node:http';
import { describe, it, expect, beforeAll, afterAll, jest } from '@jest/globals';
import { startDeployment, type Deployment } from '@gatehouse/testing';
import { rest } from '../support/surfaces.ts';
import { PASSWORD, expectOk, freshEmail } from '../support/scenario.ts';
import { DOCS_MODEL } from '../support/authz-fixtures.ts';
import { authzRest, okBody } from '../support/authz-surfaces.ts';

jest.setTimeout(120_000);

interface Answer { status: number; body: Record<string, any>; worker: number }

/** One keep-alive connection to the deployment: every request on it is answered by the same worker. */
interface Connection {
  post(path: string, body: unknown, headers?: Record<string, string>): Promise<Answer>;
  get(path: string, headers?: Record<string, string>): Promise<Answer>;
  close(): void;
}

describe('two HTTP workers (all-in-one, PostgreSQL + Redis)', () => {
  let d: Deployment;
  let seq = 0;
  const open: Connection[] = [];

  beforeAll(async () => {
    d = await startDeployment('all', { database: 'postgres', redis: true, flags: ['--http-workers=2', '--log-level=info', '--rate-limit-rps=0'], readyTimeoutMs: 90_000 });
    // /healthz answers once the first worker serves; the primary opens /metrics once every worker does
    for (let i = 0; ; i++) {
      if (await fetch(d.metricsUrl).then((r) => r.ok, () => false)) break;
      if (i === 900) throw new Error(`the second worker did not start:\n${d.output().slice(-4000)}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    okBody(await authzRest(d, { op: '_fga_write_model', args: { dsl: DOCS_MODEL }, creds: { adminSecret: d.adminSecret } }));
  }, 180_000);
  afterAll(async () => {
    for (const c of open) c.close();
    await d?.stop();
  });

  /** The `http_worker` of the access-log line of request `id` (the line is written once the response closed). */
  async function workerOf(id: string): Promise<number> {
    for (let i = 0; i < 100; i++) {
      for (const line of d.output().split('\n')) {
        if (!line.includes(`"req_id":"${id}"`)) continue;
        const worker = (JSON.parse(line) as { http_worker?: unknown }).http_worker;
        if (typeof worker === 'number') return worker;
        throw new Error(`the access log line of ${id} names no worker: ${line}`);
      }
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`no access log line for request ${id}`);
  }

  function connection(): Connection {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const url = new URL(d.url);
    const send = (method: 'GET' | 'POST', path: string, body: unknown, headers: Record<string, string>): Promise<Answer> => new Promise((resolve, reject) => {
      const id = `http-workers-${process.pid}-${++seq}`;
      const data = method === 'POST' ? JSON.stringify(body) : '';
      const req = http.request({
        host: url.hostname, port: url.port, path, method, agent,
        headers: { ...(method === 'POST' ? { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(data)) } : {}), origin: d.url, 'x-request-id': id, ...headers },
      }, (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => { text += chunk; });
        res.on('end', () => {
          workerOf(id).then((worker) => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) as Record<string, any>, worker }), reject);
        });
      });
      req.on('error', reject);
      req.end(data);
    });
    const c: Connection = {
      post: (path, body, headers = {}) => send('POST', path, body, headers),
      get: (path, headers = {}) => send('GET', path, undefined, headers),
      close: () => agent.destroy(),
    };
    open.push(c);
    return c;
  }

  /** Two connections answered by different workers (the primary deals connections out round-robin). */
  async function twoWorkers(): Promise<[Connection, Connection]> {
    const first = connection();
    const w1 = (await first.get('/v1/meta')).worker;
    for (let i = 0; i < 8; i++) {
      const other = connection();
      if ((await other.get('/v1/meta')).worker !== w1) return [first, other];
    }
    throw new Error('every connection went to the same worker');
  }

  async function user(label: string): Promise<{ token: string; sub: string }> {
    const email = freshEmail(label);
    expectOk(await rest(d, { op: 'signup', args: { email, password: PASSWORD, confirm_password: PASSWORD } }));
    const token = expectOk(await rest(d, { op: 'login', args: { email, password: PASSWORD } })).access_token as string;
    const v = expectOk(await rest(d, { op: 'validate_jwt_token', args: { token_type: 'access_token', token } }));
    return { token, sub: v.claims.sub as string };
  }

  it('a logout answered by one worker refuses the token on the next request to the other', async () => {
    const u = await user('workers-logout');
    const [a, b] = await twoWorkers();
    const validate = { token_type: 'access_token', token: u.token };
    // both workers have the token in their caches (the verified-JWT map, the resolved-caller map, the session cache)
    for (let i = 0; i < 3; i++) {
      for (const c of [a, b]) {
        const v = await c.post('/v1/validate_jwt_token', validate);
        expect(v.body.is_valid).toBe(true);
        expect((await c.get('/v1/profile', { authorization: `Bearer ${u.token}` })).status).toBe(200);
      }
    }
    const logout = await a.post('/v1/logout', {}, { authorization: `Bearer ${u.token}` });
    expect(logout.status).toBe(200);
    const after = await b.post('/v1/validate_jwt_token', validate);
    expect(after.worker).not.toBe(logout.worker);
    expect({ status: after.status, code: after.body.code, message: after.body.message }).toEqual({ status: 401, code: 'unauthenticated', message: 'invalid token' });
    const profile = await b.get('/v1/profile', { authorization: `Bearer ${u.token}` });
    expect(profile.worker).not.toBe(logout.worker);
    expect(profile.status).toBe(401);
    // and on the worker that answered the logout
    expect((await a.post('/v1/validate_jwt_token', validate)).status).toBe(401);
  });

  it('a tuple write answered by one worker is seen by the next check on the other, and so is its delete', async () => {
    const u = await user('workers-tuples');
    const [a, b] = await twoWorkers();
    const bearer = { authorization: `Bearer ${u.token}` };
    const admin = { 'x-service-admin-secret': d.adminSecret };
    const check = { checks: [{ relation: 'viewer', object: 'doc:workers' }] };
    const allowed = (r: Answer): unknown => (r.status === 200 ? r.body.results?.[0]?.allowed : r.body);
    for (let i = 0; i < 3; i++) {
      expect(allowed(await a.post('/v1/check_permissions', check, bearer))).toBe(false);
      expect(allowed(await b.post('/v1/check_permissions', check, bearer))).toBe(false);
    }
    const tuple = { tuples: [{ user: `user:${u.sub}`, relation: 'viewer', object: 'doc:workers' }] };
    const write = await a.post('/v1/admin/fga/tuples', tuple, admin);
    expect(write.status).toBe(200);
    const seen = await b.post('/v1/check_permissions', check, bearer);
    expect(seen.worker).not.toBe(write.worker);
    expect(allowed(seen)).toBe(true);

    const del = await b.post('/v1/admin/fga/tuples/delete', tuple, admin);
    expect(del.status).toBe(200);
    const gone = await a.post('/v1/check_permissions', check, bearer);
    expect(gone.worker).not.toBe(del.worker);
    expect(allowed(gone)).toBe(false);
  });

  it('serves /metrics once for both workers, summed', async () => {
    const res = await fetch(d.metricsUrl);
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text).toMatch(/^gatehouse_process_cpu_seconds_total(\{[^}]*\})? [0-9.e+-]+$/m);
    // the requests of this file were answered by both workers; the sum counts them all
    const served = [...text.matchAll(/^gatehouse_http_requests_total\{[^}]*route="\/v1\/check_permissions"[^}]*\} (\d+)$/gm)].reduce((a, m) => a + Number(m[1]), 0);
    expect(served).toBeGreaterThanOrEqual(8);
  });
});
