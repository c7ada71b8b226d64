/** @module gateway/http/cors CORS per behaviour.md §2.5 with graphql.md O2's client headers. */
import type { RequestHandler } from 'express';
import { type OriginPolicy, isListedOrigin, parseOrigin } from './origins.ts';
import { addResponseHeaders } from './response.ts';

const ALLOW_ANY_ORIGIN = ['Access-Control-Allow-Origin', '*'];

/**
 * Request headers a cross-origin caller may send. `X-Authorizer-URL` and `X-Authorizer-Client-ID`
 * are sent by authorizer-js and otherwise ignored (graphql.md O2); `DPoP` carries a browser client's
 * proof (RFC 9449 §4.1). `x-service-admin-secret` is deliberately absent: the admin secret is never
 * usable cross-origin (behaviour.md §2.5).
 */
export const CORS_ALLOWED_HEADERS =
  'Content-Type, Authorization, Accept, Origin, Cache-Control, X-Requested-With, X-Authorizer-URL, X-Authorizer-Client-ID, DPoP';
/** Response headers a cross-origin caller may read: a DPoP client needs the server nonce and the challenge (RFC 9449 §8, §7.1). */
export const CORS_EXPOSED_HEADERS = 'DPoP-Nonce, WWW-Authenticate';
const EXPOSE = ['Access-Control-Expose-Headers', CORS_EXPOSED_HEADERS];
export const CORS_ALLOWED_METHODS = 'GET, POST, PUT, PATCH, DELETE, OPTIONS';
/** Preflight cache lifetime in seconds. */
export const CORS_MAX_AGE_SECONDS = 600;

function appendVary(current: string | number | string[] | undefined, value: string): string {
  const parts = (Array.isArray(current) ? current.join(',') : String(current ?? ''))
    .split(',').map((v) => v.trim()).filter((v) => v !== '');
  if (!parts.some((p) => p.toLowerCase() === value.toLowerCase() || p === '*')) parts.push(value);
  return parts.join(', ');
}

/**
 * CORS middleware. With `*`: `Access-Control-Allow-Origin: *`, never credentials. With an explicit
 * list and a listed `Origin`: that origin echoed, `Access-Control-Allow-Credentials: true`, and
 * `Vary: Origin` (always sent in list mode, so caches never mix origins). An unlisted origin gets
 * no CORS headers, so the browser blocks it. A preflight (`OPTIONS` with
 * `Access-Control-Request-Method`) is answered here: 204 with `Access-Control-Max-Age: 600`.
 */
export function cors(policy: OriginPolicy): RequestHandler {
  return (req, res, next) => {
    const originHeader = req.headers.origin;
    const isPreflight = req.method === 'OPTIONS' && req.headers['access-control-request-method'] !== undefined;
    let allowed = false;
    if (policy.any) {
      if (originHeader !== undefined) {
        addResponseHeaders(res, ALLOW_ANY_ORIGIN);
        allowed = true;
      }
    } else {
      res.setHeader('Vary', appendVary(res.getHeader('Vary'), 'Origin'));
      const parsed = parseOrigin(originHeader);
      if (originHeader !== undefined && parsed && isListedOrigin(policy, parsed)) {
        res.setHeader('Access-Control-Allow-Origin', originHeader.trim());
        res.setHeader('Access-Control-Allow-Credentials', 'true');
        allowed = true;
      }
    }
    if (!isPreflight) {
      if (allowed) addResponseHeaders(res, EXPOSE);
      next();
      return;
    }
    if (allowed) {
      res.setHeader('Access-Control-Allow-Methods', CORS_ALLOWED_METHODS);
      res.setHeader('Access-Control-Allow-Headers', CORS_ALLOWED_HEADERS);
      res.setHeader('Access-Control-Max-Age', String(CORS_MAX_AGE_SECONDS));
    }
    res.setHeader('Content-Length', '0');
    res.statusCode = 204;
    res.end();
  };
}
