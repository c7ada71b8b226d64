/**
 * @module gateway/openfga-proxy
 * `--gateway-openfga-url` (issue 36 §2): OpenFGA's HTTP API through the gateway. Requests to `/stores` and
 * below (OpenFGA's REST paths: `POST /stores/{store_id}/check`, …) are passed to the authz service's
 * OpenFGA HTTP listener as they came (method, path, query, body, `Authorization`), and its answer back
 * as it came, streamed (StreamedListObjects' newline-delimited JSON arrives line by line). The gateway
 * authenticates nothing here: the listener judges the bearer token (preshared key or OIDC access
 * token), so OpenFGA's own 401 codes reach the SDK or CLI unchanged. The gateway's layer still applies
 * first: access log, metrics, rate limit, CORS, and CSRF (exempt only with a bearer token, csrf.ts).
 */
import http from 'node:http';
import https from 'node:https';
import type { Express, Request, Response } from 'express';
import { AppError } from '@gatehouse/errors';
import type { Logger } from '@gatehouse/observability';
import { sendErrorFor } from './http/index.ts';

/** The path prefix routed: OpenFGA's API has every method under `/stores` (openfga_service.proto). */
export const OPENFGA_PATH = '/stores';

/** Headers of one hop (RFC 9110 §7.6.1) and the ones the gateway sets itself: never forwarded. */
const HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'te', 'trailer', 'upgrade', 'host', 'proxy-authorization']);

/** `headers` without the hop-by-hop ones (and those a `Connection` header names). */
function forwardable(headers: http.IncomingHttpHeaders): http.OutgoingHttpHeaders {
  const named = new Set(String(headers.connection ?? '').toLowerCase().split(',').map((s) => s.trim()).filter(Boolean));
  const out: http.OutgoingHttpHeaders = {};
  for (const [k, v] of Object.entries(headers)) {
    if (v === undefined || HOP.has(k) || named.has(k)) continue;
    out[k] = v;
  }
  return out;
}

/**
 * Mounts the pass-through of `/stores` and `/stores/*` to `target` (the base URL of the authz service's
 * OpenFGA HTTP listener, e.g. `http://gatehouse-authz-openfga:8080`). An unreachable listener answers
 * 503 `unavailable`; one that does not answer within `timeoutMs` 504 `deadline_exceeded` (the gateway's
 * `{code, message}`); a caller that goes away aborts the upstream call.
 */
export function mountOpenFgaProxy(app: Express, o: { target: string; timeoutMs: number; logger: Logger }): void {
  const base = new URL(o.target);
  const client = base.protocol === 'https:' ? https : http;
  const prefix = base.pathname.replace(/\/+$/, '');
  const agent = new client.Agent({ keepAlive: true });
  const handler = (req: Request, res: Response): void => {
    // originalUrl: the path and query as the caller sent them (express strips the mount path from req.url)
    const upstream = client.request({
      protocol: base.protocol, hostname: base.hostname, port: base.port, agent, method: req.method,
      path: `${prefix}${req.originalUrl}`, headers: forwardable(req.headers), timeout: o.timeoutMs,
    });
    let answered = false;
    const fail = (err: AppError): void => {
      if (answered) return;
      answered = true;
      if (res.headersSent) res.destroy();
      else sendErrorFor(req, res, err);
    };
    upstream.on('response', (up) => {
      answered = true;
      res.status(up.statusCode ?? 502);
      for (const [k, v] of Object.entries(forwardable(up.headers))) if (v !== undefined) res.setHeader(k, v);
      up.pipe(res);
      up.on('error', () => res.destroy());
    });
    upstream.on('timeout', () => {
      upstream.destroy();
      fail(new AppError('deadline_exceeded', 'the OpenFGA API did not answer in time'));
    });
    upstream.on('error', (err) => {
      o.logger.warn({ err, target: base.origin }, 'OpenFGA API unreachable');
      fail(new AppError('unavailable', 'the OpenFGA API is unavailable'));
    });
    res.on('close', () => {
      if (!res.writableFinished) upstream.destroy();
    });
    req.pipe(upstream);
  };
  app.all(OPENFGA_PATH, handler);
  app.all(`${OPENFGA_PATH}/*rest`, handler);
}
