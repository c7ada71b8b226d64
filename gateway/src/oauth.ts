/**
 * @module gateway/oauth
 * The OAuth 2.0 / OpenID Provider endpoints outside /v1 (issue 18): `POST /oauth/token`,
 * `GET|POST /authorize`, `POST /oauth/revoke`, `POST /oauth/introspect`, `GET|POST /userinfo` and
 * `GET|POST /logout` (the end-session endpoint), and (issue 34) RFC 7591 `POST /oauth/register` with
 * RFC 7592 `GET|PUT|DELETE /oauth/register/<client_id>`, whose JSON bodies go as they are (lists kept),
 * RFC 9126 `POST /oauth/par`, and RFC 8628 `POST /oauth/device_authorization` with the hosted page's
 * `POST /oauth/device_verification` (`/app/device`: user code, consent).
 * The gateway asserts nothing: it turns the query or
 * the form (RFC 6749 §3.2, application/x-www-form-urlencoded) or JSON body (authorizer-js) into
 * string parameters, forwards the credentials as on /v1, calls authn's RPC and writes its answer
 * (status and JSON, a 302, or an HTML page) with `Cache-Control: no-store` (RFC 6749 §5.1).
 */
import type { Express, Request, Response } from 'express';
import { toAppError, type AppError } from '@gatehouse/errors';
import type { Logger } from '@gatehouse/observability';
import { readRawBody, MAX_BODY_BYTES } from './http/body.ts';
import { sendErrorFor } from './http/errors.ts';
import { callContextOf, type ServiceClients } from './rest.ts';

type Verb = 'GET' | 'POST' | 'PUT' | 'DELETE';

/**
 * Path → RPC and the methods it takes. `json`: the body is one JSON object sent as the RPC's `params`
 * as it is; a `:resource_id` path segment goes as `resource_id`.
 */
export const OAUTH_ROUTES: readonly { path: string; rpc: string; methods: readonly Verb[]; json?: true }[] = Object.freeze([
  { path: '/oauth/token', rpc: 'OauthToken', methods: ['POST'] },
  { path: '/authorize', rpc: 'Authorize', methods: ['GET', 'POST'] },
  { path: '/oauth/revoke', rpc: 'OauthRevoke', methods: ['POST'] },
  { path: '/oauth/introspect', rpc: 'OauthIntrospect', methods: ['POST'] },
  { path: '/userinfo', rpc: 'Userinfo', methods: ['GET', 'POST'] },
  { path: '/logout', rpc: 'EndSession', methods: ['GET', 'POST'] },
  { path: '/oauth/register', rpc: 'RegisterClient', methods: ['POST'], json: true },
  { path: '/oauth/register/:resource_id', rpc: 'ManageRegisteredClient', methods: ['GET', 'PUT', 'DELETE'], json: true },
  { path: '/oauth/par', rpc: 'PushedAuthorizationRequest', methods: ['POST'] },
  { path: '/oauth/device_authorization', rpc: 'DeviceAuthorization', methods: ['POST'] },
  { path: '/oauth/device_verification', rpc: 'DeviceVerification', methods: ['POST'] },
]);

/** CSP of the pages these endpoints render (form_post auto-submit, web_message, error pages): one inline script, any form target. */
const PAGE_CSP = "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; form-action *; base-uri 'none'";

/** A parameter value as a string: arrays (a JSON `scope` list) joined by spaces, numbers and booleans as text. */
function paramString(v: unknown): string | undefined {
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  if (Array.isArray(v)) return v.filter((x) => typeof x === 'string').join(' ');
  return undefined;
}

/**
 * The request's parameters: the query, then (POST) the body, form-encoded or JSON by Content-Type
 * (JSON when the body starts with `{`). A parameter given twice keeps its first value.
 * @throws AppError `invalid_argument` for a body over 1 MiB or malformed JSON
 */
export async function oauthParams(req: Request): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  const put = (k: string, v: unknown): void => {
    const s = paramString(v);
    if (s !== undefined && !(k in out)) out[k] = s;
  };
  const url = new URL(req.url ?? '/', 'http://x');
  if (req.method === 'POST') {
    const raw = (await readRawBody(req, MAX_BODY_BYTES)).toString('utf8');
    const type = String(req.headers['content-type'] ?? '').toLowerCase();
    if (type.includes('application/json') || raw.trimStart().startsWith('{')) {
      let body: unknown = {};
      if (raw.trim() !== '') {
        try {
          body = JSON.parse(raw);
        } catch {
          body = null;
        }
      }
      if (body === null || typeof body !== 'object' || Array.isArray(body)) throw Object.assign(new Error('invalid JSON body'), { oauth: true });
      for (const [k, v] of Object.entries(body as Record<string, unknown>)) put(k, v);
    } else {
      for (const [k, v] of new URLSearchParams(raw)) put(k, v);
    }
  }
  for (const [k, v] of url.searchParams) put(k, v);
  return out;
}

/**
 * A JSON request body as one object (RFC 7591 §3.1: `application/json`); `{}` when there is none.
 * @throws Error marked `oauth` for malformed JSON or a body that is not an object; AppError over 1 MiB
 */
async function jsonObjectBody(req: Request): Promise<Record<string, unknown>> {
  if (req.method !== 'POST' && req.method !== 'PUT') return {};
  const raw = (await readRawBody(req, MAX_BODY_BYTES)).toString('utf8');
  if (raw.trim() === '') return {};
  let body: unknown;
  try {
    body = JSON.parse(raw);
  } catch {
    body = null;
  }
  if (body === null || typeof body !== 'object' || Array.isArray(body)) throw Object.assign(new Error('invalid JSON body'), { oauth: true });
  return body as Record<string, unknown>;
}

/**
 * The OAuth 2.0 error answer (RFC 6749 §5.2: `{error, error_description}`) for an AppError raised
 * outside the protocol's own checks: the contract's input rule (a control character or an over-long
 * value in a parameter: 400 `invalid_request` with the message naming it), the rate limits (429
 * `temporarily_unavailable`, §4.1.2.1), an unavailable service (503), and anything else (500
 * `server_error`, no detail).
 * @returns the HTTP status and the JSON body
 */
export function oauthErrorOf(e: AppError): { status: number; body: { error: string; error_description: string } } {
  if (e.code === 'unavailable' || e.code === 'deadline_exceeded') return { status: 503, body: { error: 'temporarily_unavailable', error_description: e.message } };
  if (e.code === 'resource_exhausted') return { status: 429, body: { error: 'temporarily_unavailable', error_description: e.message } };
  if (e.httpStatus >= 400 && e.httpStatus < 500) return { status: e.httpStatus, body: { error: 'invalid_request', error_description: e.message } };
  return { status: 500, body: { error: 'server_error', error_description: 'internal error' } };
}

/** Registers the endpoints of {@link OAUTH_ROUTES} on `app`, each other method answering 405. */
export function mountOAuthRoutes(app: Express, clients: ServiceClients, opts: { deadlineMs: number; logger: Logger }): void {
  for (const route of OAUTH_ROUTES) {
    app.all(route.path, async (req: Request, res: Response) => {
      res.setHeader('Cache-Control', 'no-store');
      res.setHeader('Pragma', 'no-cache');
      const method = req.method === 'HEAD' ? 'GET' : req.method;
      if (!(route.methods as readonly string[]).includes(method)) {
        res.setHeader('Allow', route.methods.join(', '));
        res.status(405).json({ error: 'invalid_request', error_description: 'method not allowed' });
        return;
      }
      let params: Record<string, unknown>;
      try {
        params = route.json ? await jsonObjectBody(req) : await oauthParams(req);
      } catch (err) {
        const message = (err as { oauth?: boolean }).oauth ? 'invalid JSON body' : toAppError(err).message;
        res.status(400).json({ error: 'invalid_request', error_description: message });
        return;
      }
      const ctx = callContextOf(req, 'rest', opts.deadlineMs);
      try {
        const client = clients.authn;
        if (!client) throw new Error('the authn service is not part of this deployment');
        const resourceId = typeof req.params.resource_id === 'string' ? { resource_id: req.params.resource_id } : {};
        const out = await client.call(route.rpc, { params, method, ...resourceId }, ctx) as {
          status: number; body: Record<string, unknown> | null; location?: string | null; html?: string | null; www_authenticate?: string | null; frameable?: boolean;
          dpop_nonce?: string | null; frame_src?: string | null;
        };
        if (res.headersSent) return;
        if (ctx.setCookies.length > 0) res.append('Set-Cookie', ctx.setCookies);
        if (out.www_authenticate) res.setHeader('WWW-Authenticate', out.www_authenticate);
        // RFC 9449 §8.1 / §9: the server nonce the next DPoP proof must carry
        if (out.dpop_nonce) res.setHeader('DPoP-Nonce', out.dpop_nonce);
        if (out.location) {
          res.redirect(302, out.location);
          return;
        }
        if (out.html) {
          // issue 34 §6: the end-session page frames each relying party's frontchannel_logout_uri
          const frames = (out.frame_src ?? '').split(' ').filter((o) => /^https?:\/\/[^\s;,']+$/.test(o));
          const csp = frames.length > 0 ? `${PAGE_CSP}; frame-src ${frames.join(' ')}` : PAGE_CSP;
          res.setHeader('Content-Security-Policy', out.frameable ? `${csp}; frame-ancestors *` : `${csp}; frame-ancestors 'none'`);
          res.status(out.status).type('html').send(out.html);
          return;
        }
        res.status(out.status).json(out.body ?? {});
      } catch (err) {
        const e = toAppError(err);
        if (res.headersSent) return;
        if (e.code === 'internal' || e.code === 'unimplemented') opts.logger.error({ err, route: route.path }, 'oauth request failed');
        const { status, body } = oauthErrorOf(e);
        for (const [name, value] of Object.entries(e.headers ?? {})) res.setHeader(name, value);
        res.status(status).json(body);
      }
    });
  }
}

/** RFC 8414 §3: where a client looks for the metadata of an authorization server whose issuer has no path. */
export const AUTHORIZATION_SERVER_METADATA_PATH = '/.well-known/oauth-authorization-server';

/**
 * `GET /.well-known/oauth-authorization-server` (RFC 8414 §3): the same document as
 * `/.well-known/openid-configuration` (authn's GetOpenidConfiguration, whose fields are RFC 8414 §2's
 * plus OpenID's), for OAuth clients that look there first, such as MCP clients after RFC 9728 discovery.
 */
export function mountAuthorizationServerMetadata(app: Express, clients: ServiceClients, opts: { deadlineMs: number; logger: Logger }): void {
  app.get(AUTHORIZATION_SERVER_METADATA_PATH, async (req: Request, res: Response) => {
    try {
      const client = clients.authn;
      if (!client) throw new Error('the authn service is not part of this deployment');
      res.status(200).json(await client.call('GetOpenidConfiguration', {}, callContextOf(req, 'rest', opts.deadlineMs)));
    } catch (err) {
      const e = toAppError(err);
      if (e.code === 'internal') opts.logger.error({ err }, 'authorization server metadata failed');
      sendErrorFor(req, res, e);
    }
  });
}
