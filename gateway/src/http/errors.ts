/** @module gateway/http/errors Renders AppErrors as REST `{code, message}` or GraphQL-shaped bodies (behaviour.md §0.1, §0.2; graphql.md §1.1 O4). */
import type { ErrorRequestHandler, Request, Response } from 'express';
import { AppError, graphqlCodeOf, toAppError } from '@gatehouse/errors';
import type { Logger } from '@gatehouse/observability';
import { requestPath } from './request-path.ts';

/** True for the GraphQL endpoint, whose HTTP-layer refusals use a GraphQL-shaped body (graphql.md §1.1). */
export function isGraphqlPath(path: string): boolean {
  return path === '/graphql' || path === '/graphql/';
}

/** The REST error body (spec §7): exactly `{code, message}`. */
export function restErrorBody(err: AppError): { code: string; message: string } {
  return { code: err.code, message: err.message };
}

/** The GraphQL-shaped refusal body: `{"errors":[{"message","extensions":{"code": UPPER}}]}` (graphql.md D2, O4). */
export function graphqlErrorBody(err: AppError): { errors: { message: string; extensions: { code: string } }[] } {
  return { errors: [{ message: err.message, extensions: { code: graphqlCodeOf(err.code) } }] };
}

/**
 * Writes `err` with its status from the one table (@gatehouse/errors) plus `err.headers`
 * (for example `Retry-After`). With `graphql: true` the body is GraphQL-shaped with the same status.
 * Does nothing but end the response when headers were already sent (a late error after a deadline reply).
 */
export function sendError(res: Response, err: AppError, options: { graphql: boolean }): void {
  if (res.headersSent) {
    if (!res.writableEnded) res.end();
    return;
  }
  const body = options.graphql ? graphqlErrorBody(err) : restErrorBody(err);
  for (const [name, value] of Object.entries(err.headers ?? {})) res.setHeader(name, value);
  res.statusCode = err.httpStatus;
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Cache-Control', 'no-store');
  res.end(JSON.stringify(body));
}

/** {@link sendError} choosing the body shape from the request path. */
export function sendErrorFor(req: Request, res: Response, err: AppError): void {
  sendError(res, err, { graphql: isGraphqlPath(requestPath(req)) });
}

/** Maps the well-known errors of Express's own body parsers (http-errors `type`) onto the spec's messages. */
function fromExpressError(err: unknown): AppError | undefined {
  if (typeof err !== 'object' || err === null) return undefined;
  const type = (err as { type?: unknown }).type;
  if (type === 'entity.too.large') return new AppError('invalid_argument', 'request body too large', { cause: err });
  if (type === 'entity.parse.failed' || type === 'charset.unsupported' || type === 'encoding.unsupported') {
    return new AppError('invalid_argument', 'invalid JSON body', { cause: err });
  }
  return undefined;
}

/**
 * The last Express error handler: converts anything thrown to an AppError and renders it.
 * Non-AppErrors become 500 `internal` `internal error` (behaviour.md §0.2) and are logged once, here,
 * at `error`; AppErrors with a 5xx status are logged at `error`, 4xx at `debug` (STYLE §6).
 */
export function createErrorHandler(logger: Logger): ErrorRequestHandler {
  return (err: unknown, req, res, _next) => {
    const appErr = err instanceof AppError ? err : (fromExpressError(err) ?? toAppError(err));
    const fields = { method: req.method, path: requestPath(req), code: appErr.code, reason: appErr.reason };
    if (!(err instanceof AppError) && appErr.code === 'internal') {
      logger.error({ ...fields, err }, 'unhandled error');
    } else if (appErr.httpStatus >= 500) {
      logger.error({ ...fields, err: appErr.cause }, 'request failed');
    } else {
      logger.debug(fields, 'request refused');
    }
    sendErrorFor(req, res, appErr);
  };
}
