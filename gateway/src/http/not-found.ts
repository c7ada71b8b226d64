/** @module gateway/http/not-found 404 and 405 answers for the /v1 surface (behaviour.md §0.2, spec §7). */
import type { RequestHandler } from 'express';
import { AppError } from '@gatehouse/errors';
import { type RouteMatcher, matchRoute } from '../routes/table.ts';
import { sendErrorFor } from './errors.ts';
import { requestPath } from './request-path.ts';

/**
 * Mount after the /v1 routes. An unknown `/v1` path → 404 `not_found` `Not Found`; a known path
 * with another method → 405 `method_not_allowed` `Method Not Allowed` with an `Allow` header.
 * Other paths pass to the next handler.
 */
export function v1NotFound(matcher: RouteMatcher = { match: matchRoute }): RequestHandler {
  return (req, res, next) => {
    const path = requestPath(req);
    if (path !== '/v1' && !path.startsWith('/v1/')) {
      next();
      return;
    }
    const m = matcher.match(req.method, path);
    if ('route' in m) {
      // A table route nobody mounted: the method is right, the handler is missing.
      next();
      return;
    }
    if (m.error === 'method_not_allowed') {
      const allow = [...m.allow, ...(m.allow.includes('GET') ? ['HEAD'] : []), 'OPTIONS'];
      sendErrorFor(req, res, new AppError('method_not_allowed', 'Method Not Allowed', { headers: { Allow: allow.join(', ') } }));
      return;
    }
    sendErrorFor(req, res, new AppError('not_found', 'Not Found'));
  };
}
