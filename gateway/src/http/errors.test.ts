import { describe, it, expect, beforeAll, afterAll } from '@jest/globals';
import { Writable } from 'node:stream';
import express from 'express';
import { AppError } from '@gatehouse/errors';
import { createLogger } from '@gatehouse/observability';
import { deadline, requestDeadline } from './deadline.ts';
import { createErrorHandler } from './errors.ts';
import { v1NotFound } from './not-found.ts';
import { listen, send, type RunningApp } from './test-server.ts';

describe('error rendering, 404/405 and the deadline', () => {
  let srv: RunningApp;
  const logLines: any[] = [];
  const aborted: Array<{ read: string; aborted: boolean; code: string | undefined }> = [];
  beforeAll(async () => {
    const sink = new Writable({ write(chunk, _enc, cb) { logLines.push(JSON.parse(String(chunk))); cb(); } });
    const app = express();
    app.use(deadline({ ms: 150 }));
    app.get('/v1/meta', (_req, res) => {
      res.json({ version: 'x' });
    });
    app.post('/v1/login', () => {
      throw new AppError('resource_exhausted', 'too many failed attempts, please try again later', { headers: { 'Retry-After': '60' } });
    });
    app.post('/v1/signup', () => {
      throw new Error('db exploded: password=hunter2');
    });
    app.post('/graphql', (req) => {
      if (req.headers['x-slow'] !== undefined) return new Promise(() => { /* never answers */ });
      throw new AppError('unauthenticated', 'unauthorized');
    });
    app.post('/v1/session', () => new Promise(() => { /* never answers */ }));
    // records why the request's signal aborted: read early, or only after the abort
    app.post('/v1/logout', (req, res) => {
      const early = req.headers['x-read'] === 'early' ? requestDeadline(req)!.signal : null;
      res.on('close', () => {
        setTimeout(() => {
          const signal = early ?? requestDeadline(req)!.signal;
          aborted.push({ read: String(req.headers['x-read']), aborted: signal.aborted, code: (signal.reason as AppError | undefined)?.code });
        }, 5);
      });
    });
    app.use(v1NotFound());
    app.use(createErrorHandler(createLogger('debug', sink)));
    srv = await listen(app);
  });
  afterAll(() => srv.close());

  it('renders an AppError as {code, message} with its status and headers', async () => {
    const res = await send(srv.base, 'POST', '/v1/login');
    expect(res.status).toBe(429);
    expect(res.headers['retry-after']).toBe('60');
    expect(res.json).toEqual({ code: 'resource_exhausted', message: 'too many failed attempts, please try again later' });
  });

  it('turns anything else into 500 internal "internal error" and logs it once', async () => {
    const before = logLines.length;
    const res = await send(srv.base, 'POST', '/v1/signup');
    expect(res.status).toBe(500);
    expect(res.json).toEqual({ code: 'internal', message: 'internal error' });
    expect(res.text).not.toContain('exploded');
    const logged = logLines.slice(before).filter((l) => l.level === 'error');
    expect(logged).toHaveLength(1);
  });

  it('renders /graphql errors GraphQL-shaped with the REST status', async () => {
    const res = await send(srv.base, 'POST', '/graphql');
    expect(res.status).toBe(401);
    expect(res.json).toEqual({ errors: [{ message: 'unauthorized', extensions: { code: 'UNAUTHENTICATED' } }] });
  });

  it('answers an unknown /v1 path with 404 Not Found', async () => {
    const res = await send(srv.base, 'POST', '/v1/nope');
    expect(res.status).toBe(404);
    expect(res.json).toEqual({ code: 'not_found', message: 'Not Found' });
  });

  it('answers a wrong method on a known path with 405 and Allow', async () => {
    const res = await send(srv.base, 'GET', '/v1/signup');
    expect(res.status).toBe(405);
    expect(res.json).toEqual({ code: 'method_not_allowed', message: 'Method Not Allowed' });
    expect(res.headers.allow).toBe('POST, OPTIONS');
    const model = await send(srv.base, 'DELETE', '/v1/admin/fga/model');
    expect(model.status).toBe(405);
    expect(model.headers.allow).toBe('GET, POST, HEAD, OPTIONS');
  });

  it('answers 504 deadline_exceeded when the handler overruns the deadline', async () => {
    const res = await send(srv.base, 'POST', '/v1/session');
    expect(res.status).toBe(504);
    expect(res.json).toEqual({ code: 'deadline_exceeded', message: 'deadline exceeded' });
  });

  it('answers the deadline GraphQL-shaped on /graphql', async () => {
    const res = await send(srv.base, 'POST', '/graphql', { headers: { 'x-slow': '1' } });
    expect(res.status).toBe(504);
    expect(res.json).toEqual({ errors: [{ message: 'deadline exceeded', extensions: { code: 'DEADLINE_EXCEEDED' } }] });
  });

  it('aborts the request signal with deadline_exceeded, whether it was read before or after', async () => {
    for (const read of ['early', 'late']) {
      const res = await send(srv.base, 'POST', '/v1/logout', { headers: { 'x-read': read } });
      expect(res.status).toBe(504);
    }
    await new Promise((r) => setTimeout(r, 50));
    expect(aborted).toEqual([
      { read: 'early', aborted: true, code: 'deadline_exceeded' },
      { read: 'late', aborted: true, code: 'deadline_exceeded' },
    ]);
  });

  it('leaves a fast response alone', async () => {
    const res = await send(srv.base, 'GET', '/v1/meta');
    expect(res.status).toBe(200);
    await new Promise((r) => setTimeout(r, 200)); // the timer must not fire later
    expect(res.json).toEqual({ version: 'x' });
  });
});
