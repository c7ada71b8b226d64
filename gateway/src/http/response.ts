/**
 * @module gateway/http/response
 * The gateway server's ServerResponse. Headers that the HTTP layer adds to every response (the
 * security headers of behaviour.md §2.5, CORS) are kept as a list and written with the status line
 * in one `writeHead` call, instead of one `setHeader` call each: a `setHeader` validates the name and
 * value, lower-cases the name and keeps both in a per-response header map that `writeHead` then walks
 * again. On the /v1 fast path, where a successful answer needs no `setHeader` at all, that saves about
 * 5 µs of the gateway's ~30–35 µs of own work per check_permissions call (pipeline-bench.ts).
 */
import http, { type IncomingMessage, type OutgoingHttpHeader, type OutgoingHttpHeaders, ServerResponse } from 'node:http';

type HeaderList = OutgoingHttpHeaders | OutgoingHttpHeader[];

/** `[[name, value], ...]` (a form writeHead accepts) as the flat `[name, value, ...]`; any other list as is. */
function flatten(h: HeaderList | undefined): HeaderList | undefined {
  if (!Array.isArray(h) || h.length === 0 || !Array.isArray(h[0])) return h;
  const flat: OutgoingHttpHeader[] = [];
  for (const pair of h as unknown as OutgoingHttpHeader[][]) flat.push(...pair);
  return flat;
}

/**
 * A ServerResponse whose {@link GatewayResponse.deferHeaders} headers are written with the status line.
 * The result on the wire is what `setHeader` calls made when the headers were deferred would give:
 * a deferred header replaces one set before it, and a header set with `setHeader` (or passed to
 * `writeHead`) later replaces a deferred one of the same name. Until the headers are written, `getHeader` does not see deferred headers.
 * Express replaces the prototype of the responses it handles: there `deferHeaders` does not exist,
 * and {@link addResponseHeaders} falls back to `setHeader`.
 */
export class GatewayResponse<Req extends IncomingMessage = IncomingMessage> extends ServerResponse<Req> {
  /** deferred headers, flat; null when none */
  #deferred: string[] | null = null;
  /** true once anything went through setHeader/appendHeader: the header map is in use */
  #mapped = false;

  /**
   * Adds flat `[name, value, ...]` pairs to the headers written with the status line. Once the header
   * map is in use there is nothing to save: they are set at once, so they replace earlier ones.
   */
  deferHeaders(pairs: readonly string[]): void {
    if (this.#mapped) {
      for (let i = 0; i < pairs.length; i += 2) super.setHeader(pairs[i]!, pairs[i + 1]!);
      return;
    }
    if (this.#deferred === null) this.#deferred = pairs.slice();
    else for (const p of pairs) this.#deferred.push(p);
  }

  override setHeader(name: string, value: number | string | readonly string[]): this {
    this.#mapped = true;
    return super.setHeader(name, value);
  }

  override appendHeader(name: string, value: string | readonly string[]): this {
    this.#mapped = true;
    return super.appendHeader(name, value);
  }

  override writeHead(statusCode: number, reasonOrHeaders?: string | HeaderList, maybeHeaders?: HeaderList): this {
    const deferred = this.#deferred;
    const reason = typeof reasonOrHeaders === 'string' ? reasonOrHeaders : undefined;
    if (deferred === null) {
      const given = typeof reasonOrHeaders === 'string' ? maybeHeaders : reasonOrHeaders;
      return reason === undefined ? super.writeHead(statusCode, given) : super.writeHead(statusCode, reason, given);
    }
    this.#deferred = null;
    const headers = flatten(typeof reasonOrHeaders === 'string' ? maybeHeaders : reasonOrHeaders);
    if (!this.#mapped && (headers === undefined || Array.isArray(headers))) {
      // one list for node:http to validate and write: the deferred headers that `headers` does not replace
      let all: OutgoingHttpHeader[] = deferred;
      if (headers !== undefined && headers.length > 0) {
        const given: string[] = [];
        for (let i = 0; i < headers.length; i += 2) given.push(String(headers[i]).toLowerCase());
        all = [];
        for (let i = 0; i < deferred.length; i += 2) {
          const name = deferred[i]!;
          // compare lengths first: the lower-cased copy is made only for a possible match
          if (!given.some((g) => g.length === name.length && g === name.toLowerCase())) all.push(name, deferred[i + 1]!);
        }
        for (const h of headers) all.push(h);
      }
      return reason === undefined ? super.writeHead(statusCode, all) : super.writeHead(statusCode, reason, all);
    }
    for (let i = 0; i < deferred.length; i += 2) {
      if (!super.hasHeader(deferred[i]!)) super.setHeader(deferred[i]!, deferred[i + 1]!);
    }
    return reason === undefined ? super.writeHead(statusCode, headers) : super.writeHead(statusCode, reason, headers);
  }
}

/**
 * Adds flat `[name, value, ...]` headers to `res`: deferred to the status line on a
 * {@link GatewayResponse}, through `setHeader` on any other response (Express's, a test's).
 */
export function addResponseHeaders(res: ServerResponse, pairs: readonly string[]): void {
  if (res instanceof GatewayResponse) {
    res.deferHeaders(pairs);
    return;
  }
  for (let i = 0; i < pairs.length; i += 2) res.setHeader(pairs[i]!, pairs[i + 1]!);
}

/** Responses waiting for the end of the turn, flat: response, status, headers, body. */
let queued: unknown[] = [];
let flushScheduled = false;

/**
 * Sends `statusCode`, `headers` (flat `[name, value, ...]`) and `body` once the I/O callbacks of the
 * current event-loop turn have run (`setImmediate`), together with every other answer queued in the
 * turn. Under load, a turn handles the requests of many connections: their answers then go out back to
 * back instead of one between each request's work. The peer (a load balancer, an ingress proxy, a
 * client) is then woken once for the burst, not once per answer, and each `write` costs this process
 * less kernel time. With one request per turn, it adds only the `setImmediate` hop. A response that
 * was answered meanwhile (the deadline's 504) or whose client went away is skipped.
 */
export function endAtTurnEnd(res: ServerResponse, statusCode: number, headers: OutgoingHttpHeader[], body: string): void {
  queued.push(res, statusCode, headers, body);
  if (!flushScheduled) {
    flushScheduled = true;
    setImmediate(flushQueued);
  }
}

function flushQueued(): void {
  flushScheduled = false;
  const q = queued;
  queued = [];
  for (let i = 0; i < q.length; i += 4) {
    const res = q[i] as ServerResponse;
    if (res.headersSent || res.destroyed) continue;
    try {
      res.writeHead(q[i + 1] as number, q[i + 2] as OutgoingHttpHeader[]);
      res.end(q[i + 3] as string);
    } catch (err) {
      res.destroy(err as Error); // one bad answer must not hold back the others
    }
  }
}

/** `http.createServer` with {@link GatewayResponse} as its responses. */
export function createGatewayServer(listener: http.RequestListener): http.Server {
  return http.createServer({ ServerResponse: GatewayResponse }, listener);
}
