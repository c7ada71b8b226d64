/**
 * @module gateway/rest
 * The /v1 route table: each route calls its owning service's RPC through a ServiceClient
 * (in-process in all-in-one, gRPC in split mode). The REST body is the RPC request at top level and
 * the response is the bare object (spec §1-§2); cookies the service sets become real Set-Cookie headers.
 *
 * Two ways in, one handler: {@link mountRestRoutes} registers the table on Express (the path forms
 * Express also accepts, such as a trailing slash; routing is case-sensitive), and
 * {@link createRestFastPath} answers an exact table path straight from the node:http listener, running
 * the same HTTP layer without Express's router (a linear scan over ~110 routes per request: measured by
 * `npm run bench:authz`).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ErrorRequestHandler, Express, NextFunction, Request, RequestHandler, Response } from 'express';
import { AppError, toAppError } from '@gatehouse/errors';
import { FORWARDED_HEADERS, type CallContext, type ServiceClient } from '@gatehouse/rpc';
import type { Logger } from '@gatehouse/observability';
import { clientInfo, sendErrorFor } from './http/index.ts';
import { setRouteTemplate } from './http/metrics.ts';
import { endAtTurnEnd } from './http/response.ts';
import type { Route, ServiceName } from './routes/table.ts';

export type ServiceClients = Partial<Record<ServiceName, ServiceClient>>;

/** Builds the CallContext of one HTTP request (credentials forwarded, never asserted: ARCHITECTURE §2). */
export function callContextOf(req: Request, protocol: CallContext['protocol'], deadlineMs: number): CallContext {
  const headers: Record<string, string | undefined> = {};
  for (const key of FORWARDED_HEADERS) {
    const v = req.headers[key];
    headers[key] = Array.isArray(v) ? v.join(', ') : v;
  }
  return { headers, clientIp: clientInfo(req).ip, protocol, setCookies: [], deadlineMs: Date.now() + deadlineMs };
}

function appendSetCookie(res: ServerResponse, cookies: string[]): void {
  const prev = res.getHeader('Set-Cookie');
  res.setHeader('Set-Cookie', prev === undefined ? cookies : [...(Array.isArray(prev) ? prev : [String(prev)]), ...cookies]);
}

/**
 * `200` with `out` as JSON, as Express's `res.json` writes it (no ETag: the gateway disables it), sent
 * with the other answers of this event-loop turn (endAtTurnEnd in http/response.ts).
 */
function sendJson(res: ServerResponse, out: unknown): void {
  const body = JSON.stringify(out);
  // one header list with the status line (see http/response.ts), not a setHeader call per header
  endAtTurnEnd(res, 200, ['Content-Type', 'application/json; charset=utf-8', 'Content-Length', String(Buffer.byteLength(body))], body);
}

type RouteHandler = (req: Request, res: Response) => Promise<void>;

/** The handler of one table route: the request body (GET: `{}`) to the route's RPC, its answer as JSON. */
function routeHandler(route: Route, clients: ServiceClients, opts: { deadlineMs: number; logger: Logger }): RouteHandler {
  return async (req, res) => {
    const ctx = callContextOf(req, 'rest', opts.deadlineMs);
    try {
      const client = clients[route.service];
      if (!client) throw new AppError('unimplemented', `${route.path} is not available: the ${route.service} service is not part of this deployment yet`);
      const body = route.method === 'GET' ? {} : ((req.body as Record<string, unknown> | undefined) ?? {});
      const out = await client.call(route.rpc, body, ctx);
      if (res.headersSent) return; // the deadline answered first
      if (ctx.setCookies.length > 0) appendSetCookie(res, ctx.setCookies);
      sendJson(res, out);
    } catch (err) {
      if (ctx.setCookies.length > 0 && !res.headersSent) appendSetCookie(res, ctx.setCookies);
      const appErr = toAppError(err);
      if (appErr.code === 'internal') opts.logger.error({ err, route: route.path }, 'request failed');
      sendErrorFor(req, res, appErr);
    }
  };
}

/** Registers every route of `routes` on `app`. */
export function mountRestRoutes(app: Express, routes: readonly Route[], clients: ServiceClients, opts: { deadlineMs: number; logger: Logger }): void {
  for (const route of routes) {
    const handler = routeHandler(route, clients, opts);
    if (route.method === 'GET') app.get(route.path, handler);
    else app.post(route.path, handler);
  }
}

/** A node:http request listener step: true when it answered (or is answering) the request. */
export type FastPath = (req: IncomingMessage, res: ServerResponse) => boolean;

/**
 * The /v1 fast path. It takes a request only when its path (query string aside) is exactly a `/v1/`
 * table path and its method is the route's (HEAD for a GET route); anything else returns false and
 * goes to Express unchanged, 404/405 answers and path variants included. A taken request runs
 * `before` (the HTTP layer: metrics, security headers, client IP, deadline, CORS, rate limit, CSRF,
 * JSON body) and then the route, exactly as on Express; an error passed or thrown goes to `onError`.
 */
export function createRestFastPath(
  routes: readonly Route[],
  clients: ServiceClients,
  layer: { before: readonly RequestHandler[]; errorHandler: ErrorRequestHandler },
  opts: { deadlineMs: number; logger: Logger },
): FastPath {
  // method → path → the route and its handler (two lookups, no key string built per request)
  const table = new Map<string, Map<string, { path: string; handler: RouteHandler }>>();
  const add = (method: string, route: Route, handler: RouteHandler): void => {
    let byPath = table.get(method);
    if (byPath === undefined) table.set(method, (byPath = new Map()));
    byPath.set(route.path, { path: route.path, handler });
  };
  for (const route of routes) {
    if (!route.path.startsWith('/v1/')) continue;
    const handler = routeHandler(route, clients, opts);
    add(route.method, route, handler);
    if (route.method === 'GET') add('HEAD', route, handler);
  }
  const before = [...layer.before];
  return (incoming, response) => {
    const url = incoming.url ?? '';
    if (url.charCodeAt(1) !== 0x76 /* v */ || !url.startsWith('/v1/')) return false;
    const q = url.indexOf('?');
    const entry = table.get(incoming.method ?? '')?.get(q === -1 ? url : url.slice(0, q));
    if (entry === undefined) return false;
    const handler = entry.handler;
    setRouteTemplate(incoming, entry.path); // the metrics label, without matching the table again
    // The layer and the handlers read only node:http members of req/res (they are typed for Express
    // because Express mounts them too).
    const req = incoming as Request;
    const res = response as Response;
    let i = 0;
    const fail = (err: unknown): void => {
      layer.errorHandler(err, req, res, () => undefined);
    };
    const next: NextFunction = (err?: unknown) => {
      if (err !== undefined && err !== null && err !== 'route' && err !== 'router') {
        fail(err);
        return;
      }
      const mw = before[i++];
      if (mw === undefined) {
        handler(req, res).catch(fail);
        return;
      }
      try {
        const r = mw(req, res, next) as unknown;
        if (r instanceof Promise) r.catch(fail);
      } catch (e) {
        fail(e);
      }
    };
    next();
    return true;
  };
}
