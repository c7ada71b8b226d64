/**
 * @module test/e2e/logs
 * Issue 15 item 6: every line a process prints is JSON (config warnings included) with an ISO-8601
 * `time` and at most one `service` key; one access-log line per request at info (method, route,
 * status, duration, request id, client IP; never bodies, tokens or cookies), with the request id
 * echoed in `X-Request-Id`; and a start-up summary naming the URLs, storage, bus and development
 * defaults.
 */
import { describe, it, expect, beforeAll, afterAll, jest } from '@jest/globals';
import { startDeployment, type Deployment } from '@gatehouse/testing';
import { PASSWORD, freshEmail } from '../support/scenario.ts';

jest.setTimeout(60_000);

/** Every printed line of every process, without the `--- <command> ---` separators. */
const lines = (d: Deployment): string[] => d.output().split('\n').filter((l) => l.trim() !== '' && !/^--- [a-z]+ ---$/.test(l));

describe.each(['all', 'split'] as const)('logs (%s)', (mode) => {
  let d: Deployment;
  let access: Array<Record<string, unknown>>;
  let secrets: string[];
  beforeAll(async () => {
    d = await startDeployment(mode, { readyTimeoutMs: 60_000, flags: ['--log-level=info'] });
    const email = freshEmail(`logs-${mode}`);
    const post = (path: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> => fetch(`${d.url}${path}`, {
      method: 'POST', headers: { origin: d.url, 'content-type': 'application/json', ...headers }, body: JSON.stringify(body),
    });
    await post('/v1/signup', { email, password: PASSWORD, confirm_password: PASSWORD });
    const login = await post('/v1/login', { email, password: PASSWORD }, { 'x-request-id': `login-${mode}` });
    expect(login.headers.get('x-request-id')).toBe(`login-${mode}`);
    const body = await login.json() as { access_token: string };
    const cookie = login.headers.getSetCookie().map((c) => c.split(';')[0]!).join('; ');
    const profile = await fetch(`${d.url}/v1/profile`, { headers: { authorization: `Bearer ${body.access_token}`, cookie } });
    expect(profile.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/); // none given: a fresh UUID
    // an id that is not plausible (spaces, over 128 characters) is replaced, not echoed
    expect((await fetch(`${d.url}/v1/meta`, { headers: { 'x-request-id': 'a b' } })).headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    secrets = [PASSWORD, body.access_token, ...cookie.split('; ').map((c) => c.split('=')[1]!)];
    await new Promise((r) => setTimeout(r, 300));
    access = lines(d).map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.component === 'access');
  }, 120_000);
  afterAll(async () => { await d?.stop(); });

  it('prints only JSON lines, with ISO-8601 time and at most one service key', () => {
    for (const line of lines(d)) {
      expect(() => JSON.parse(line)).not.toThrow();
      expect(JSON.parse(line).time).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      expect(line.split('"service":').length - 1).toBeLessThanOrEqual(1);
    }
    // the --allowed-origins=* warning, once plain text on stderr, is a JSON warn line
    expect(lines(d).map((l) => JSON.parse(l) as Record<string, unknown>).some((l) => l.level === 'warn' && String(l.msg).startsWith('--allowed-origins is *'))).toBe(true);
  });

  it('logs one access line per request: method, route template, status, duration, request id, client IP', () => {
    const login = access.filter((l) => l.req_id === `login-${mode}`);
    expect(login).toHaveLength(1);
    expect(login[0]).toMatchObject({ level: 'info', method: 'POST', route: '/v1/login', status: 200, client_ip: '127.0.0.1', msg: 'request' });
    expect(typeof login[0]!.duration_ms).toBe('number');
    expect(access.filter((l) => l.route === '/v1/profile' && l.status === 200)).toHaveLength(1);
  });

  it('never logs a password, a token or a cookie', () => {
    const out = d.output();
    for (const s of secrets) expect(out).not.toContain(s);
  });

  it('ends start-up with one summary naming the URLs, storage, bus and development defaults', () => {
    const summary = lines(d).map((l) => JSON.parse(l) as Record<string, any>).find((l) => String(l.msg).startsWith('Gatehouse is serving'))!;
    expect(summary).toMatchObject({
      url: d.url, rest: `${d.url}/v1`, graphql: `${d.url}/graphql`, openapi: `${d.url}/openapi.json`, grpc: d.grpcAddress,
      development_defaults: expect.arrayContaining(['--allowed-origins=*', '--app-cookie-secure=false']),
    });
    if (mode === 'all') expect(summary).toMatchObject({ database: expect.stringMatching(/^sqlite /), sessions: 'database', bus: 'in-process' });
    else expect(summary).toMatchObject({ sessions: 'redis 127.0.0.1:6379', services: expect.objectContaining({ authn: expect.stringMatching(/^127\.0\.0\.1:\d+$/) }) });
  });
});
