/**
 * @module gateway/login-redirect
 * Routes that end a browser login with a 302 (behaviour.md §3.4 `GET /verify_email`; issue 20: the
 * social callbacks `/oauth_callback/<provider>` and the org SSO/SAML callbacks). The gateway asserts
 * nothing: it hands the request's parameters to the owning service's RPC, which verifies the
 * upstream answer and ends in authn's session issuance (docs/architecture.md §7), and answers 302 to
 * the `redirect_url` the RPC returns, with the cookies the call set (session cookies, or mfa's `mfa`
 * cookie when the MFA gate stepped in).
 */
import type express from 'express';
import { AppError, toAppError } from '@gatehouse/errors';
import type { Logger } from '@gatehouse/observability';
import { oauthParams } from './oauth.ts';
import { callContextOf, type ServiceClients } from './rest.ts';
import type { ServiceName } from './routes/table.ts';

/** Which RPC a redirecting route calls, and how its request is built. */
export interface LoginRedirectCall {
  /** the owning service (`authn`, `orgs`) */
  service: ServiceName;
  /** an RPC of its public API answering `{ redirect_url }` (a refusal is a redirect, not an error) */
  rpc: string;
  /**
   * The RPC request from the HTTP parameters: the query, then a POST's form or JSON body (a name given
   * twice keeps its first value), and the Express request (route parameters such as `:provider`).
   */
  request(params: Record<string, string>, req: express.Request): Record<string, unknown>;
}

/**
 * A GET (and POST, for form_post callbacks) handler answering 302 to the RPC's `redirect_url` with the
 * cookies it set and `Cache-Control: no-store`. When the RPC cannot answer (the service is absent or
 * unreachable, a malformed body), it redirects to `<url>/app?error=<code>&error_description=<message>`:
 * the login's own `redirect_uri` is known only to the service. A HEAD request answers 200 without
 * calling anything (link checkers and prefetchers must not burn a single-use token or code).
 * @param opts `url` is `--url` (the fallback target), `deadlineMs` the per-call deadline
 */
export function loginRedirectRoute(clients: ServiceClients, opts: { url: string; deadlineMs: number }, logger: Logger, call: LoginRedirectCall): express.RequestHandler {
  return async (req, res) => {
    res.setHeader('Cache-Control', 'no-store');
    if (req.method === 'HEAD') {
      res.status(200).end();
      return;
    }
    const ctx = callContextOf(req, 'rest', opts.deadlineMs);
    let location: string;
    try {
      const client = clients[call.service];
      if (!client) throw new AppError('unimplemented', `the ${call.service} service is not part of this deployment`);
      let params: Record<string, string>;
      try {
        params = await oauthParams(req);
      } catch (err) {
        throw (err as { oauth?: boolean }).oauth ? new AppError('invalid_argument', 'invalid JSON body') : err;
      }
      const out = await client.call(call.rpc, call.request(params, req), ctx);
      location = String(out.redirect_url);
    } catch (err) {
      const e = toAppError(err);
      if (e.code === 'internal') logger.error({ err, path: req.path }, 'login redirect failed');
      const u = new URL(`${opts.url.replace(/\/+$/, '')}/app`);
      u.searchParams.set('error', e.code);
      u.searchParams.set('error_description', e.message);
      location = u.toString();
    }
    if (ctx.setCookies.length > 0) res.append('Set-Cookie', ctx.setCookies);
    res.redirect(302, location);
  };
}

/** The named parameters of `params` that are present. */
export function pickParams(params: Record<string, string>, names: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const k of names) if (params[k] !== undefined) out[k] = params[k];
  return out;
}
