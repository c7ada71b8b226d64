/**
 * @module gateway/scim
 * `<url>/scim/v2/*` (behaviour.md §6.4): the SCIM 2.0 server of the orgs service, reached through its
 * public RPC `ScimRequest` (method, path below /scim/v2, raw query and body; the Authorization header
 * travels with the call). The answer is written as SCIM wants it: the status, `application/scim+json`
 * (RFC 7644 §3.1), `Location` on a 201 and `ETag` on an answer about one resource (§3.14; `If-Match` and
 * `If-None-Match` travel with the call like Authorization). The HTTP layer ran first (CSRF exempts SCIM requests that
 * carry `Authorization: Bearer`, behaviour.md §2.5); bodies are read raw here, up to 1 MiB.
 */
import type express from 'express';
import { AppError, toAppError } from '@gatehouse/errors';
import type { Logger } from '@gatehouse/observability';
import { MAX_BODY_BYTES, readRawBody, requestPath } from './http/index.ts';
import { callContextOf, type ServiceClients } from './rest.ts';

export const SCIM_MEDIA_TYPE = 'application/scim+json';
const ERROR_SCHEMA = 'urn:ietf:params:scim:api:messages:2.0:Error';

function sendScim(res: express.Response, status: number, body: string, location = '', etag = ''): void {
  if (res.headersSent) return;
  res.status(status);
  if (location) res.setHeader('Location', location);
  // RFC 7644 §3.14: the version of the resource the answer is about (also on a 304)
  if (etag) res.setHeader('ETag', etag);
  res.setHeader('Cache-Control', 'no-store');
  // RFC 7644 §2 / RFC 7235 §3.1: a 401 names the scheme the client must use (RFC 6750 §3)
  if (status === 401) res.setHeader('WWW-Authenticate', 'Bearer realm="scim"');
  if (status === 204 || status === 304 || body === '') {
    res.end();
    return;
  }
  res.setHeader('Content-Type', `${SCIM_MEDIA_TYPE}; charset=utf-8`);
  res.end(body);
}

/** A SCIM error body (RFC 7644 §3.12) for a refusal made here, before orgs answered. */
const scimError = (status: number, detail: string, scimType?: string): string =>
  JSON.stringify({ schemas: [ERROR_SCHEMA], status: String(status), ...(scimType ? { scimType } : {}), detail });

const HTTP_OF: Partial<Record<AppError['code'], number>> = { invalid_argument: 400, unavailable: 503, deadline_exceeded: 504, cancelled: 499, unimplemented: 501 };

/** Mounts `/scim/v2` and everything below it on `app`. */
export function mountScim(app: express.Express, clients: ServiceClients, opts: { deadlineMs: number; logger: Logger }): void {
  const handler: express.RequestHandler = async (req, res) => {
    const ctx = callContextOf(req, 'rest', opts.deadlineMs);
    try {
      const method = req.method.toUpperCase();
      const hasBody = method === 'POST' || method === 'PUT' || method === 'PATCH';
      const raw = hasBody ? await readRawBody(req, MAX_BODY_BYTES) : Buffer.alloc(0);
      if (!clients.orgs) throw new AppError('unimplemented', 'the orgs service is not part of this deployment');
      const url = req.originalUrl;
      const q = url.indexOf('?');
      const pathname = q === -1 ? url : url.slice(0, q);
      const out = await clients.orgs.call('ScimRequest', {
        method, path: pathname.replace(/^.*?\/scim\/v2/, ''), query: q === -1 ? '' : url.slice(q + 1), body: raw.toString('utf8'),
      }, ctx);
      sendScim(res, Number(out['status']), String(out['body'] ?? ''), String(out['location'] ?? ''), String(out['etag'] ?? ''));
    } catch (err) {
      const e = toAppError(err);
      if (e.code === 'internal') opts.logger.error({ err }, 'scim request failed');
      const status = HTTP_OF[e.code] ?? 500;
      if (e.code === 'cancelled') {
        res.destroy();
        return;
      }
      const detail = status === 500 ? 'internal error' : e.message;
      sendScim(res, status, scimError(status, detail, status === 400 ? 'invalidSyntax' : undefined));
    }
  };
  // a plain middleware, not a route pattern: Express would decode path parameters and answer a
  // malformed escape with its own error; the SCIM server decodes segments itself (404 when it cannot)
  app.use((req, res, next) => {
    const path = requestPath(req);
    if (path === '/scim/v2' || path.startsWith('/scim/v2/')) void handler(req, res, next);
    else next();
  });
}
