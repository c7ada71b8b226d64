/**
 * The gateway's access line (issue 15; issue 38 §4): written pre-shaped, the same bytes as pino's
 * `logger.info`, with its escaping, and never a header, query or body value.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import express from 'express';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { Writable } from 'node:stream';
import { createLogger, preshapedInfoWriter, type Logger } from '@gatehouse/observability';
import { accessFieldsJson, accessLog, type AccessFields } from './access-log.ts';

function capture(): { stream: Writable; text: () => string } {
  const chunks: string[] = [];
  const stream = new Writable({ write(chunk: Buffer, _enc, done) { chunks.push(chunk.toString()); done(); } });
  return { stream, text: () => chunks.join('') };
}

/** The access logger as the gateway makes it (layer.ts): a child of the service's logger, redaction off. */
const accessLogger = (root: Logger): Logger => root.child({ service: 'gateway' }).child({ component: 'access' }, { redact: [] });

const ISO_TIME = /"time":"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z"/;
const withoutTime = (line: string): string => line.replace(ISO_TIME, '"time":"T"');

const ODD = [
  'plain',
  'quote " and backslash \\ and slash /',
  'NUL \u0000, tab \t, newline \n, CR \r, escape \u001b, DEL \u007f',
  'unicode é ü 漢字 😀',
  'line separator \u2028 paragraph \u2029',
];

describe('accessFieldsJson', () => {
  it('writes the fields in a fixed order, the trace ids first when given', () => {
    const f: AccessFields = { req_id: 'abc-1', method: 'POST', route: '/v1/validate_jwt_token', status: 200, duration_ms: 1.234, client_ip: '127.0.0.1' };
    expect(accessFieldsJson(f)).toBe(',"req_id":"abc-1","method":"POST","route":"/v1/validate_jwt_token","status":200,"duration_ms":1.234,"client_ip":"127.0.0.1"');
    expect(accessFieldsJson({ trace_id: '0af7651916cd43dd8448eb211c80319c', span_id: 'b7ad6b7169203331', ...f, status: 499 }))
      .toBe(',"trace_id":"0af7651916cd43dd8448eb211c80319c","span_id":"b7ad6b7169203331","req_id":"abc-1","method":"POST","route":"/v1/validate_jwt_token","status":499,"duration_ms":1.234,"client_ip":"127.0.0.1"');
  });

  it.each(ODD)('escapes %j so that the line parses back to the same value', (odd) => {
    const json = accessFieldsJson({ req_id: odd, method: odd, route: `/v1/${odd}`, status: 200, duration_ms: 0, client_ip: odd });
    expect([...json].filter((c) => c.charCodeAt(0) < 0x20)).toEqual([]); // no raw control character
    expect(JSON.parse(`{${json.slice(1)}}`)).toEqual({ req_id: odd, method: odd, route: `/v1/${odd}`, status: 200, duration_ms: 0, client_ip: odd });
  });

  it('escapes a lone surrogate instead of writing invalid UTF-8', () => {
    const json = accessFieldsJson({ req_id: 'r', method: 'GET', route: '/a\ud800b', status: 200, duration_ms: 0, client_ip: '::1' });
    expect(json).toContain('"route":"/a\\ud800b"');
    expect((JSON.parse(`{${json.slice(1)}}`) as { route: string }).route).toBe('/a\ud800b');
  });

  it('writes a number that is not finite as null, as pino does', () => {
    expect(accessFieldsJson({ req_id: 'r', method: 'GET', route: '/', status: 200, duration_ms: Number.NaN, client_ip: '::1' })).toContain('"duration_ms":null');
  });
});

describe('preshapedInfoWriter', () => {
  it.each(ODD)('writes the bytes logger.info writes (fields with %j)', (odd) => {
    const out = capture();
    const logger = accessLogger(createLogger('info', out.stream));
    const fields: AccessFields = { trace_id: '0af7651916cd43dd8448eb211c80319c', span_id: 'b7ad6b7169203331', req_id: 'id', method: 'GET', route: `/v1/${odd}`, status: 404, duration_ms: 0.5, client_ip: odd };
    logger.info(fields, 'request');
    preshapedInfoWriter(logger)!(accessFieldsJson(fields), 'request');
    const [viaPino, preshaped, rest] = out.text().split(/(?<=\n)/);
    expect(rest).toBeUndefined();
    expect(preshaped).toMatch(ISO_TIME);
    expect(preshaped!.startsWith('{"level":"info","time":"')).toBe(true);
    expect(withoutTime(preshaped!)).toBe(withoutTime(viaPino!));
    expect(JSON.parse(preshaped!)).toMatchObject({ level: 'info', service: 'gateway', component: 'access', ...fields, msg: 'request' });
  });

  it('writes nothing when info is off, and is absent for a pretty or foreign logger', () => {
    const out = capture();
    const logger = accessLogger(createLogger('warn', out.stream));
    preshapedInfoWriter(logger)!(',"a":1', 'request');
    expect(out.text()).toBe('');
    expect(preshapedInfoWriter(createLogger('info', capture().stream, 'pretty'))).toBeUndefined();
    expect(preshapedInfoWriter({ isLevelEnabled: () => true })).toBeUndefined();
  });
});

describe('accessLog middleware', () => {
  let server: Server | undefined;
  afterEach(async () => { await new Promise((r) => (server ? server.close(r) : r(undefined))); server = undefined; });

  async function serve(logger: Pick<Logger, 'info' | 'isLevelEnabled'>): Promise<string> {
    const app = express();
    app.use(accessLog(logger));
    app.use(express.json());
    app.post('/v1/users/:id', (_req, res) => { res.status(201).json({ ok: true }); });
    server = app.listen(0, '127.0.0.1');
    await new Promise((r) => server!.once('listening', r));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }

  const SECRETS = ['Bearer eyJhbGciOiJIUzI1NiJ9.c2VjcmV0LXRva2Vu.sig', 'session=cookie-secret-value', 'hunter2-password', 'query-token-secret', 'path-id-secret', 'agent-secret'];

  it('logs the fixed fields and never a header, query, path id or body value', async () => {
    const out = capture();
    const base = await serve(accessLogger(createLogger('info', out.stream)));
    const res = await fetch(`${base}/v1/users/path-id-secret?token=query-token-secret`, {
      method: 'POST',
      headers: { authorization: SECRETS[0]!, cookie: SECRETS[1]!, 'content-type': 'application/json', 'user-agent': 'agent-secret "\\ odd', 'x-request-id': 'caller-id-42' },
      body: JSON.stringify({ password: 'hunter2-password' }),
    });
    expect(res.status).toBe(201);
    expect(res.headers.get('x-request-id')).toBe('caller-id-42');
    await new Promise((r) => setTimeout(r, 50)); // the line is written on 'close'
    const text = out.text();
    for (const secret of SECRETS) expect(text).not.toContain(secret);
    const line = JSON.parse(text) as Record<string, unknown>;
    expect(Object.keys(line)).toEqual(['level', 'time', 'service', 'component', 'req_id', 'method', 'route', 'status', 'duration_ms', 'client_ip', 'msg']);
    expect(line).toMatchObject({ level: 'info', req_id: 'caller-id-42', method: 'POST', route: '/v1/users/:id', status: 201, client_ip: '127.0.0.1', msg: 'request' });
    expect(typeof line.duration_ms).toBe('number');
  });

  it('replaces an implausible X-Request-Id with a UUID, and gives a test double the same fields', async () => {
    const got: Array<[unknown, unknown]> = [];
    const base = await serve({ isLevelEnabled: () => true, info: ((obj: unknown, msg: unknown) => { got.push([obj, msg]); }) as Logger['info'] });
    const res = await fetch(`${base}/v1/users/x`, { method: 'POST', headers: { 'x-request-id': 'has "quotes"' } });
    await new Promise((r) => setTimeout(r, 50));
    const id = res.headers.get('x-request-id')!;
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    expect(got).toEqual([[{ req_id: id, method: 'POST', route: '/v1/users/:id', status: 201, duration_ms: expect.any(Number), client_ip: '127.0.0.1' }, 'request']]);
  });
});
