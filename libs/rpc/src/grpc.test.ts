import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { AppError } from '@gatehouse/errors';
import { createGrpcServerMetrics, createLogger, createMetricsRegistry } from '@gatehouse/observability';
import { createCallContext } from './context.ts';
import { createGrpcClient, createInProcessClient, startGrpcServer, type ServiceClient } from './grpc.ts';
import { serviceDescriptor } from './proto.ts';
import type { HandlerMap } from './context.ts';

const desc = serviceDescriptor('authn');
const seen: Array<{ req: unknown; ip: string; auth: string | undefined; protocol: string }> = [];
const handlers: HandlerMap = {
  async Login(req, ctx) {
    seen.push({ req, ip: ctx.clientIp, auth: ctx.headers.authorization, protocol: ctx.protocol });
    if (req.password === 'wrong') throw new AppError('unauthenticated', 'invalid credentials');
    if (req.password === 'slow') throw new AppError('resource_exhausted', 'too many failed attempts, please try again later', { headers: { 'Retry-After': '60' } });
    if (req.password === 'bug') throw new TypeError('secret internals');
    ctx.setCookies.push('cookie_session=abc; Path=/; HttpOnly', 'cookie_session_domain=abc; Path=/; HttpOnly');
    return { message: 'Logged in successfully', user: { id: 'u1', roles: ['user'], app_data: { plan: 'pro', n: [1, 2] } }, expires_in: 1800 };
  },
};

let server: Awaited<ReturnType<typeof startGrpcServer>>;
const inProcess = createInProcessClient(desc, handlers);

beforeAll(async () => {
  server = await startGrpcServer({ host: '127.0.0.1', port: 0, services: [{ desc, handlers }], logger: createLogger('silent'), internalToken: 'tok' });
});
afterAll(async () => { await server.close(); });

// The gateway's calls travel multiplexed on streams (./multiplex.ts, the default with the internal
// token); one unary call per call is the other path (and the fallback): both must answer alike.
describe.each([['multiplexed', true], ['unary', false]] as const)('in-process and gRPC (%s) transports answer identically', (_name, multiplex) => {
  let grpcClient: ServiceClient;
  beforeAll(() => { grpcClient = createGrpcClient(desc, { address: `127.0.0.1:${server.port}`, internalToken: 'tok', multiplex }); });
  afterAll(() => grpcClient.close());

  it('returns the same full-shaped response and cookies over both transports', async () => {
    const ctxA = createCallContext({ headers: { authorization: 'Bearer x' }, clientIp: '203.0.113.9', protocol: 'rest' });
    const ctxB = createCallContext({ headers: { authorization: 'Bearer x' }, clientIp: '203.0.113.9', protocol: 'rest' });
    const a = await inProcess.call('Login', { email: 'a@example.com', password: 'pw', extra: 'ignored' }, ctxA);
    const b = await grpcClient.call('Login', { email: 'a@example.com', password: 'pw', extra: 'ignored' }, ctxB);
    expect(b).toEqual(a);
    expect(a.access_token).toBeNull();
    expect(a.authenticator_recovery_codes).toBeNull();
    expect((a.user as Record<string, unknown>).app_data).toEqual({ plan: 'pro', n: [1, 2] });
    expect(ctxB.setCookies).toEqual(ctxA.setCookies);
    expect(ctxB.setCookies).toHaveLength(2);
    // the service saw the forwarded credentials and the client IP the gateway resolved
    expect(seen.at(-1)).toMatchObject({ ip: '203.0.113.9', auth: 'Bearer x', protocol: 'rest' });
    expect(seen.at(-1)!.req).toEqual(seen.at(-2)!.req);
  });

  it.each([
    ['wrong', 'unauthenticated', 'invalid credentials'],
    ['slow', 'resource_exhausted', 'too many failed attempts, please try again later'],
    ['bug', 'internal', 'internal error'],
  ])('password %s: error code and message survive the gRPC hop', async (password, code, message) => {
    const viaGrpc = await grpcClient.call('Login', { password }, createCallContext()).catch((e: unknown) => e);
    expect(viaGrpc).toBeInstanceOf(AppError);
    expect((viaGrpc as AppError).code).toBe(code);
    expect((viaGrpc as AppError).message).toBe(message);
    if (code === 'resource_exhausted') expect((viaGrpc as AppError).headers).toEqual({ 'Retry-After': '60' });
  });

  it('refuses a wrongly typed field before the handler runs, on both transports', async () => {
    const before = seen.length;
    for (const client of [inProcess, grpcClient]) {
      const err = await client.call('Login', { email: 42 }, createCallContext()).catch((e: unknown) => e);
      expect(err).toMatchObject({ code: 'invalid_argument', message: 'invalid value for field "email": expected string' });
    }
    expect(seen.length).toBe(before);
  });

  it('an RPC without a handler is unimplemented', async () => {
    const err = await grpcClient.call('Signup', {}, createCallContext()).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'unimplemented' });
  });

  it('an untrusted caller cannot forge the client IP', async () => {
    const untrusted = createGrpcClient(desc, { address: `127.0.0.1:${server.port}` });
    await untrusted.call('Login', { password: 'pw' }, createCallContext({ clientIp: '198.51.100.1' }));
    untrusted.close();
    expect(seen.at(-1)!.ip).toBe('127.0.0.1');
    expect(seen.at(-1)!.protocol).toBe('grpc');
  });
});

describe.each([['multiplexed', true], ['unary', false]] as const)('internal (service-to-service) APIs over %s calls', (_name, multiplex) => {
  it('answer only callers holding the internal token', async () => {
    const internalDesc = serviceDescriptor('authn.internal');
    const calls: string[] = [];
    const internal = await startGrpcServer({
      host: '127.0.0.1', port: 0, logger: createLogger('silent'), internalToken: 'tok',
      services: [{ desc: internalDesc, internal: true, handlers: { async GetUser(req) { calls.push(String(req.user_id)); return { id: String(req.user_id) }; } } }],
    });
    const address = `127.0.0.1:${internal.port}`;
    const service = createGrpcClient(internalDesc, { address, internalToken: 'tok', multiplex });
    const stranger = createGrpcClient(internalDesc, { address });
    const forger = createGrpcClient(internalDesc, { address, internalToken: 'guess', multiplex });
    try {
      await expect(service.call('GetUser', { user_id: 'u1' }, createCallContext())).resolves.toMatchObject({ id: 'u1' });
      for (const client of [stranger, forger]) {
        await expect(client.call('GetUser', { user_id: 'u2' }, createCallContext())).rejects.toMatchObject({ code: 'permission_denied' });
      }
      expect(calls).toEqual(['u1']);
    } finally {
      for (const c of [service, stranger, forger]) c.close();
      await internal.close();
    }
  });
});

describe('gRPC server metrics (issue 15: observability past the HTTP port)', () => {
  it('counts and times every answered call by full method and status code name', async () => {
    const registry = createMetricsRegistry({ defaultMetrics: false });
    const observed = await startGrpcServer({
      host: '127.0.0.1', port: 0, services: [{ desc, handlers }], logger: createLogger('silent'), observe: createGrpcServerMetrics(registry),
    });
    const client = createGrpcClient(desc, { address: `127.0.0.1:${observed.port}` });
    try {
      await client.call('Login', { email: 'a@example.com', password: 'pw' }, createCallContext());
      await client.call('Login', { email: 'a@example.com', password: 'pw' }, createCallContext());
      await client.call('Login', { password: 'wrong' }, createCallContext()).catch(() => undefined);
      await client.call('Signup', {}, createCallContext()).catch(() => undefined); // no handler: UNIMPLEMENTED
      const text = await registry.metrics();
      const login = 'method="/gatehouse.authn.v1.AuthnService/Login"';
      expect(text).toContain(`gatehouse_grpc_server_handled_total{${login},code="OK"} 2`);
      expect(text).toContain(`gatehouse_grpc_server_handled_total{${login},code="UNAUTHENTICATED"} 1`);
      expect(text).toContain('gatehouse_grpc_server_handled_total{method="/gatehouse.authn.v1.AuthnService/Signup",code="UNIMPLEMENTED"} 1');
      expect(text).toContain(`gatehouse_grpc_server_duration_seconds_count{${login},code="OK"} 2`);
      expect(text).toMatch(/# TYPE gatehouse_grpc_server_duration_seconds histogram/);
    } finally {
      client.close();
      await observed.close();
    }
  });
});
