import { describe, it, expect, beforeAll, afterAll } from '@jest/globals';
import express from 'express';
import { jsonBody, MAX_BODY_BYTES, MAX_DRAIN_BYTES, parseJsonBody } from './body.ts';
import { listen, send, type RunningApp } from './test-server.ts';

const INVALID = { code: 'invalid_argument', message: 'invalid JSON body' };
const TOO_LARGE = { code: 'invalid_argument', message: 'request body too large' };

describe('parseJsonBody', () => {
  it('maps empty and whitespace bodies to {} and strips a BOM', () => {
    expect(parseJsonBody('', true)).toEqual({});
    expect(parseJsonBody(' \n', true)).toEqual({});
    expect(parseJsonBody('\t\r\n\u00a0\u2028 ', true)).toEqual({});
    expect(parseJsonBody(' \n {"a":1}\n ', true)).toEqual({ a: 1 });
    expect(parseJsonBody('\ufeff{"a":1}', true)).toEqual({ a: 1 });
  });
  it('refuses non-objects only when objectOnly', () => {
    for (const text of ['[]', '"s"', '1', 'true', 'null']) {
      expect(() => parseJsonBody(text, true)).toThrow('invalid JSON body');
    }
    expect(parseJsonBody('[1]', false)).toEqual([1]);
  });
});

describe('JSON body middleware (behaviour.md §0.1)', () => {
  let srv: RunningApp;
  beforeAll(async () => {
    const app = express();
    app.use(jsonBody());
    app.use((req, res) => {
      res.json({ body: req.body ?? 'untouched' });
    });
    srv = await listen(app);
  });
  afterAll(() => srv.close());

  it('parses JSON whatever the Content-Type says', async () => {
    for (const ct of ['text/plain', 'application/x-www-form-urlencoded', 'application/json; charset=utf-8']) {
      const res = await send(srv.base, 'POST', '/v1/login', { headers: { 'content-type': ct }, body: '{"email":"a@b.c"}' });
      expect(res.status).toBe(200);
      expect(res.json).toEqual({ body: { email: 'a@b.c' } });
    }
    const none = await send(srv.base, 'POST', '/v1/login', { body: '{"x":[1]}' });
    expect(none.json).toEqual({ body: { x: [1] } });
  });

  it('joins a body that arrives in several pieces, a multi-byte character split between two', async () => {
    const { request } = await import('node:http');
    const body = Buffer.from('{"name":"Zoë","n":[1,2,3]}');
    const split = body.indexOf(0xc3) + 1; // inside the two bytes of ë
    const result = await new Promise<string>((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port: srv.port, method: 'POST', path: '/v1/login', agent: false, headers: { 'content-length': String(body.length) } }, (res) => {
        let text = '';
        res.on('data', (c: Buffer) => { text += String(c); });
        res.on('end', () => resolve(text));
      });
      req.on('error', reject);
      req.write(body.subarray(0, split));
      setTimeout(() => req.end(body.subarray(split)), 50);
    });
    expect(JSON.parse(result)).toEqual({ body: { name: 'Zoë', n: [1, 2, 3] } });
  });

  it('treats an empty body as {}', async () => {
    const res = await send(srv.base, 'POST', '/v1/logout', { headers: { 'content-length': '0' } });
    expect(res.json).toEqual({ body: {} });
    expect((await send(srv.base, 'GET', '/v1/meta')).json).toEqual({ body: {} });
  });

  it('refuses malformed JSON with 400 invalid JSON body', async () => {
    const res = await send(srv.base, 'POST', '/v1/login', { body: '{"email":' });
    expect(res.status).toBe(400);
    expect(res.json).toEqual(INVALID);
  });

  it('refuses arrays, strings and numbers on /v1', async () => {
    for (const body of ['[{"a":1}]', '"str"', '42', 'null']) {
      const res = await send(srv.base, 'POST', '/v1/login', { body });
      expect(res.status).toBe(400);
      expect(res.json).toEqual(INVALID);
    }
  });

  it('refuses bodies over 1 MiB with 400 request body too large (declared length)', async () => {
    const body = `{"a":"${'x'.repeat(MAX_BODY_BYTES)}"}`;
    const res = await send(srv.base, 'POST', '/v1/signup', { body });
    expect(res.status).toBe(400);
    expect(res.json).toEqual(TOO_LARGE);
  });

  it('reads a refused body of declared length to its end and keeps the connection for the next request', async () => {
    const { Agent, request } = await import('node:http');
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const post = (body: string): Promise<{ status: number; json: unknown; connection: string | undefined; reused: boolean }> =>
      new Promise((resolve, reject) => {
        const req = request({ host: '127.0.0.1', port: srv.port, method: 'POST', path: '/v1/login', agent, headers: { 'content-length': String(Buffer.byteLength(body)) } }, (res) => {
          let text = '';
          res.on('data', (c: Buffer) => { text += String(c); });
          res.on('end', () => resolve({ status: res.statusCode ?? 0, json: JSON.parse(text), connection: res.headers.connection, reused: req.reusedSocket }));
        });
        req.on('error', reject);
        req.end(body);
      });
    try {
      const refused = await post(`{"a":"${'x'.repeat(MAX_BODY_BYTES)}"}`);
      expect([refused.status, refused.json, refused.connection]).toEqual([400, TOO_LARGE, 'keep-alive']);
      const next = await post('{"a":1}');
      expect([next.status, next.json, next.reused]).toEqual([200, { body: { a: 1 } }, true]);
    } finally {
      agent.destroy();
    }
  });

  it('closes the connection when the declared length is past what it drains', async () => {
    const { request } = await import('node:http');
    const res = await new Promise<{ status: number; connection: string | undefined; json: unknown }>((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port: srv.port, method: 'POST', path: '/v1/login', agent: false, headers: { 'content-length': String(MAX_DRAIN_BYTES + 1) } }, (r) => {
        let text = '';
        r.on('data', (c: Buffer) => { text += String(c); });
        r.on('end', () => {
          resolve({ status: r.statusCode ?? 0, connection: r.headers.connection, json: JSON.parse(text) });
          req.destroy();
        });
      });
      req.on('error', (err) => { if (!req.destroyed) reject(err); });
      req.write('{"a":"'); // the rest never comes: the refusal is decided on the declared length
    });
    expect([res.status, res.json, res.connection]).toEqual([400, TOO_LARGE, 'close']);
  });

  it('refuses chunked bodies that grow past 1 MiB', async () => {
    const body = `{"a":"${'x'.repeat(MAX_BODY_BYTES)}"}`;
    const res = await send(srv.base, 'POST', '/v1/signup', { body, headers: { 'transfer-encoding': 'chunked' } });
    expect(res.status).toBe(400);
    expect(res.json).toEqual(TOO_LARGE);
  });

  it('accepts a body of exactly 1 MiB', async () => {
    const pad = MAX_BODY_BYTES - '{"a":""}'.length;
    const res = await send(srv.base, 'POST', '/v1/signup', { body: `{"a":"${'x'.repeat(pad)}"}` });
    expect(res.status).toBe(200);
  });

  it('answers GraphQL-shaped errors on /graphql and leaves non-object bodies to the GraphQL server', async () => {
    const bad = await send(srv.base, 'POST', '/graphql', { body: '{query' });
    expect(bad.status).toBe(400);
    expect(bad.json).toEqual({ errors: [{ message: 'invalid JSON body', extensions: { code: 'INVALID_ARGUMENT' } }] });
    const batch = await send(srv.base, 'POST', '/graphql', { body: '[{"query":"{meta{version}}"}]' });
    expect(batch.json).toEqual({ body: [{ query: '{meta{version}}' }] });
  });

  it('leaves other paths alone', async () => {
    const res = await send(srv.base, 'POST', '/oauth/token', { body: 'grant_type=x' });
    expect(res.json).toEqual({ body: 'untouched' });
  });
});

describe('JSON body middleware with the deadline', () => {
  it('does not call the handler after the deadline answered a slow upload', async () => {
    const { deadline } = await import('./deadline.ts');
    let handled = false;
    const app = express();
    app.use(deadline({ ms: 100 }), jsonBody());
    app.use((_req, res) => {
      handled = true;
      res.json({});
    });
    const srv = await listen(app);
    try {
      const { request } = await import('node:http');
      const result = await new Promise<{ status: number; body: string }>((resolve, reject) => {
        const req = request({ host: '127.0.0.1', port: srv.port, method: 'POST', path: '/v1/login', agent: false, headers: { 'content-length': '20', connection: 'keep-alive' } }, (res) => {
          let body = '';
          res.on('data', (c: Buffer) => { body += String(c); });
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
        });
        req.on('error', reject);
        req.write('{"a":'); // the rest arrives after the deadline
        setTimeout(() => req.end('1}              '), 250);
      });
      expect(result.status).toBe(504);
      expect(JSON.parse(result.body)).toEqual({ code: 'deadline_exceeded', message: 'deadline exceeded' });
      await new Promise((r) => setTimeout(r, 300)); // past the moment the body completes
      expect(handled).toBe(false);
    } finally {
      await srv.close();
    }
  });
});
