/** @module gateway/http/request-path The full request path, independent of where a middleware is mounted. */
import type { Request } from 'express';

/** The URL path of `req` without the query string, as the client sent it (`req.originalUrl`). */
export function requestPath(req: Request): string {
  const url = req.originalUrl || req.url;
  const q = url.indexOf('?');
  return q === -1 ? url : url.slice(0, q);
}
