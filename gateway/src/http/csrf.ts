/** @module gateway/http/csrf Origin/Referer check on state-changing requests (spec §5 CSRF, §9; behaviour.md §2.5). */
import type { Request, RequestHandler } from 'express';
import { AppError } from '@gatehouse/errors';
import { clientInfo } from './client-ip.ts';
import { sendErrorFor } from './errors.ts';
import { type OriginPolicy, type ParsedOrigin, hostPort, isListedOrigin, parseOrigin } from './origins.ts';
import { requestPath } from './request-path.ts';

export const CSRF_MISSING_MESSAGE = 'origin or referer header is required for state-changing requests';
export const CSRF_MISMATCH_MESSAGE = 'origin not allowed';

const STATE_CHANGING = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/**
 * Paths exempt from the check (behaviour.md §2.5): client-authenticated OAuth endpoints, SCIM with a
 * bearer token, SAML ACS, the SAML IdP's SSO endpoint, social callbacks (Apple form_post), `POST /authorize` (form_post) and
 * `POST /userinfo` (bearer). `POST /logout` (OIDC RP-Initiated Logout 1.0 §2) is deliberately not
 * exempt: §2.5 lists no exemption for it, so a form from an origin `--allowed-origins` refuses gets 403
 * (RPs elsewhere use GET, which needs no check). `POST /oauth/register` (RFC 7591: a client with no
 * cookie and no credential yet; it reads and changes no browser state) and RFC 7592's
 * `/oauth/register/<id>` with its bearer registration token are exempt as well (issue 34), and RFC 9126
 * `/oauth/par` and RFC 8628 `/oauth/device_authorization`, client-authenticated like the token endpoint.
 * `/oauth/device_verification` (the hosted page's cookie-authenticated calls) is checked. OpenFGA's API
 * under `/stores` (`--gateway-openfga-url`) is exempt with a bearer token, as SCIM is.
 */
export function isCsrfExempt(method: string, path: string, authorization: string | undefined): boolean {
  if (path === '/oauth/token' || path === '/oauth/revoke' || path === '/oauth/introspect' || path === '/oauth/par'
    || path === '/oauth/device_authorization') return true;
  if (path.startsWith('/scim/v2/') || path === '/scim/v2') {
    return authorization !== undefined && /^bearer\s+\S/i.test(authorization);
  }
  if (/^\/oauth\/saml\/[^/]+\/acs\/?$/.test(path)) return true;
  // the SAML IdP's SSO endpoint takes an AuthnRequest POSTed by the SP's page (SAML Bindings §3.5):
  // cross-origin by design; it changes no state and answers only to the SP's registered ACS
  if (/^\/oauth\/saml\/[^/]+\/idp\/sso\/?$/.test(path)) return true;
  // issue 31: its Single Logout endpoint takes a LogoutRequest POSTed the same way; the request must be
  // signed by the SP's registered key, which a cross-site forger does not hold
  if (/^\/oauth\/saml\/[^/]+\/idp\/slo\/?$/.test(path)) return true;
  if (/^\/oauth_callback\/[^/]+\/?$/.test(path)) return true;
  if (method === 'POST' && (path === '/authorize' || path === '/userinfo')) return true;
  if (method === 'POST' && path === '/oauth/register') return true;
  if (/^\/oauth\/register\/[^/]+$/.test(path)) return authorization !== undefined && /^bearer\s+\S/i.test(authorization);
  // issue 36 §2: OpenFGA's HTTP API routed by --gateway-openfga-url; SDKs and the fga CLI send no Origin,
  // and with a bearer token (a preshared key or an access token) no browser cookie is what authorizes
  if (path === '/stores' || path.startsWith('/stores/')) return authorization !== undefined && /^bearer\s+\S/i.test(authorization);
  return false;
}

function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/** Same-origin for the `*` policy: the origin's host[:port] equals the request host or the `--url` host. */
function isSameOrigin(origin: ParsedOrigin, requestHost: string, url: ParsedOrigin | undefined): boolean {
  const originHost = hostPort(origin.host, origin.port, origin.scheme);
  if (requestHost !== '') {
    const req = parseOrigin(`${origin.scheme}://${requestHost}`);
    if (req && hostPort(req.host, req.port, req.scheme) === originHost) return true;
  }
  return url !== undefined && hostPort(url.host, url.port, url.scheme) === originHost;
}

/**
 * The last origin decision of one middleware (its policy and `--url` are fixed): the value that was
 * parsed (Origin, or Referer), the request host it was compared with, and the answer. Requests come
 * from the same few origins, so most repeat the last one: two string comparisons instead of parsing.
 */
export interface OriginMemo {
  value: string | undefined;
  host: string;
  ok: boolean;
}

/**
 * Decides one request: undefined when allowed, else the AppError to send.
 * @param memo the caller's last decision for the same `policy` and `url`, read and updated here
 */
export function checkCsrf(req: Request, policy: OriginPolicy, url: ParsedOrigin | undefined, memo?: OriginMemo): AppError | undefined {
  if (!STATE_CHANGING.has(req.method)) return undefined;
  if (isCsrfExempt(req.method, requestPath(req), headerValue(req.headers.authorization))) return undefined;
  const originHeader = headerValue(req.headers.origin);
  const referer = headerValue(req.headers.referer);
  if ((originHeader === undefined || originHeader.trim() === '') && (referer === undefined || referer.trim() === '')) {
    // issue 34 §7: the MCP endpoint takes bearer tokens only, never cookies, and its clients are mostly
    // not browsers; an Origin it receives is still checked (MCP Streamable HTTP: against DNS rebinding)
    if (requestPath(req) === '/mcp') return undefined;
    return new AppError('permission_denied', CSRF_MISSING_MESSAGE, { reason: 'csrf_missing_origin' });
  }
  // An Origin header wins, even `null` (which is never allowed); Referer is only the fallback.
  const value = originHeader !== undefined && originHeader.trim() !== '' ? originHeader : referer!;
  // the answer depends on the value, the request host (same-origin rule) and this middleware's fixed policy and url
  const host = policy.any ? clientInfo(req).host : '';
  let ok: boolean;
  if (memo !== undefined && memo.value === value && memo.host === host) {
    ok = memo.ok;
  } else {
    const origin = parseOrigin(value);
    ok = origin !== undefined && (policy.any ? isSameOrigin(origin, host, url) : isListedOrigin(policy, origin));
    if (memo !== undefined) {
      memo.value = value;
      memo.host = host;
      memo.ok = ok;
    }
  }
  return ok ? undefined : new AppError('permission_denied', CSRF_MISMATCH_MESSAGE, {
    reason: 'csrf_origin_mismatch',
    // the message is the spec's (behaviour.md §2.5); this header says why, for whoever debugs it
    headers: { 'X-Gatehouse-Reason': mismatchReason(value, policy.any) },
  });
}

/**
 * Why an origin was refused, naming the origin received (printable ASCII, at most 200 characters:
 * it is echoed in a header) and the flag that decides (issue 15 item 3).
 */
export function mismatchReason(value: string, anyOrigin: boolean): string {
  const shown = value.replace(/[^\x20-\x7e]/g, '?').slice(0, 200);
  return anyOrigin
    ? `origin ${shown} is not this server's own; with --allowed-origins=* only the server's origin may make state-changing calls: list your app's origin in --allowed-origins`
    : `origin ${shown} is not listed in --allowed-origins`;
}

/**
 * CSRF middleware for every POST, PUT, PATCH and DELETE on the HTTP port, bearer and admin-header
 * requests included. Refuses with 403 `permission_denied` (REST or GraphQL-shaped on /graphql).
 * Needs {@link clientIpMiddleware} earlier in the chain for the `X-Forwarded-Host` rule.
 * @param url the `--url` flag, whose host is also same-origin under `*`
 */
export function csrf(policy: OriginPolicy, url: string): RequestHandler {
  const urlOrigin = parseOrigin(url);
  const memo: OriginMemo = { value: undefined, host: '', ok: false };
  return (req, res, next) => {
    const refusal = checkCsrf(req, policy, urlOrigin, memo);
    if (refusal) sendErrorFor(req, res, refusal);
    else next();
  };
}
