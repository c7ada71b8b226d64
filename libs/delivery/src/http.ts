/**
 * @module @gatehouse/delivery/http
 * One guarded outbound POST (behaviour.md §5.4 delivery and `test_endpoint`, §5.6): undici with a
 * per-request dispatcher whose `connect.lookup` resolves the host, refuses §5.6 addresses, and hands
 * the socket exactly the address it checked, so a name that re-resolves between the check and the
 * connection (DNS rebinding) cannot reach a refused address. Redirects are never followed; each
 * request has one overall timeout; only the first 64 KiB of the response body are kept.
 */
import type { LookupAddress, LookupOptions } from 'node:dns';
import ipaddr from 'ipaddr.js';
import { hostOf, isRefusedAddress, parseEndpoint, PRIVATE_TARGET_REASON, systemResolver, type HostResolver } from './guard.ts';

/** Stored and returned response bodies are cut here (behaviour.md §10 sizes). */
export const MAX_RESPONSE_BYTES = 64 * 1024;
/** §5.4: each attempt and `test_endpoint` time out after 10 s. */
export const OUTBOUND_TIMEOUT_MS = 10_000;

/** Why an outbound POST got no HTTP response. */
export class OutboundError extends Error {
  /** `ssrf`: refused by §5.6 (never retried); `transport`: connection, DNS, TLS or timeout */
  readonly kind: 'ssrf' | 'transport';
  constructor(kind: 'ssrf' | 'transport', message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.kind = kind;
    this.name = 'OutboundError';
  }
}

export interface OutboundPost {
  url: string;
  headers: Record<string, string>;
  /** the exact body bytes, as UTF-8 text */
  body: string;
  /** `--allow-private-webhook-targets` */
  allowPrivate: boolean;
  timeoutMs?: number;
  /** name resolution (default: the system resolver); tests pass their own */
  resolve?: HostResolver;
}

export interface OutboundResponse {
  /** the HTTP status */
  status: number;
  /** the first 64 KiB of the body, as UTF-8 text */
  body: string;
}

const ssrf = (): OutboundError => new OutboundError('ssrf', `SSRF validation failed: ${PRIVATE_TARGET_REASON}`);

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/** A `net.connect` lookup that resolves, checks and pins (see module doc). */
function pinnedLookup(resolve: HostResolver, allowPrivate: boolean) {
  return (host: string, options: LookupOptions, callback: LookupCallback): void => {
    resolve(host).then((addresses) => {
      const usable = allowPrivate ? addresses : addresses.filter((a) => !isRefusedAddress(a));
      // one refused address refuses the name: an attacker's record set must not pick our side
      if (!allowPrivate && usable.length !== addresses.length) return callback(ssrf(), '');
      const address = usable[0];
      if (!address) return callback(Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' }), '');
      const family = ipaddr.parse(address).kind() === 'ipv6' ? 6 : 4;
      if (options.all) return callback(null, [{ address, family }]);
      return callback(null, address, family);
    }, (err: NodeJS.ErrnoException) => callback(err, ''));
  };
}

async function readCapped(body: AsyncIterable<Buffer>, destroy: () => void, max: number): Promise<{ text: string; truncated: boolean }> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    chunks.push(chunk);
    size += chunk.length;
    if (size > max) {
      destroy();
      break;
    }
  }
  return { text: Buffer.concat(chunks).subarray(0, max).toString('utf8'), truncated: size > max };
}

function causeText(err: unknown): string {
  const e = err as { message?: string; cause?: { message?: string; code?: string }; code?: string };
  if (e?.cause instanceof OutboundError) return e.cause.message;
  const parts = [e?.message, e?.cause?.message].filter((m): m is string => typeof m === 'string' && m !== '');
  return parts.join(': ') || String(err);
}

/** One guarded outbound GET (issue 34 §2: an OAuth Client ID Metadata Document). */
export interface OutboundGet {
  url: string;
  headers: Record<string, string>;
  /** `--allow-private-webhook-targets` */
  allowPrivate: boolean;
  timeoutMs?: number;
  /** the body is cut at this many bytes (default {@link MAX_RESPONSE_BYTES}); `truncated` tells */
  maxBytes?: number;
  /** name resolution (default: the system resolver); tests pass their own */
  resolve?: HostResolver;
}

/** What a guarded GET answered. */
export interface OutboundGetResponse extends OutboundResponse {
  /** response headers, lower-case names; repeated ones joined with `, ` */
  headers: Record<string, string>;
  /** the body was longer than `maxBytes` (and was cut there) */
  truncated: boolean;
}

/** One request under the §5.6 guard; see {@link guardedPost}. */
async function guardedRequest(
  method: 'GET' | 'POST', p: Omit<OutboundPost, 'body'> & { body?: string; maxBytes?: number },
): Promise<OutboundGetResponse> {
  let url: URL;
  try {
    url = parseEndpoint(p.url);
  } catch (err) {
    throw new OutboundError('ssrf', `SSRF validation failed: ${(err as Error).message.replace(/^invalid endpoint: /, '')}`);
  }
  // an IP literal never reaches `lookup` (net.connect skips it), so it is checked here
  const host = hostOf(url);
  if (!p.allowPrivate && ipaddr.isValid(host) && isRefusedAddress(host)) throw ssrf();
  const timeoutMs = p.timeoutMs ?? OUTBOUND_TIMEOUT_MS;
  // undici (≈ 5 MiB of heap) loads with the first outbound request, not at start-up (issue 22 §3)
  const { Agent, request } = await import('undici');
  const dispatcher = new Agent({
    connect: { lookup: pinnedLookup(p.resolve ?? systemResolver, p.allowPrivate) as never, timeout: timeoutMs },
    headersTimeout: timeoutMs,
    bodyTimeout: timeoutMs,
  });
  try {
    const res = await request(url, {
      method,
      headers: p.headers,
      ...(p.body !== undefined ? { body: p.body } : {}),
      dispatcher,
      signal: AbortSignal.timeout(timeoutMs),
    });
    const body = await readCapped(res.body, () => res.body.destroy(), p.maxBytes ?? MAX_RESPONSE_BYTES);
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(res.headers)) if (v !== undefined) headers[k.toLowerCase()] = Array.isArray(v) ? v.join(', ') : v;
    return { status: res.statusCode, body: body.text, truncated: body.truncated, headers };
  } catch (err) {
    if (err instanceof OutboundError) throw err;
    const cause = (err as { cause?: unknown }).cause;
    if (cause instanceof OutboundError) throw cause;
    if ((err as { name?: string }).name === 'TimeoutError' || (err as { code?: string }).code === 'UND_ERR_HEADERS_TIMEOUT') {
      throw new OutboundError('transport', `request timed out after ${timeoutMs} ms`, { cause: err });
    }
    throw new OutboundError('transport', causeText(err), { cause: err });
  } finally {
    void dispatcher.close().catch(() => undefined);
  }
}

/**
 * Sends one POST under the §5.6 guard.
 * @returns the status and the first 64 KiB of the body, for any HTTP status (3xx included, not followed)
 * @throws OutboundError `ssrf` when the target is refused (URL rules or a refused address), `transport`
 *   for DNS, connection, TLS errors and the timeout
 */
export async function guardedPost(p: OutboundPost): Promise<OutboundResponse> {
  const { status, body } = await guardedRequest('POST', p);
  return { status, body };
}

/**
 * Sends one GET under the same guard as {@link guardedPost} (no redirect followed, one timeout, the
 * answer's address pinned), for documents the server fetches by URL (issue 34 §2: OAuth Client ID
 * Metadata Documents).
 * @returns the status, headers and the first `maxBytes` of the body, with `truncated` when it was longer
 * @throws OutboundError `ssrf` / `transport` as {@link guardedPost}
 */
export async function guardedGet(p: OutboundGet): Promise<OutboundGetResponse> {
  return guardedRequest('GET', p);
}
