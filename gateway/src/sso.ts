/**
 * @module gateway/sso
 * Organization SSO in the browser (behaviour.md §6.3, issue 20): `GET /oauth/sso/<org>/login|callback`
 * (OIDC), `GET /oauth/saml/<org>/metadata|login` and `POST /oauth/saml/<org>/acs` (SAML SP; the ACS is
 * CSRF-exempt, §2.5), SP-initiated Single Logout (`GET /oauth/saml/<org>/logout` answers a confirmation
 * page whose button POSTs to the same path; the POST, Origin-checked like every state change (§2.5), first
 * ends the Gatehouse session through authn's `Logout`), our SingleLogoutService `GET /oauth/saml/<org>/slo`,
 * and org discovery (`GET /api/v1/org-discovery?email=` and the redirecting
 * `GET /oauth/sso/discover`, both answering 404 unless `--enable-org-discovery`). The gateway asserts
 * nothing: it turns the query or the form into string parameters and calls the orgs service's public
 * RPC `SsoRequest`, then writes its answer (a 302 with authn's cookies, the SP metadata XML, or a JSON
 * error) with `Cache-Control: no-store`.
 *
 * A refused browser step (the logins, the OIDC callback, the SAML ACS, the discovery redirect) asked
 * for by a browser (`Accept` prefers `text/html`) lands on the hosted app's error screen when the app
 * is served (`--enable-login-page`): `303 <url>/app/error?code=<code>&message=<message>` (issue 31 §1),
 * so the user reads what happened instead of a JSON body. Other clients get the JSON error.
 */
import type { Express, Request, Response } from 'express';
import { AppError, httpStatusOf, toAppError } from '@gatehouse/errors';
import type { Logger } from '@gatehouse/observability';
import { oauthParams } from './oauth.ts';
import { callContextOf, type ServiceClients } from './rest.ts';

/** Path pattern → SsoRequest action, and the one method it takes. */
const SSO_ROUTES: readonly { path: string; action: string; method: 'GET' | 'POST' }[] = Object.freeze([
  { path: '/api/v1/org-discovery', action: 'discover', method: 'GET' },
  { path: '/oauth/sso/discover', action: 'discover_login', method: 'GET' },
  { path: '/oauth/sso/:org/login', action: 'oidc_login', method: 'GET' },
  { path: '/oauth/sso/:org/callback', action: 'oidc_callback', method: 'GET' },
  { path: '/oauth/saml/:org/metadata', action: 'saml_metadata', method: 'GET' },
  { path: '/oauth/saml/:org/login', action: 'saml_login', method: 'GET' },
  { path: '/oauth/saml/:org/acs', action: 'saml_acs', method: 'POST' },
  // a GET never signs anyone out (a cross-site link or <img> could): it asks, and the POST does it
  { path: '/oauth/saml/:org/logout', action: 'saml_logout_confirm', method: 'GET' },
  { path: '/oauth/saml/:org/logout', action: 'saml_logout', method: 'POST' },
  { path: '/oauth/saml/:org/slo', action: 'saml_slo', method: 'GET' },
]);

const FORM_CSP = "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; form-action *; base-uri 'none'; frame-ancestors 'none'";

/** The actions a browser navigates to (a form post or a redirect), whose refusals a person reads. */
const BROWSER_ACTIONS: ReadonlySet<string> = new Set(['discover_login', 'oidc_login', 'oidc_callback', 'saml_login', 'saml_acs', 'saml_logout_confirm', 'saml_logout', 'saml_slo']);

/**
 * `303` to the hosted app's error screen with the refusal's code and message, when `errorPage` is set,
 * the action is a browser step and the request prefers HTML. @returns whether it answered
 */
function toErrorPage(req: Request, res: Response, action: string, errorPage: string | null, code: string, message: string): boolean {
  if (!errorPage || !BROWSER_ACTIONS.has(action) || res.headersSent) return false;
  if (req.accepts(['application/json', 'text/html']) !== 'text/html') return false;
  res.redirect(303, `${errorPage}?${new URLSearchParams({ code, message }).toString()}`);
  return true;
}

/** The `{code, message}` of an orgs JSON error answer (null when the body is not one). */
function errorOf(body: string): { code: string; message: string } | null {
  try {
    const parsed = JSON.parse(body) as { code?: unknown; message?: unknown };
    return typeof parsed.code === 'string' && typeof parsed.message === 'string' ? { code: parsed.code, message: parsed.message } : null;
  } catch {
    return null;
  }
}

function sendError(res: Response, e: AppError): void {
  if (res.headersSent) return;
  res.status(httpStatusOf(e.code)).json({ code: e.code, message: e.code === 'internal' ? 'internal error' : e.message });
}

/**
 * Registers the routes of {@link SSO_ROUTES}; another method answers 405.
 * @param opts.errorPage the hosted app's error screen (`<url>/app/error`), null when the app is not served
 */
export function mountSso(app: Express, clients: ServiceClients, opts: { deadlineMs: number; logger: Logger; errorPage?: string | null }): void {
  const errorPage = opts.errorPage ?? null;
  const byPath = new Map<string, Array<(typeof SSO_ROUTES)[number]>>();
  for (const route of SSO_ROUTES) byPath.set(route.path, [...(byPath.get(route.path) ?? []), route]);
  for (const [path, routes] of byPath) {
    app.all(path, async (req: Request, res: Response) => {
      res.setHeader('Cache-Control', 'no-store');
      const method = req.method === 'HEAD' ? 'GET' : req.method;
      const route = routes.find((r) => r.method === method);
      if (!route) {
        res.setHeader('Allow', routes.map((r) => r.method).join(', '));
        sendError(res, new AppError('method_not_allowed', 'Method Not Allowed'));
        return;
      }
      const ctx = callContextOf(req, 'rest', opts.deadlineMs);
      try {
        let params: Record<string, string>;
        try {
          params = await oauthParams(req);
        } catch (err) {
          throw (err as { oauth?: boolean }).oauth ? new AppError('invalid_argument', 'invalid JSON body') : err;
        }
        if (!clients.orgs) throw new AppError('unimplemented', 'the orgs service is not part of this deployment');
        const org = typeof req.params['org'] === 'string' ? req.params['org'] : '';
        // the LogoutResponse's signature covers the query as sent (SAML Bindings §3.4.4.1)
        if (route.action === 'saml_slo') params['__raw_query'] = req.originalUrl.includes('?') ? req.originalUrl.slice(req.originalUrl.indexOf('?') + 1) : '';
        // SP-initiated Single Logout ends the Gatehouse session first (authn's Logout clears its cookies)
        if (route.action === 'saml_logout' && clients.authn) {
          await clients.authn.call('Logout', {}, ctx).catch((err: unknown) => { opts.logger.debug({ err }, 'no Gatehouse session to end before SAML logout'); });
        }
        const out = await clients.orgs.call('SsoRequest', { action: route.action, org, params }, ctx) as {
          status: number; location?: string | null; body: string; content_type: string;
        };
        if (res.headersSent) return;
        if (ctx.setCookies.length > 0) res.append('Set-Cookie', ctx.setCookies);
        if (out.location) {
          res.redirect(302, out.location);
          return;
        }
        const refused = out.status >= 400 ? errorOf(out.body) : null;
        if (refused && toErrorPage(req, res, route.action, errorPage, refused.code, refused.message)) return;
        // the SAML HTTP-POST AuthnRequest: an auto-submitting form (its one inline script, posting anywhere)
        if (out.content_type.startsWith('text/html')) res.setHeader('Content-Security-Policy', FORM_CSP);
        res.status(out.status).type(out.content_type || 'application/json').send(out.body);
      } catch (err) {
        const e = toAppError(err);
        if (e.code === 'cancelled') {
          res.destroy();
          return;
        }
        if (e.code === 'internal') opts.logger.error({ err, route: route.path }, 'sso request failed');
        if (toErrorPage(req, res, route.action, errorPage, e.code, e.code === 'internal' ? 'internal error' : e.message)) return;
        sendError(res, e);
      }
    });
  }
}
