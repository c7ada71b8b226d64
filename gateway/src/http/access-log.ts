/**
 * @module gateway/http/access-log
 * One access-log line per HTTP request at `info` (issue 15: method, route, status, duration, request
 * id, client IP; never bodies, tokens or cookies), and the request id itself: the caller's
 * `X-Request-Id` when it is a plausible id, else a fresh UUID, echoed in the response's
 * `X-Request-Id` so a client can quote it.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { RequestHandler } from 'express';
import { traceFields, type Logger } from '@gatehouse/observability';
import { clientInfo } from './client-ip.ts';
import { routeLabel } from './metrics.ts';

/** 1–128 visible ASCII characters without quotes or backslashes (what proxies and tracers send). */
const REQUEST_ID = /^[\x21\x23-\x5b\x5d-\x7e]{1,128}$/;

const ID = Symbol('gatehouse.requestId');
type WithId = IncomingMessage & { [ID]?: string };

/** The request id {@link accessLog} gave `req` (empty before it ran). */
export function requestIdOf(req: IncomingMessage): string {
  return (req as WithId)[ID] ?? '';
}

/**
 * The access-log middleware: mount it first, so the line covers the whole request. The line is
 * written when the response closes; a client that went away first is logged with status 499.
 * Logged fields: `req_id`, `method`, `route` (the route template, never the raw path: ids and
 * tokens in paths stay out of logs), `status`, `duration_ms`, `client_ip`.
 */
export function accessLog(logger: Pick<Logger, 'info' | 'isLevelEnabled'>): RequestHandler {
  return (req, res, next) => {
    const given = req.headers['x-request-id'];
    const id = typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
    (req as WithId)[ID] = id;
    res.setHeader('X-Request-Id', id);
    if (!logger.isLevelEnabled('info')) {
      next();
      return;
    }
    const start = performance.now();
    // the request's span is active here, not in the 'close' listener: take its ids now
    const trace = traceFields();
    res.on('close', () => {
      logger.info({
        ...trace,
        req_id: id,
        method: req.method,
        route: routeLabel(req),
        status: res.writableFinished ? res.statusCode : 499,
        duration_ms: Math.round((performance.now() - start) * 1000) / 1000,
        client_ip: clientInfo(req).ip,
      }, 'request');
    });
    next();
  };
}
