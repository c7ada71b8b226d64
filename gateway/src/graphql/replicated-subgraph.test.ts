/**
 * ReplicatedSubgraph (./gateway.ts, issue 37 §4) against real HTTP servers: a replica that refuses the
 * connection, one that drops it after reading the request (the operation may have run there), and
 * one that answers. A refused fetch goes to the next replica for any operation, a dropped one only for
 * a query; with no replica answering, the fields fail UNAVAILABLE naming the service. A subgraph's 4xx
 * answer with a GraphQL body (Apollo Server's answer to a variable its scalar refuses) is handed on
 * with its errors' codes, not as a code-less error the gateway would answer INTERNAL (issue 30 §5).
 */
import http from 'node:http';
import type net from 'node:net';
import { afterEach, describe, expect, it } from '@jest/globals';
import type { GraphQLDataSource } from '@apollo/gateway';
import { connectionFailure, ReplicatedSubgraph, type GatewayContext } from './gateway.ts';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
});

/** A subgraph replica: `answer` answers `{data: {replica: tag}}`, `drop` reads the request and destroys the socket. */
async function replica(tag: string, behaviour: 'answer' | 'drop'): Promise<{ url: string; requests: () => number }> {
  let requests = 0;
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      requests += 1;
      if (behaviour === 'drop') { req.socket.destroy(); return; }
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ data: { replica: tag } }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(() => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }));
  return { url: `http://127.0.0.1:${(server.address() as net.AddressInfo).port}/graphql`, requests: () => requests };
}

/** A subgraph that answers every request with `status`, `body` and its content type. */
async function answering(status: number, body: string, type: string): Promise<string> {
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => res.writeHead(status, { 'content-type': type, 'set-cookie': 'a=b; Path=/' }).end(body));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(() => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }));
  return `http://127.0.0.1:${(server.address() as net.AddressInfo).port}/graphql`;
}

/** A URL where nothing listens (a server bound, then closed). */
async function refusing(): Promise<string> {
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}/graphql`;
}

const context = { callContext: { headers: {}, clientIp: '192.0.2.1', protocol: 'graphql', setCookies: [] } } as unknown as GatewayContext;
// the `health check` request kind needs no incoming request context (@apollo/gateway does not export its enum)
const send = (subgraph: ReplicatedSubgraph, query: string) => subgraph.process({
  kind: 'health check', request: { query, variables: {} }, context,
} as unknown as Parameters<GraphQLDataSource<GatewayContext>['process']>[0]);
const UNAVAILABLE = { errors: [{ message: 'the authz service is unavailable, please try again later', extensions: { code: 'UNAVAILABLE' } }] };

describe('ReplicatedSubgraph', () => {
  it('sends a fetch whose connection was refused to the next replica, a mutation too (nothing was sent)', async () => {
    const ok = await replica('b', 'answer');
    const subgraph = new ReplicatedSubgraph('authz', [await refusing(), ok.url], 'tok');
    expect(await send(subgraph, 'mutation { _fga_reset { message } }')).toMatchObject({ data: { replica: 'b' } });
    expect(await send(subgraph, 'mutation { _fga_reset { message } }')).toMatchObject({ data: { replica: 'b' } });
    expect(ok.requests()).toBe(2);
  });

  it('sends a query whose connection was lost mid-request to the next replica', async () => {
    const dropper = await replica('a', 'drop');
    const ok = await replica('b', 'answer');
    const subgraph = new ReplicatedSubgraph('authz', [dropper.url, ok.url], 'tok');
    expect(await send(subgraph, 'query { check_permissions { results { allowed } } }')).toMatchObject({ data: { replica: 'b' } });
    expect([dropper.requests(), ok.requests()]).toEqual([1, 1]);
  });

  it('does not send a mutation whose connection was lost again (it may have run): UNAVAILABLE naming the service', async () => {
    const dropper = await replica('a', 'drop');
    const ok = await replica('b', 'answer');
    const subgraph = new ReplicatedSubgraph('authz', [dropper.url, ok.url], 'tok');
    expect(await send(subgraph, 'mutation m { _fga_write_tuples(params: {}) { message } }')).toEqual(UNAVAILABLE);
    expect([dropper.requests(), ok.requests()]).toEqual([1, 0]);
  });

  it('answers UNAVAILABLE naming the service when no replica takes the connection, at once', async () => {
    const subgraph = new ReplicatedSubgraph('authz', [await refusing(), await refusing()], 'tok');
    const started = performance.now();
    expect(await send(subgraph, '{ check_permissions { results { allowed } } }')).toEqual(UNAVAILABLE);
    expect(performance.now() - started).toBeLessThan(1000);
    const single = new ReplicatedSubgraph('mfa', [await refusing()], 'tok');
    expect(await send(single, '{ x }')).toEqual({ errors: [{ message: 'the mfa service is unavailable, please try again later', extensions: { code: 'UNAVAILABLE' } }] });
  });

  it('tells a connection failure from any other error', () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' });
    const reset = Object.assign(new Error('other side closed'), { code: 'UND_ERR_SOCKET' });
    expect(connectionFailure(new TypeError('fetch failed', { cause: refused }))).toBe('refused');
    expect(connectionFailure(new TypeError('fetch failed', { cause: reset }))).toBe('lost');
    expect(connectionFailure(new TypeError('fetch failed', { cause: new AggregateError([refused]) }))).toBe('refused');
    expect(connectionFailure(new Error('Missing query'))).toBeNull();
  });

  it('hands on a 4xx answer with a GraphQL body as that answer, its codes kept (the split fuzzer found INTERNAL)', async () => {
    // what Apollo Server answers to `_webhooks(params: {limit: "abc"})` (Int64) or a string for a Map
    const refusal = { errors: [{ message: 'Variable "$params" got invalid value at "params.limit"', extensions: { code: 'BAD_USER_INPUT' } }] };
    const subgraph = new ReplicatedSubgraph('admin', [await answering(400, JSON.stringify(refusal), 'application/json; charset=utf-8')], 'tok');
    expect(await send(subgraph, 'query q($params: PaginationRequest) { _webhooks(params: $params) { __typename } }')).toMatchObject(refusal);
  });

  it('answers INVALID_ARGUMENT for a body the subgraph finds too large (413), and keeps other 4xx answers errors', async () => {
    const large = new ReplicatedSubgraph('authn', [await answering(413, '<html>PayloadTooLargeError</html>', 'text/html')], 'tok');
    expect(await send(large, 'mutation { signup { __typename } }')).toMatchObject({ errors: [{ message: 'request body too large', extensions: { code: 'INVALID_ARGUMENT' } }] });
    const denied = new ReplicatedSubgraph('authn', [await answering(401, '{"code":"unauthenticated","message":"unauthorized"}', 'application/json')], 'tok');
    await expect(send(denied, '{ meta { __typename } }')).rejects.toMatchObject({ extensions: { code: 'UNAUTHENTICATED', response: { status: 401 } } });
  });
});
