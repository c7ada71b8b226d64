/**
 * @module gateway/rest
 * Mounts the /v1 route table: each route calls its owning service's RPC through a ServiceClient
 * (in-process in all-in-one, gRPC in split mode). The REST body is the RPC request at top level and
 * the response is the bare object (spec §1-§2); cookies the service sets become real Set-Cookie headers.
 */
import type { Express, Request, Response } from 'express';
import { AppError, toAppError } from '@gatehouse/errors';
import { FORWARDED_HEADERS, type CallContext, type ServiceClient } from '@gatehouse/rpc';
import type { Logger } from '@gatehouse/observability';
import { clientInfo, sendErrorFor } from './http/index.ts';
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

/** Registers every route of `routes` on `app`. */
export function mountRestRoutes(app: Express, routes: readonly Route[], clients: ServiceClients, opts: { deadlineMs: number; logger: Logger }): void {
  for (const route of routes) {
    const handler = async (req: Request, res: Response): Promise<void> => {
      const ctx = callContextOf(req, 'rest', opts.deadlineMs);
      try {
        const client = clients[route.service];
        if (!client) throw new AppError('unimplemented', `${route.path} is not available: the ${route.service} service is not part of this deployment yet`);
        const body = route.method === 'GET' ? {} : (req.body ?? {});
        const out = await client.call(route.rpc, body, ctx);
        if (ctx.setCookies.length > 0) res.append('Set-Cookie', ctx.setCookies);
        res.status(200).json(out);
      } catch (err) {
        if (ctx.setCookies.length > 0 && !res.headersSent) res.append('Set-Cookie', ctx.setCookies);
        const appErr = toAppError(err);
        if (appErr.code === 'internal') opts.logger.error({ err, route: route.path }, 'request failed');
        sendErrorFor(req, res, appErr);
      }
    };
    if (route.method === 'GET') app.get(route.path, handler);
    else app.post(route.path, handler);
  }
}
