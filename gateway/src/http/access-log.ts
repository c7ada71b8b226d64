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
import { preshapedInfoWriter, traceFields, type Logger } from '@gatehouse/observability';
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

/** The fields of one access line, in the order they are written. */
export interface AccessFields {
  /** the request's trace and span ids (32 and 16 lowercase hex digits) when tracing is on */
  trace_id?: string;
  span_id?: string;
  /** the request id: a UUID, or the caller's id (1–128 visible ASCII characters, no quote or backslash) */
  req_id: string;
  method: string;
  /** the route template (`routeLabel`), never the raw path */
  route: string;
  /** the HTTP status, 499 when the client went away first */
  status: number;
  /** milliseconds, to the microsecond */
  duration_ms: number;
  client_ip: string;
}

/**
 * The access line's fields as JSON text, `,"trace_id":…,"span_id":…,"req_id":…,"method":…,"route":…,
 * "status":…,"duration_ms":…,"client_ip":…` (the trace ids only when given), as
 * {@link preshapedInfoWriter} takes them. Strings are escaped with `JSON.stringify` (quotes,
 * backslashes, control characters including NUL, lone surrogates); a number that is not finite is
 * written as `null`, as pino does.
 */
export function accessFieldsJson(f: AccessFields): string {
  const trace = f.trace_id !== undefined && f.span_id !== undefined
    ? `,"trace_id":${JSON.stringify(f.trace_id)},"span_id":${JSON.stringify(f.span_id)}`
    : '';
  return `${trace},"req_id":${JSON.stringify(f.req_id)},"method":${JSON.stringify(f.method)},"route":${JSON.stringify(f.route)},"status":${num(f.status)},"duration_ms":${num(f.duration_ms)},"client_ip":${JSON.stringify(f.client_ip)}`;
}

const num = (n: number): string => (Number.isFinite(n) ? String(n) : 'null');

/**
 * The access-log middleware: mount it first, so the line covers the whole request. The line is
 * written when the response closes; a client that went away first is logged with status 499.
 * Logged fields: `req_id`, `method`, `route` (the route template, never the raw path: ids and
 * tokens in paths stay out of logs), `status`, `duration_ms`, `client_ip`, and `trace_id`/`span_id`
 * of the request's span when tracing is on; message `request`. With a logger from `createLogger`
 * (json) the line is written pre-shaped ({@link accessFieldsJson}, {@link preshapedInfoWriter}): the
 * same bytes as `logger.info`, at a fraction of the CPU (issue 38 §4); any other logger gets `info`.
 */
export function accessLog(logger: Pick<Logger, 'info' | 'isLevelEnabled'>): RequestHandler {
  const write = preshapedInfoWriter(logger);
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
      const fields: AccessFields = {
        ...trace,
        req_id: id,
        method: req.method,
        route: routeLabel(req),
        status: res.writableFinished ? res.statusCode : 499,
        duration_ms: Math.round((performance.now() - start) * 1000) / 1000,
        client_ip: clientInfo(req).ip,
      };
      if (write) write(accessFieldsJson(fields), 'request');
      else logger.info(fields, 'request');
    });
    next();
  };
}
