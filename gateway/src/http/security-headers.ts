/** @module gateway/http/security-headers Response hardening headers (behaviour.md §2.5, §1.2 `--enable-hsts`). */
import type { RequestHandler } from 'express';
import { addResponseHeaders } from './response.ts';

/**
 * The default Content-Security-Policy. Strict for the JSON API; the bundled UI under /app and
 * /dashboard is same-origin and needs inline styles only.
 */
export const DEFAULT_CSP =
  "default-src 'self'; base-uri 'self'; object-src 'none'; frame-ancestors 'none'; form-action 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'";

/** `Strict-Transport-Security` value when `--enable-hsts` is on (behaviour.md §1.2). */
export const HSTS_VALUE = 'max-age=31536000; includeSubDomains';

/**
 * Sets `X-Content-Type-Options: nosniff`, `X-Frame-Options: DENY`,
 * `Referrer-Policy: strict-origin-when-cross-origin`, a default CSP (`frame-ancestors 'none'`),
 * `Cache-Control: no-store`, and HSTS when `enableHsts` (written with the status line on a
 * GatewayResponse: see response.ts). `no-store` is the default of every answer, so no answer that
 * carries a token, a cookie or a one-time secret (AuthResponse, `client_secret`, SCIM tokens, webhook
 * signing secrets, TOTP secrets) can be kept by a cache (RFC 6749 §5.1, RFC 9111 §5.2.2.5); what is
 * meant to be cached (the hashed assets of /app and the playground) sets its own `Cache-Control`,
 * which replaces this one.
 */
export function securityHeaders(options: { enableHsts: boolean; contentSecurityPolicy?: string }): RequestHandler {
  const headers = [
    'X-Content-Type-Options', 'nosniff',
    'X-Frame-Options', 'DENY',
    'Referrer-Policy', 'strict-origin-when-cross-origin',
    'Content-Security-Policy', options.contentSecurityPolicy ?? DEFAULT_CSP,
    'Cache-Control', 'no-store',
    ...(options.enableHsts ? ['Strict-Transport-Security', HSTS_VALUE] : []),
  ];
  return (_req, res, next) => {
    addResponseHeaders(res, headers);
    next();
  };
}
