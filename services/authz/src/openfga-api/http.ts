/**
 * @module authz/openfga-api/http
 * OpenFGA's HTTP API on its own listener of the authz service (`--openfga-http-port`): the paths, methods
 * and JSON bodies of OpenFGA's REST API (openfga/api `openfga_service.proto`, its `google.api.http`
 * annotations), authenticated as OpenFGA does (`Authorization: Bearer <preshared key>`, or none for local
 * development), errors as OpenFGA's `{code, message}`. Every call is counted in
 * `gatehouse_authz_api_requests_total{api="openfga",method,code}`.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger, Registry } from '@gatehouse/observability';
import { registerRequestSeries } from '@gatehouse/observability';
import { OpenFgaError } from './errors.ts';
import type { OpenFgaOperations } from './operations.ts';

/** Request bodies larger than this are refused (OpenFGA's default gRPC message limit is 4 MiB). */
const MAX_BODY_BYTES = 4 * 1024 * 1024;

/**
 * How callers authenticate (OpenFGA's `--authn-method`): `none`; bearer tokens equal to one of `keys`; or
 * `oidc`: access tokens of Gatehouse's own issuer, resolved by `caller`, to a service account (optionally
 * one of `clientIds`), which makes a Gatehouse service account an OpenFGA client.
 */
export type OpenFgaAuthn =
  | { method: 'none' }
  | { method: 'preshared'; keys: readonly string[] }
  | { method: 'oidc'; caller: (authorization: string) => Promise<{ kind: string; clientId?: string }>; clientIds: readonly string[] };

type Params = Record<string, string>;
type Query = Record<string, string>;
type Body = Record<string, unknown>;
interface Route {
  method: string;
  pattern: RegExp;
  names: string[];
  /** the OpenFGA API method name (metrics label) */
  rpc: string;
  /** the success status: 200, or 201 / 204 where OpenFGA answers so */
  status: number;
  handle(ops: OpenFgaOperations, p: Params, q: Query, body: Body): Promise<unknown>;
}

/** `/stores/{store_id}/check` → a route matching it, with its path parameters by name. */
function route(method: string, path: string, rpc: string, handle: Route['handle'], status = 200): Route {
  const names: string[] = [];
  const pattern = new RegExp(`^${path.replace(/\{(\w+)\}/g, (_, n: string) => {
    names.push(n);
    return '([^/]+)';
  })}$`);
  return { method, pattern, names, rpc, handle, status };
}

/** OpenFGA API v1's HTTP routes (openfga_service.proto google.api.http). */
const ROUTES: readonly Route[] = [
  route('GET', '/stores', 'ListStores', (o, _p, q) => o.ListStores(q)),
  route('POST', '/stores', 'CreateStore', (o, _p, _q, b) => o.CreateStore(b), 201),
  route('GET', '/stores/{store_id}', 'GetStore', (o, p) => o.GetStore(p.store_id!)),
  route('PATCH', '/stores/{store_id}', 'UpdateStore', (o, p, _q, b) => o.UpdateStore(p.store_id!, b)),
  route('DELETE', '/stores/{store_id}', 'DeleteStore', (o, p) => o.DeleteStore(p.store_id!)),
  route('POST', '/stores/{store_id}/authorization-models', 'WriteAuthorizationModel', (o, p, _q, b) => o.WriteAuthorizationModel(p.store_id!, b), 201),
  route('GET', '/stores/{store_id}/authorization-models', 'ReadAuthorizationModels', (o, p, q) => o.ReadAuthorizationModels(p.store_id!, q)),
  route('GET', '/stores/{store_id}/authorization-models/{id}', 'ReadAuthorizationModel', (o, p) => o.ReadAuthorizationModel(p.store_id!, p.id!)),
  route('POST', '/stores/{store_id}/write', 'Write', (o, p, _q, b) => o.Write(p.store_id!, b)),
  route('POST', '/stores/{store_id}/read', 'Read', (o, p, _q, b) => o.Read(p.store_id!, b)),
  route('GET', '/stores/{store_id}/changes', 'ReadChanges', (o, p, q) => o.ReadChanges(p.store_id!, q)),
  route('POST', '/stores/{store_id}/check', 'Check', (o, p, _q, b) => o.Check(p.store_id!, b)),
  route('POST', '/stores/{store_id}/batch-check', 'BatchCheck', (o, p, _q, b) => o.BatchCheck(p.store_id!, b)),
  route('POST', '/stores/{store_id}/expand', 'Expand', (o, p, _q, b) => o.Expand(p.store_id!, b)),
  route('POST', '/stores/{store_id}/list-objects', 'ListObjects', (o, p, _q, b) => o.ListObjects(p.store_id!, b)),
  route('POST', '/stores/{store_id}/streamed-list-objects', 'StreamedListObjects', (o, p, _q, b) => o.StreamedListObjects(p.store_id!, b)),
  route('POST', '/stores/{store_id}/list-users', 'ListUsers', (o, p, _q, b) => o.ListUsers(p.store_id!, b)),
  route('PUT', '/stores/{store_id}/assertions/{authorization_model_id}', 'WriteAssertions', (o, p, _q, b) => o.WriteAssertions(p.store_id!, p.authorization_model_id!, b), 204),
  route('GET', '/stores/{store_id}/assertions/{authorization_model_id}', 'ReadAssertions', (o, p) => o.ReadAssertions(p.store_id!, p.authorization_model_id!)),
];

const sha = (s: string): Buffer => createHash('sha256').update(s, 'utf8').digest();
/** The digests of a key list, computed once per list (the configured keys do not change while serving). */
const keyDigests = new WeakMap<readonly string[], Buffer[]>();
const digestsOf = (keys: readonly string[]): Buffer[] => {
  let d = keyDigests.get(keys);
  if (d === undefined) keyDigests.set(keys, (d = keys.map(sha)));
  return d;
};

/**
 * The caller's credentials (an `Authorization` header, or the gRPC form's `authorization` metadata) as
 * OpenFGA's preshared-key authentication judges them.
 * @throws OpenFgaError 401 `bearer_token_missing` (no bearer token), `unauthenticated` (not a configured key;
 *   with `oidc`: not a valid access token of a service account that may call)
 */
export async function authenticate(authn: OpenFgaAuthn, header: string | undefined): Promise<void> {
  if (authn.method === 'none') return;
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header ?? '');
  if (!m) throw new OpenFgaError(401, 'bearer_token_missing', 'missing bearer token');
  if (authn.method === 'oidc') {
    const caller = await authn.caller(`Bearer ${m[1]!}`).catch(() => null);
    const allowed = caller?.kind === 'service_account' && (authn.clientIds.length === 0 || authn.clientIds.includes(caller.clientId ?? ''));
    if (!allowed) throw new OpenFgaError(401, 'unauthenticated', 'unauthenticated');
    return;
  }
  const given = sha(m[1]!);
  // compared as digests in constant time, against every key (no early exit reveals which matched)
  let ok = false;
  for (const key of digestsOf(authn.keys)) ok = timingSafeEqual(given, key) || ok;
  if (!ok) throw new OpenFgaError(401, 'unauthenticated', 'unauthenticated');
}

/** The JSON body of a request (empty → `{}`). @throws OpenFgaError 400 `validation_error` (not a JSON object, too large) */
async function readBody(req: IncomingMessage): Promise<Body> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) throw new OpenFgaError(400, 'validation_error', `request body larger than ${MAX_BODY_BYTES} bytes`);
    chunks.push(chunk as Buffer);
  }
  const text = Buffer.concat(chunks).toString('utf8').trim();
  if (text === '') return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new OpenFgaError(400, 'validation_error', 'request body is not valid JSON');
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) throw new OpenFgaError(400, 'validation_error', 'request body must be a JSON object');
  return parsed as Body;
}

const send = (res: ServerResponse, status: number, body: unknown): void => {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
};

/**
 * `gatehouse_authz_api_requests_total` and `gatehouse_authz_api_request_duration_seconds` (labels `api`:
 * `openfga` or `openfga_grpc`, `method`, `code`: the HTTP status) on `registry`, registered once.
 */
export function openFgaSeries(registry: Registry): ReturnType<typeof registerRequestSeries<'api' | 'method' | 'code'>> {
  return registerRequestSeries(registry, {
    counter: { name: 'gatehouse_authz_api_requests_total', help: 'calls to the authz service\'s own APIs, by API (openfga: HTTP, openfga_grpc: gRPC), method and HTTP status' },
    histogram: {
      name: 'gatehouse_authz_api_request_duration_seconds', help: 'duration in seconds of calls to the authz service\'s own APIs, by API, method and HTTP status',
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    },
    labelNames: ['api', 'method', 'code'],
  });
}

/** A started OpenFGA API listener. */
export interface OpenFgaHttpServer {
  /** the port it listens on (the one asked for, or the free port the system chose for 0) */
  readonly port: number;
  close(): Promise<void>;
}

/**
 * Starts OpenFGA's HTTP API on `host:port` over `ops`. `GET /healthz` answers `{"status":"SERVING"}`
 * without credentials, as OpenFGA's does; an unknown path is 404 `undefined_endpoint`.
 * @throws Error when the port cannot be bound (the caller turns it into a FATAL line)
 */
export async function startOpenFgaHttp(o: { host: string; port: number; ops: OpenFgaOperations; authn: OpenFgaAuthn; logger: Logger; registry: Registry }): Promise<OpenFgaHttpServer> {
  const table = openFgaSeries(o.registry);

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const started = process.hrtime.bigint();
    const url = new URL(req.url ?? '/', 'http://openfga.invalid');
    let rpc = 'unknown';
    let status = 500;
    try {
      if (req.method === 'GET' && url.pathname === '/healthz') {
        rpc = 'Health';
        status = 200;
        send(res, 200, { status: 'SERVING' });
        return;
      }
      const found = ROUTES.map((r) => ({ r, m: r.pattern.exec(url.pathname) })).filter((x) => x.m !== null);
      const hit = found.find((x) => x.r.method === req.method);
      if (!hit) throw new OpenFgaError(found.length > 0 ? 405 : 404, 'undefined_endpoint', found.length > 0 ? 'Method Not Allowed' : 'Not Found');
      rpc = hit.r.rpc;
      await authenticate(o.authn, req.headers.authorization);
      const params: Params = {};
      hit.r.names.forEach((n, i) => {
        params[n] = decodeURIComponent(hit.m![i + 1]!);
      });
      const query: Query = Object.fromEntries(url.searchParams.entries());
      const body = req.method === 'POST' || req.method === 'PUT' || req.method === 'PATCH' ? await readBody(req) : {};
      const answer = await hit.r.handle(o.ops, params, query, body);
      if (rpc === 'StreamedListObjects') {
        // newline-delimited JSON, one `{"result":{"object":…}}` per object, as OpenFGA streams it
        status = 200;
        res.writeHead(200, { 'content-type': 'application/json' });
        for (const object of answer as string[]) res.write(`${JSON.stringify({ result: { object } })}\n`);
        res.end();
        return;
      }
      status = hit.r.status;
      if (status === 204) res.writeHead(204).end();
      else send(res, status, answer);
    } catch (err) {
      const e = err instanceof OpenFgaError ? err : new OpenFgaError(500, 'internal_error', 'Internal Server Error');
      if (e.status >= 500) o.logger.error({ err, method: rpc }, 'OpenFGA API call failed');
      status = e.status;
      if (!res.headersSent) send(res, e.status, { code: e.code, message: e.message });
      else res.end();
    } finally {
      table.series({ api: 'openfga', method: rpc, code: String(status) }).record(Number(process.hrtime.bigint() - started) / 1e9);
    }
  };

  const server: Server = createServer((req, res) => {
    void handle(req, res);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(o.port, o.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () => new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    }),
  };
}
