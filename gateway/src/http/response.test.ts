import { describe, it, expect, afterEach } from '@jest/globals';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { addResponseHeaders, createGatewayServer, endAtTurnEnd, GatewayResponse } from './response.ts';
import { securityHeaders } from './security-headers.ts';
import { send } from './test-server.ts';

const SECURITY = ['X-Frame-Options', 'DENY', 'Content-Security-Policy', "default-src 'self'"];

let server: http.Server | null = null;
afterEach(async () => {
  const s = server;
  server = null;
  if (s) await new Promise<void>((done) => { s.close(() => done()); s.closeAllConnections(); });
});

/** Serves `listener` on 127.0.0.1 through `make` (createGatewayServer or plain node:http); resolves with its base URL. */
async function serve(listener: http.RequestListener, make: (l: http.RequestListener) => http.Server = createGatewayServer): Promise<string> {
  server = make(listener);
  const s = server;
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', () => resolve()));
  return `http://127.0.0.1:${(s.address() as AddressInfo).port}`;
}

/** The response's header lines as sent, `name: value` with the name lower-cased (repeats kept). */
function lines(raw: string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < raw.length; i += 2) out.push(`${raw[i]!.toLowerCase()}: ${raw[i + 1]}`);
  return out;
}

/** Sends GET / and returns the status, the header lines as sent and the body. */
function get(base: string): Promise<{ status: number; reason: string; headers: string[]; body: string }> {
  return new Promise((resolve, reject) => {
    http.get(`${base}/`, { agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => { body += c; });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, reason: res.statusMessage ?? '', headers: lines(res.rawHeaders), body }));
    }).on('error', reject);
  });
}

describe('GatewayResponse: deferred headers are written with the status line', () => {
  it('the server made by createGatewayServer answers with GatewayResponse objects', async () => {
    let seen: unknown;
    const base = await serve((_req, res) => {
      seen = res;
      res.end();
    });
    await get(base);
    expect(seen).toBeInstanceOf(GatewayResponse);
  });

  it('writes deferred headers together with the headers given to writeHead, each once', async () => {
    const base = await serve((_req, res) => {
      addResponseHeaders(res, SECURITY);
      addResponseHeaders(res, ['Access-Control-Allow-Origin', '*']);
      res.writeHead(201, ['Content-Type', 'application/json; charset=utf-8', 'Content-Length', '2']);
      res.end('{}');
    });
    const r = await get(base);
    expect(r.status).toBe(201);
    expect(r.body).toBe('{}');
    for (const h of ['x-frame-options: DENY', "content-security-policy: default-src 'self'", 'access-control-allow-origin: *', 'content-type: application/json; charset=utf-8', 'content-length: 2']) {
      expect(r.headers.filter((l) => l === h)).toEqual([h]);
    }
  });

  it('a header of the same name given to writeHead or set with setHeader replaces the deferred one', async () => {
    const base = await serve((_req, res) => {
      addResponseHeaders(res, SECURITY);
      res.setHeader('x-frame-options', 'SAMEORIGIN');
      res.writeHead(200, ['Content-Security-Policy', 'none', 'Content-Length', '0']);
      res.end();
    });
    const r = await get(base);
    expect(r.headers.filter((l) => l.startsWith('x-frame-options'))).toEqual(['x-frame-options: SAMEORIGIN']);
    expect(r.headers.filter((l) => l.startsWith('content-security-policy'))).toEqual(['content-security-policy: none']);
  });

  it('a deferred header replaces one set before it, as a setHeader call at that point would', async () => {
    const base = await serve((_req, res) => {
      res.setHeader('X-Frame-Options', 'SAMEORIGIN');
      addResponseHeaders(res, SECURITY);
      res.end();
    });
    const r = await get(base);
    expect(r.headers.filter((l) => l.startsWith('x-frame-options'))).toEqual(['x-frame-options: DENY']);
  });

  it('keeps deferred headers on a response written with setHeader and end (an error answer), and the reason phrase', async () => {
    const base = await serve((_req, res) => {
      addResponseHeaders(res, SECURITY);
      res.setHeader('Content-Type', 'application/json; charset=utf-8');
      res.statusCode = 403;
      res.statusMessage = 'Nope';
      res.end('{"code":"permission_denied"}');
    });
    const r = await get(base);
    expect(r.status).toBe(403);
    expect(r.reason).toBe('Nope');
    expect(r.headers).toEqual(expect.arrayContaining(['x-frame-options: DENY', "content-security-policy: default-src 'self'", 'content-type: application/json; charset=utf-8']));
    expect(r.body).toBe('{"code":"permission_denied"}');
  });

  it('accepts writeHead with a reason phrase, with a header object, and with [name, value] pairs', async () => {
    const forms: Array<[string, (res: http.ServerResponse) => void]> = [
      ['Accepted Later', (res) => res.writeHead(202, 'Accepted Later', ['Content-Length', '0'])],
      ['Accepted', (res) => res.writeHead(202, { 'content-length': '0' })],
      ['Accepted', (res) => res.writeHead(202, [['Content-Length', '0']] as unknown as string[])],
      ['Accepted', (res) => res.writeHead(202)],
    ];
    for (const [reason, form] of forms) {
      const base = await serve((_req, res) => {
        addResponseHeaders(res, SECURITY);
        form(res);
        res.end();
      });
      const r = await get(base);
      expect([r.status, r.reason]).toEqual([202, reason]);
      expect(r.headers).toEqual(expect.arrayContaining(['x-frame-options: DENY', "content-security-policy: default-src 'self'"]));
      await new Promise<void>((done) => { server!.close(() => done()); server!.closeAllConnections(); });
      server = null;
    }
  });

  it('refuses an invalid deferred header value when the headers are written, as setHeader would', async () => {
    let thrown: unknown;
    const base = await serve((_req, res) => {
      addResponseHeaders(res, ['X-Bad', 'a\r\nInjected: 1']);
      try {
        res.writeHead(200, ['Content-Length', '0']);
      } catch (err) {
        thrown = err;
      }
      if (!res.headersSent) {
        res.statusCode = 500;
        res.end();
      }
    });
    const r = await get(base);
    expect((thrown as { code?: string }).code).toBe('ERR_INVALID_CHAR');
    expect(r.headers.some((l) => l.startsWith('injected'))).toBe(false);
  });

  it('on a plain node:http response and under Express (which replaces the prototype) it falls back to setHeader', async () => {
    let base = await serve((_req, res) => {
      addResponseHeaders(res, SECURITY);
      res.end('plain');
    }, (l) => http.createServer(l));
    expect((await get(base)).headers).toEqual(expect.arrayContaining(['x-frame-options: DENY']));
    await new Promise<void>((done) => { server!.close(() => done()); server!.closeAllConnections(); });

    const app = express();
    app.use(securityHeaders({ enableHsts: true }));
    app.get('/', (_req, res) => { res.json({ ok: true }); });
    base = await serve(app);
    const r = await send(base, 'GET', '/');
    expect(r.json).toEqual({ ok: true });
    expect(r.headers['x-frame-options']).toBe('DENY');
    expect(r.headers['strict-transport-security']).toBe('max-age=31536000; includeSubDomains');
  });
});

describe('endAtTurnEnd: the answers of one event-loop turn go out together', () => {
  const json = (body: string): string[] => ['Content-Type', 'application/json; charset=utf-8', 'Content-Length', String(Buffer.byteLength(body))];

  it('sends the answer after the turn\'s callbacks, with the deferred headers', async () => {
    const order: string[] = [];
    const base = await serve((_req, res) => {
      addResponseHeaders(res, SECURITY);
      endAtTurnEnd(res, 200, json('{"a":"é"}'), '{"a":"é"}');
      order.push(`queued, headersSent=${res.headersSent}`);
      res.once('finish', () => order.push('finished'));
    });
    const got = await get(base);
    expect(order).toEqual(['queued, headersSent=false', 'finished']);
    expect(got.status).toBe(200);
    expect(got.body).toBe('{"a":"é"}');
    expect(got.headers).toEqual(expect.arrayContaining(['x-frame-options: DENY', 'content-length: 10', 'content-type: application/json; charset=utf-8']));
  });

  it('skips a response answered meanwhile, and one whose client went away; a bad answer fails alone', async () => {
    const base = await serve((req, res) => {
      if (req.url === '/?answered') {
        endAtTurnEnd(res, 200, json('{}'), '{}');
        res.writeHead(504, ['Content-Length', '7']).end('timeout'); // as the deadline answers
      } else if (req.url === '/?gone') {
        endAtTurnEnd(res, 200, json('{}'), '{}');
        res.destroy();
      } else if (req.url === '/?bad') {
        endAtTurnEnd(res, 200, ['X-Bad', 'a\nb'], '{}');
      } else {
        endAtTurnEnd(res, 200, json('{"ok":true}'), '{"ok":true}');
      }
    });
    const at = (q: string) => new Promise<{ status: number; body: string } | Error>((resolve) => {
      http.get(`${base}/?${q}`, { agent: false }, (res) => {
        let body = '';
        res.on('data', (c: Buffer) => { body += c.toString(); });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      }).on('error', (err) => resolve(err));
    });
    const [answered, gone, bad, fine] = await Promise.all([at('answered'), at('gone'), at('bad'), at('fine')]);
    expect(answered).toEqual({ status: 504, body: 'timeout' });
    // no answer: the connection was reset (an Error from node:http's realm, so matched by its code)
    expect(gone).toMatchObject({ code: 'ECONNRESET' });
    expect(bad).toMatchObject({ code: 'ECONNRESET' }); // destroyed: an invalid header value
    expect(fine).toEqual({ status: 200, body: '{"ok":true}' });
  });
});
