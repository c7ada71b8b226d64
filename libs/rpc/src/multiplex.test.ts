/**
 * Calls multiplexed on streams (./multiplex.ts, issue 22 §2) against real grpc-js servers: who may open a
 * stream, the fallback to unary calls against a server without the method, deadlines, a server going
 * away, metrics per method, and calls spreading over replicas (also one that joins later).
 */
import http2 from 'node:http2';
import net from 'node:net';
import { afterEach, describe, expect, it } from '@jest/globals';
import * as grpc from '@grpc/grpc-js';
import { AppError } from '@gatehouse/errors';
import { createGrpcServerMetrics, createLogger, createMetricsRegistry } from '@gatehouse/observability';
import { createCallContext, type HandlerMap } from './context.ts';
import { createGrpcClient, grpcImplementation, rawServiceDefinition, startGrpcServer, type ServiceClient } from './grpc.ts';
import { MULTIPLEX_PATH } from './multiplex.ts';
import { serviceDescriptor } from './proto.ts';

const desc = serviceDescriptor('authn');
const logger = createLogger('silent');
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Login handlers that record the client IP each call saw (the forwarded one only when trusted) and tag their answers. */
function loginHandlers(tag: string, seen: string[] = []): HandlerMap {
  return {
    async Login(req, ctx) {
      seen.push(ctx.clientIp);
      if (req.password === 'slow') await sleep(400);
      if (req.password === 'wrong') throw new AppError('unauthenticated', 'invalid credentials');
      ctx.setCookies.push(`cookie_session=${tag}; Path=/; HttpOnly`);
      return { message: tag };
    },
  };
}

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function server(tag: string, seen: string[] = [], extra: Partial<Parameters<typeof startGrpcServer>[0]> = {}): Promise<number> {
  const s = await startGrpcServer({ host: '127.0.0.1', port: 0, services: [{ desc, handlers: loginHandlers(tag, seen) }], logger, internalToken: 'tok', ...extra });
  cleanups.push(() => s.close());
  return s.port;
}

function client(address: string, internalToken = 'tok'): ServiceClient {
  const c = createGrpcClient(desc, { address, internalToken });
  cleanups.push(() => c.close());
  return c;
}

/** Opens the multiplexing stream by hand and returns the status it ends with. */
function rawStreamStatus(port: number, token: string | undefined): Promise<grpc.StatusObject> {
  const raw = new grpc.Client(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
  const md = new grpc.Metadata();
  if (token !== undefined) md.set('x-gatehouse-internal', token);
  const stream = raw.makeBidiStreamRequest(MULTIPLEX_PATH, (b: Buffer) => b, (b: Buffer) => b, md);
  stream.on('error', () => {});
  return new Promise((resolve) => stream.on('status', (s: grpc.StatusObject) => { raw.close(); resolve(s); }));
}

describe('call multiplexing between Gatehouse processes', () => {
  it('opens a stream only for callers holding the internal token', async () => {
    const port = await server('a');
    expect((await rawStreamStatus(port, undefined)).code).toBe(grpc.status.PERMISSION_DENIED);
    expect((await rawStreamStatus(port, 'guess')).code).toBe(grpc.status.PERMISSION_DENIED);
  });

  it('answers many concurrent calls, each with its own answer, cookies and error', async () => {
    const seen: string[] = [];
    const c = client(`127.0.0.1:${await server('a', seen)}`);
    const results = await Promise.all(Array.from({ length: 200 }, (_, i) => {
      const ctx = createCallContext({ clientIp: `203.0.113.${i % 250}` });
      return c.call('Login', { password: i % 3 === 0 ? 'wrong' : 'pw' }, ctx).then(
        (res) => ({ ok: res.message, cookies: ctx.setCookies }),
        (err: AppError) => ({ code: err.code, message: err.message, cookies: ctx.setCookies }),
      );
    }));
    results.forEach((r, i) => {
      expect(r).toEqual(i % 3 === 0
        ? { code: 'unauthenticated', message: 'invalid credentials', cookies: [] }
        : { ok: 'a', cookies: ['cookie_session=a; Path=/; HttpOnly'] });
    });
    // the forwarded client IP was trusted: each call carried its own metadata
    expect(new Set(seen).size).toBe(200);
  });

  it('falls back to unary calls against a server that does not serve the stream (an older version)', async () => {
    const seen: string[] = [];
    const old = new grpc.Server();
    old.addService(rawServiceDefinition(desc), grpcImplementation({ desc, handlers: loginHandlers('old', seen) }, { logger, internalToken: 'tok' }));
    const port = await new Promise<number>((resolve, reject) => old.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (e, p) => (e ? reject(e) : resolve(p))));
    cleanups.push(() => { old.forceShutdown(); });
    const c = client(`127.0.0.1:${port}`);
    for (let i = 0; i < 3; i++) {
      const ctx = createCallContext({ clientIp: '198.51.100.7' });
      await expect(c.call('Login', { password: 'pw' }, ctx)).resolves.toMatchObject({ message: 'old' });
      expect(ctx.setCookies).toEqual(['cookie_session=old; Path=/; HttpOnly']);
    }
    expect(seen).toEqual(['198.51.100.7', '198.51.100.7', '198.51.100.7']);
  });

  it('answers deadline_exceeded when the deadline passes, and the stream keeps serving', async () => {
    const c = client(`127.0.0.1:${await server('a')}`);
    const err = await c.call('Login', { password: 'slow' }, createCallContext({ deadlineMs: Date.now() + 100 })).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'deadline_exceeded' });
    await expect(c.call('Login', { password: 'pw' }, createCallContext({ deadlineMs: Date.now() + 2000 }))).resolves.toMatchObject({ message: 'a' });
  });

  it.each([true, false])('fails the calls in flight as a unary call does when the server is killed (multiplex %s)', async (multiplex) => {
    const s = await startGrpcServer({ host: '127.0.0.1', port: 0, services: [{ desc, handlers: loginHandlers('a') }], logger, internalToken: 'tok' });
    const c = createGrpcClient(desc, { address: `127.0.0.1:${s.port}`, internalToken: 'tok', multiplex });
    cleanups.push(() => c.close());
    await c.call('Login', { password: 'pw' }, createCallContext());
    const inFlight = c.call('Login', { password: 'slow' }, createCallContext()).catch((e: unknown) => e);
    await sleep(50);
    s.server.forceShutdown();
    // grpc-js reports the server's reset of the call as CANCELLED, on a call and on a stream alike: the
    // service went away, which is `unavailable` (503) naming it, not the caller's `cancelled` (499);
    // Login is not idempotent, so it is not sent again (issue 37 §4)
    const unavailable = { code: 'unavailable', message: 'the authn service is unavailable, please try again later', headers: { 'Retry-After': '1' } };
    expect(await inFlight).toMatchObject(unavailable);
    expect(await c.call('Login', { password: 'pw' }, createCallContext()).catch((e: unknown) => e)).toMatchObject(unavailable);
  });

  it.each([true, false])('sends an idempotent read in flight on a killed replica once more, to the other replica (multiplex %s)', async (multiplex) => {
    const replicas = await Promise.all(['a', 'b'].map((tag) => startGrpcServer({
      host: '127.0.0.1', port: 0, logger, internalToken: 'tok',
      services: [{ desc, handlers: { async Profile() { await sleep(300); return { id: tag }; } } }],
    })));
    cleanups.push(async () => { for (const r of replicas) await r.close(); });
    expect(desc.methods.get('Profile')!.idempotent).toBe(true);
    const c = createGrpcClient(desc, { address: replicas.map((r) => `127.0.0.1:${r.port}`).join(','), internalToken: 'tok', multiplex });
    cleanups.push(() => c.close());
    // both replicas connected and answering
    const ids = new Set<unknown>();
    for (let i = 0; i < 20 && ids.size < 2; i++) ids.add((await c.call('Profile', {}, createCallContext())).id);
    expect([...ids].sort()).toEqual(['a', 'b']);
    // a batch in flight on both; replica a dies under it: every call is answered, those on a by b
    const batch = Array.from({ length: 8 }, () => c.call('Profile', {}, createCallContext()).then((r) => r.id, (e: unknown) => e));
    await sleep(100);
    replicas[0]!.server.forceShutdown();
    const answers = await Promise.all(batch);
    expect(answers.filter((a) => a !== 'a' && a !== 'b')).toEqual([]);
    expect(answers).toContain('b');
  });

  /**
   * A TCP relay in front of a server: what a process killed with SIGKILL looks like from the client, the
   * kernel closing its sockets with no HTTP/2 frame (no GOAWAY, no RST_STREAM), which `cut()` does.
   */
  async function relay(port: number): Promise<{ port: number; cut(): void }> {
    const sockets = new Set<net.Socket>();
    const front = net.createServer((inbound) => {
      const outbound = net.connect(port, '127.0.0.1');
      for (const s of [inbound, outbound]) { sockets.add(s); s.on('error', () => {}); s.on('close', () => sockets.delete(s)); }
      inbound.pipe(outbound).pipe(inbound);
    });
    await new Promise<void>((resolve) => front.listen(0, '127.0.0.1', resolve));
    cleanups.push(() => new Promise<void>((resolve) => { for (const s of sockets) s.destroy(); front.close(() => resolve()); }));
    return {
      port: (front.address() as net.AddressInfo).port,
      cut() { front.close(); for (const s of sockets) s.end(); },
    };
  }

  it.each([true, false])('a stopping replica killed before it answered (GOAWAY, then the connection ends with no gRPC status): reads answered by the other, a write in flight is 503, never 500 (multiplex %s)', async (multiplex) => {
    const replicas = await Promise.all(['a', 'b'].map((tag) => startGrpcServer({
      host: '127.0.0.1', port: 0, logger, internalToken: 'tok',
      services: [{ desc, handlers: { async Profile() { await sleep(300); return { id: tag }; }, async Login() { await sleep(300); return { message: tag }; } } }],
    })));
    cleanups.push(async () => { for (const r of replicas) await r.close(); });
    const front = await relay(replicas[0]!.port);
    const c = createGrpcClient(desc, { address: `127.0.0.1:${front.port},127.0.0.1:${replicas[1]!.port}`, internalToken: 'tok', multiplex });
    cleanups.push(() => c.close());
    const ids = new Set<unknown>();
    for (let i = 0; i < 20 && ids.size < 2; i++) ids.add((await c.call('Profile', {}, createCallContext())).id);
    expect([...ids].sort()).toEqual(['a', 'b']);
    const reads = Array.from({ length: 8 }, () => c.call('Profile', {}, createCallContext()).then((r) => r.id, (e: unknown) => e));
    const writes = Array.from({ length: 8 }, () => c.call('Login', {}, createCallContext()).then((r) => r.message, (e: unknown) => e));
    await sleep(100);
    // as a pod told to stop and killed before its calls were answered (the kubelet's SIGKILL after
    // the grace period): a GOAWAY first, then the connection ends
    replicas[0]!.server.tryShutdown(() => {});
    await sleep(50);
    front.cut();
    const readAnswers = await Promise.all(reads);
    expect(readAnswers.filter((a) => a !== 'a' && a !== 'b')).toEqual([]);
    expect(readAnswers).toContain('b');
    // Login is not idempotent: those that were on a are not sent again, and answer 503 naming the service
    const writeAnswers = await Promise.all(writes);
    const failed = writeAnswers.filter((a) => a !== 'b');
    expect(failed.length).toBeGreaterThan(0);
    for (const f of failed) expect(f).toMatchObject({ code: 'unavailable', message: 'the authn service is unavailable, please try again later' });
  });

  /**
   * A replica that answers every HTTP/2 stream with its response headers and then ends it with
   * RST_STREAM(NO_ERROR) and no gRPC status: grpc-js reports that as INTERNAL "Received RST_STREAM with
   * code 0 (Call ended without gRPC status)", what a gateway saw from an admin pod killed under load in
   * `npm run test:k8s` (issue 37 §4).
   */
  async function resettingReplica(): Promise<number> {
    const h2 = http2.createServer();
    h2.on('stream', (stream) => {
      stream.on('error', () => {});
      stream.respond({ ':status': 200, 'content-type': 'application/grpc' });
      stream.once('data', () => stream.close(http2.constants.NGHTTP2_NO_ERROR));
    });
    await new Promise<void>((resolve) => h2.listen(0, '127.0.0.1', resolve));
    cleanups.push(() => new Promise<void>((resolve) => h2.close(() => resolve())));
    return (h2.address() as net.AddressInfo).port;
  }

  it.each([true, false])('a call whose stream ends with no gRPC status is a lost connection: a read goes to the other replica, a write answers 503, not 500 (multiplex %s)', async (multiplex) => {
    const good = await startGrpcServer({
      host: '127.0.0.1', port: 0, logger, internalToken: 'tok',
      services: [{ desc, handlers: { async Profile() { return { id: 'b' }; }, async Login() { return { message: 'b' }; } } }],
    });
    cleanups.push(() => good.close());
    const bad = await resettingReplica();
    // alone, the resetting replica's answer is `unavailable` naming the service, for a read (after its
    // retries) and for a write (not sent again)
    const alone = createGrpcClient(desc, { address: `127.0.0.1:${bad}`, internalToken: 'tok', multiplex });
    cleanups.push(() => alone.close());
    const unavailable = { code: 'unavailable', message: 'the authn service is unavailable, please try again later' };
    expect(await alone.call('Login', {}, createCallContext()).catch((e: unknown) => e)).toMatchObject(unavailable);
    expect(await alone.call('Profile', {}, createCallContext()).catch((e: unknown) => e)).toMatchObject(unavailable);
    // beside a good replica, every read is answered (by it), one call at a time so round robin alternates
    const both = createGrpcClient(desc, { address: `127.0.0.1:${bad},127.0.0.1:${good.port}`, internalToken: 'tok', multiplex });
    cleanups.push(() => both.close());
    const reads: unknown[] = [];
    for (let i = 0; i < 20; i++) reads.push(await both.call('Profile', {}, createCallContext()).then((r) => r.id, (e: unknown) => e));
    expect(reads.filter((r) => r !== 'b')).toEqual([]);
  });

  it.each([true, false])('a stopping replica (close(), as on SIGTERM) answers every call it took, even one longer than 2 s, and reads go on without a failure (multiplex %s)', async (multiplex) => {
    const replicas = await Promise.all(['a', 'b'].map((tag) => startGrpcServer({
      host: '127.0.0.1', port: 0, logger, internalToken: 'tok',
      services: [{
        desc, handlers: {
          async Login(req) { if (req.password === 'slow') await sleep(2500); return { message: tag }; },
          async Profile() { await sleep(5); return { id: tag }; },
        },
      }],
    })));
    const closes: Array<Promise<void>> = [];
    cleanups.push(async () => { await Promise.all(closes); await replicas[1]!.close(); });
    const c = createGrpcClient(desc, { address: replicas.map((r) => `127.0.0.1:${r.port}`).join(','), internalToken: 'tok', multiplex });
    cleanups.push(() => c.close());
    const ids = new Set<unknown>();
    for (let i = 0; i < 20 && ids.size < 2; i++) ids.add((await c.call('Profile', {}, createCallContext())).id);
    expect([...ids].sort()).toEqual(['a', 'b']);
    // non-idempotent calls in flight on both replicas, longer than the old 2 s cut-off
    const slow = Array.from({ length: 4 }, () => c.call('Login', { password: 'slow' }, createCallContext()).then((r) => r.message, (e: unknown) => e));
    await sleep(100);
    closes.push(replicas[0]!.close());
    // reads while replica a stops
    const during: unknown[] = [];
    for (let i = 0; i < 60; i++) during.push(await c.call('Profile', {}, createCallContext()).then((r) => r.id, (e: unknown) => e));
    const answers = await Promise.all(slow);
    expect(answers.filter((a) => a !== 'a' && a !== 'b')).toEqual([]);
    expect(answers).toContain('a');
    expect(during.filter((a) => a !== 'a' && a !== 'b')).toEqual([]);
    await closes[0];
    expect(await c.call('Profile', {}, createCallContext()).then((r) => r.id)).toBe('b');
  });

  it('counts and times the multiplexed calls by method in the server metrics', async () => {
    const registry = createMetricsRegistry({ defaultMetrics: false });
    const c = client(`127.0.0.1:${await server('a', [], { observe: createGrpcServerMetrics(registry) })}`);
    await c.call('Login', { password: 'pw' }, createCallContext());
    await c.call('Login', { password: 'pw' }, createCallContext());
    await c.call('Login', { password: 'wrong' }, createCallContext()).catch(() => undefined);
    const text = await registry.metrics();
    const login = 'method="/gatehouse.authn.v1.AuthnService/Login"';
    expect(text).toContain(`gatehouse_grpc_server_handled_total{${login},code="OK"} 2`);
    expect(text).toContain(`gatehouse_grpc_server_handled_total{${login},code="UNAUTHENTICATED"} 1`);
  });

  it('spreads calls over the replicas, including one that starts after the client', async () => {
    const a = await server('a');
    // a port that is free now, where replica b starts later
    const probe = await startGrpcServer({ host: '127.0.0.1', port: 0, services: [], logger });
    const portB = probe.port;
    await probe.close();
    const c = client(`127.0.0.1:${a},127.0.0.1:${portB}`);
    const answered = async (ms: number): Promise<Record<string, number>> => {
      const counts: Record<string, number> = {};
      const until = Date.now() + ms;
      while (Date.now() < until) {
        const res = await c.call('Login', { password: 'pw' }, createCallContext()).catch(() => ({ message: 'failed' }));
        counts[String(res.message)] = (counts[String(res.message)] ?? 0) + 1;
      }
      return counts;
    };
    expect(Object.keys(await answered(300))).toEqual(['a']);
    await server('b', [], { port: portB });
    // streams are renewed every 2 s and the balancer puts new ones on its next ready replica
    const later = await answered(5000);
    expect(later.b ?? 0).toBeGreaterThan(0);
    expect(later.failed).toBeUndefined();
  }, 20_000);
});
