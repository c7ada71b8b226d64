/** @module gateway/http/metrics HTTP request metrics and the separate /metrics listener (spec §1 additional rules, §8; STYLE §6). */
import type { IncomingMessage } from 'node:http';
import type { Request, RequestHandler } from 'express';
import { registerRequestSeries, type Registry, type Series } from '@gatehouse/observability';
import { type RouteMatcher, matchRoute } from '../routes/table.ts';
import { requestPath } from './request-path.ts';

const KNOWN_METHODS = new Set(['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS']);
const FIXED_PATHS = new Set(['/graphql', '/healthz', '/readyz', '/authorize', '/userinfo', '/oauth/token',
  '/oauth/revoke', '/oauth/introspect', '/oauth/register', '/oauth/par', '/oauth/device_authorization',
  '/oauth/device_verification', '/playground', '/verify_email', '/logout']);

/** The route table template the request matched, when the /v1 fast path set it (see {@link setRouteTemplate}). */
const ROUTE_TEMPLATE = Symbol('gatehouse.routeTemplate');
type WithTemplate = IncomingMessage & { [ROUTE_TEMPLATE]?: string };

/**
 * Records that `req` matched the route table entry `template` exactly (method and path), so
 * {@link routeLabel} answers without matching the table again. Pass the table's own string.
 */
export function setRouteTemplate(req: IncomingMessage, template: string): void {
  (req as WithTemplate)[ROUTE_TEMPLATE] = template;
}

/**
 * A low-cardinality route label: the table's route template for /v1 and discovery paths, the
 * Express route template when one matched, a fixed set of known paths, a prefix bucket
 * (`/app/*`, `/scim/v2/*`, …), else `unmatched`. Never the raw path (ids, typos, scanners).
 */
export function routeLabel(req: Request, matcher: RouteMatcher = { match: matchRoute }): string {
  const template = (req as WithTemplate)[ROUTE_TEMPLATE];
  if (template !== undefined) return template;
  const path = requestPath(req);
  const m = matcher.match(req.method, path);
  if ('route' in m || m.error === 'method_not_allowed') return path; // path is a table template
  const expressRoute = (req.route as { path?: unknown } | undefined)?.path;
  if (typeof expressRoute === 'string') return `${req.baseUrl}${expressRoute}`;
  if (FIXED_PATHS.has(path)) return path;
  for (const prefix of ['/v1/', '/app/', '/dashboard/', '/scim/v2/', '/oauth/', '/oauth_callback/', '/.well-known/']) {
    if (path.startsWith(prefix)) return prefix === '/v1/' ? 'unmatched' : `${prefix}*`;
  }
  return 'unmatched';
}

export interface HttpMetrics {
  /** records `gatehouse_http_requests_total` and `gatehouse_http_request_duration_seconds` when the response finishes */
  readonly middleware: RequestHandler;
}

/** Registers (or reuses, so all-in-one never registers twice) the HTTP metrics on `registry`. */
export function createHttpMetrics(registry: Registry): HttpMetrics {
  const table = registerRequestSeries(registry, {
    counter: { name: 'gatehouse_http_requests_total', help: 'HTTP requests by route template, method and status code' },
    histogram: {
      name: 'gatehouse_http_request_duration_seconds', help: 'HTTP request duration in seconds',
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    },
    labelNames: ['route', 'method', 'code'],
  });
  // route label → method → status → series: the labels are few (templates, known methods, status
  // codes), and these lookups build no key string and no label object per request
  const known = new Map<string, Map<string, Map<number, Series>>>();
  const seriesOf = (route: string, method: string, status: number): Series => {
    let byMethod = known.get(route);
    if (byMethod === undefined) known.set(route, (byMethod = new Map()));
    let byStatus = byMethod.get(method);
    if (byStatus === undefined) byMethod.set(method, (byStatus = new Map()));
    let s = byStatus.get(status);
    if (s === undefined) byStatus.set(status, (s = table.series({ route, method, code: String(status) })));
    return s;
  };
  return {
    middleware: (req, res, next) => {
      const start = performance.now();
      let recorded = false;
      // 'close' follows 'finish' for every response; when the client went away before the response
      // finished, it is counted as 499 (cancelled, behaviour.md §0.2). A response closes once, so a
      // plain listener does (no once-wrapper to build and remove per request).
      res.on('close', () => {
        if (recorded) return;
        recorded = true;
        const status = res.writableFinished ? res.statusCode : 499;
        const method = KNOWN_METHODS.has(req.method) ? req.method : 'OTHER';
        seriesOf(routeLabel(req), method, status).record((performance.now() - start) / 1000);
      });
      next();
    },
  };
}

// The metrics listener is shared by every process: it lives in @gatehouse/observability.
export { startMetricsServer, type MetricsServer } from '@gatehouse/observability';
