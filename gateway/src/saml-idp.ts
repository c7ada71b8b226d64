/**
 * @module gateway/saml-idp
 * The SAML identity provider's browser endpoints (behaviour.md §5.9; issue 20 extension routes):
 * `GET <url>/oauth/saml/<org name>/idp/metadata`, `GET|POST <url>/oauth/saml/<org name>/idp/sso` and
 * (issue 31, Single Logout) `GET|POST <url>/oauth/saml/<org name>/idp/slo`,
 * forwarded to the orgs service's public RPC `SamlIdpRequest` (organization name, endpoint, method,
 * raw query and, for POST, the raw form body up to 1 MiB; the session cookie travels with the call).
 * The answer is written as given: XML metadata, an HTML page (the auto-submitting POST to the SP's
 * ACS, or a refusal) or a 302 to the hosted login page, always `Cache-Control: no-store`. The paths
 * sit under `/idp/` so they never meet the org SSO routes (`/oauth/saml/<org>/metadata|login|acs`).
 */
import type express from 'express';
import { AppError, toAppError } from '@gatehouse/errors';
import type { Logger } from '@gatehouse/observability';
import { MAX_BODY_BYTES, readRawBody } from './http/index.ts';
import { callContextOf, type ServiceClients } from './rest.ts';

/** CSP of the pages: the one inline auto-submit script, a form POST to the SP's ACS (any origin). */
const PAGE_CSP = "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; form-action *; base-uri 'none'; frame-ancestors 'none'";

const escapeHtml = (s: string): string => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/** Mounts the two endpoints on `app`. */
export function mountSamlIdp(app: express.Express, clients: ServiceClients, opts: { deadlineMs: number; logger: Logger }): void {
  app.all('/oauth/saml/:org/idp/:endpoint', async (req, res) => {
    res.setHeader('Cache-Control', 'no-store');
    const endpoint = String(req.params['endpoint']);
    if (endpoint !== 'metadata' && endpoint !== 'sso' && endpoint !== 'slo') {
      res.status(404).type('text/plain').send('Not Found');
      return;
    }
    const method = req.method === 'HEAD' ? 'GET' : req.method.toUpperCase();
    const ctx = callContextOf(req, 'rest', opts.deadlineMs);
    try {
      const body = method === 'POST' ? (await readRawBody(req, MAX_BODY_BYTES)).toString('utf8') : '';
      if (!clients.orgs) throw new AppError('unimplemented', 'the orgs service is not part of this deployment');
      const url = req.originalUrl;
      const q = url.indexOf('?');
      const out = await clients.orgs.call('SamlIdpRequest', {
        org: String(req.params['org']), endpoint, method, query: q === -1 ? '' : url.slice(q + 1), body,
      }, ctx) as { status: number; content_type: string; body: string; location?: string | null };
      if (res.headersSent) return;
      if (ctx.setCookies.length > 0) res.append('Set-Cookie', ctx.setCookies);
      if (out.location) {
        res.redirect(302, out.location);
        return;
      }
      if (out.content_type.startsWith('text/html')) res.setHeader('Content-Security-Policy', PAGE_CSP);
      res.status(out.status).setHeader('Content-Type', out.content_type);
      res.end(out.body);
    } catch (err) {
      const e = toAppError(err);
      if (res.headersSent) return;
      if (e.code === 'internal' || e.code === 'unimplemented') opts.logger.error({ err, path: req.path }, 'saml idp request failed');
      const status = e.code === 'invalid_argument' ? 400 : e.code === 'unavailable' || e.code === 'deadline_exceeded' ? 503 : 500;
      const message = status === 500 ? 'internal error' : e.message;
      res.status(status).setHeader('Content-Security-Policy', PAGE_CSP);
      res.type('html').send(`<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Single sign-on failed</title></head><body><h1>Single sign-on failed</h1><p>${escapeHtml(message)}</p></body></html>`);
    }
  });
}
