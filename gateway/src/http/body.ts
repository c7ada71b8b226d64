/** @module gateway/http/body JSON bodies on /v1 and /graphql whatever the Content-Type (behaviour.md §0.1, §10; graphql.md §1.1). */
import type { Request, RequestHandler } from 'express';
import { AppError } from '@gatehouse/errors';
import { isGraphqlPath, sendErrorFor } from './errors.ts';
import { requestPath } from './request-path.ts';

/** 1 MiB (behaviour.md §10 "request body 1 MiB"). */
export const MAX_BODY_BYTES = 1024 * 1024;
/**
 * A refused body whose declared Content-Length is at most this many bytes (8 MiB) is read to its end and
 * discarded, so the connection stays open and the client can read the refusal; above it, or when the
 * length is not declared (chunked), the refusal closes the connection instead.
 */
export const MAX_DRAIN_BYTES = 8 * 1024 * 1024;
export const INVALID_JSON_MESSAGE = 'invalid JSON body';
export const BODY_TOO_LARGE_MESSAGE = 'request body too large';

const tooLarge = (): AppError => new AppError('invalid_argument', BODY_TOO_LARGE_MESSAGE, { reason: 'body_too_large' });
const invalidJson = (cause?: unknown): AppError =>
  new AppError('invalid_argument', INVALID_JSON_MESSAGE, { reason: 'invalid_json', cause });

const NOT_BLANK = /\S/;

/**
 * Parses `text` as a request body. Empty (or whitespace-only) → `{}`. With `objectOnly`, anything
 * but a JSON object (array, string, number, boolean, null) is refused.
 * @throws AppError `invalid_argument` `invalid JSON body`
 */
export function parseJsonBody(text: string, objectOnly: boolean): unknown {
  const t = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  // what trim() removes is what \s matches: this finds the first other character without copying the body
  if (!NOT_BLANK.test(t)) return {};
  let value: unknown;
  try {
    value = JSON.parse(t);
  } catch (err) {
    throw invalidJson(err);
  }
  if (objectOnly && (typeof value !== 'object' || value === null || Array.isArray(value))) throw invalidJson();
  return value;
}

/** Reads the raw body up to `limit` bytes; rejects with `request body too large` past it. */
export function readRawBody(req: Request, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers['content-length']);
    if (Number.isFinite(declared) && declared > limit) {
      req.resume(); // discard what the client is still sending so it can read the refusal
      reject(tooLarge());
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    const finish = (err: AppError | undefined, buf?: Buffer): void => {
      if (done) return;
      done = true;
      req.off('data', onData).off('end', onEnd).off('error', onError).off('aborted', onAborted);
      if (err) reject(err);
      else resolve(buf ?? Buffer.alloc(0));
    };
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size > limit) {
        finish(tooLarge());
        req.resume(); // keep draining (discarded): no listener holds the data any more
      } else {
        chunks.push(chunk);
      }
    };
    const onEnd = (): void => finish(undefined, chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size));
    const onError = (err: unknown): void => finish(new AppError('cancelled', 'request cancelled', { cause: err }));
    const onAborted = (): void => finish(new AppError('cancelled', 'request cancelled'));
    req.on('data', onData).on('end', onEnd).on('error', onError).on('aborted', onAborted);
  });
}

function appliesTo(path: string): 'v1' | 'graphql' | undefined {
  if (path === '/v1' || path.startsWith('/v1/')) return 'v1';
  if (isGraphqlPath(path)) return 'graphql';
  return undefined;
}

/**
 * Body middleware for `/v1/*` and `/graphql`: reads the body as UTF-8 JSON regardless of
 * Content-Type and sets `req.body`. `/v1` bodies must be JSON objects (the request fields at top
 * level, spec §1); `/graphql` bodies are left to the GraphQL server to validate. GET/HEAD on /v1 get
 * `{}`. Refusals: 400 `invalid_argument` `invalid JSON body` / `request body too large` (GraphQL-shaped
 * on /graphql). A body too large whose declared length is at most {@link MAX_DRAIN_BYTES} is read and
 * discarded, keeping the connection; a larger or chunked one is answered with `Connection: close`.
 */
export function jsonBody(options: { limitBytes?: number } = {}): RequestHandler {
  const limit = options.limitBytes ?? MAX_BODY_BYTES;
  return (req, res, next) => {
    const kind = appliesTo(requestPath(req));
    if (kind === undefined || req.body !== undefined) {
      next();
      return;
    }
    if (req.method === 'GET' || req.method === 'HEAD' || req.method === 'OPTIONS') {
      req.body = {};
      next();
      return;
    }
    readRawBody(req, limit).then(
      (buf) => {
        if (res.headersSent) return; // the deadline answered while the body was arriving
        try {
          req.body = parseJsonBody(buf.toString('utf8'), kind === 'v1');
        } catch (err) {
          sendErrorFor(req, res, err as AppError);
          return;
        }
        next();
      },
      (err: AppError) => {
        if (err.code === 'cancelled') {
          res.destroy();
          return;
        }
        if (res.headersSent) return;
        // Closing while the client still uploads can reset the connection before it reads the answer
        // (EPIPE in the client): a body of a known, bounded length is drained instead (readRawBody resumed it).
        const declared = Number(req.headers['content-length']);
        if (!(Number.isFinite(declared) && declared <= MAX_DRAIN_BYTES)) res.setHeader('Connection', 'close');
        sendErrorFor(req, res, err);
      },
    );
  };
}
