/**
 * @module @gatehouse/delivery/guard
 * The outbound request guard of webhooks and `test_endpoint` (behaviour.md §5.6): the URL rules and
 * the refused address ranges, decided with ipaddr.js rather than hand-written parsing. IPv4-mapped
 * IPv6 addresses are judged as the IPv4 address they carry; decimal, octal and hex IPv4 spellings
 * are normalised by the WHATWG URL parser before they get here.
 */
import { lookup as dnsLookup } from 'node:dns/promises';
import ipaddr from 'ipaddr.js';
import { AppError } from '@gatehouse/errors';

/** The refusal text after `invalid endpoint: ` and after `SSRF validation failed: `. */
export const PRIVATE_TARGET_REASON = 'requests to private/internal networks are not allowed';

/** behaviour.md §5.6, refused unless `--allow-private-webhook-targets`. */
const REFUSED_RANGES: ReadonlyArray<readonly [string, number]> = [
  ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12],
  ['192.0.0.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15], ['224.0.0.0', 4], ['240.0.0.0', 4],
  ['::', 128], ['::1', 128], ['fc00::', 7], ['fe80::', 10], ['ff00::', 8],
];
const PARSED_RANGES = REFUSED_RANGES.map(([net, bits]) => [ipaddr.parse(net), bits] as const);

/**
 * True when `address` (an IPv4 or IPv6 literal) falls in a §5.6 refused range; IPv4-mapped IPv6
 * (`::ffff:127.0.0.1`) is judged as its IPv4 address. A string that is not an IP address is refused.
 */
export function isRefusedAddress(address: string): boolean {
  if (!ipaddr.isValid(address)) return true;
  let ip = ipaddr.parse(address);
  if (ip.kind() === 'ipv6' && (ip as ipaddr.IPv6).isIPv4MappedAddress()) ip = (ip as ipaddr.IPv6).toIPv4Address();
  return PARSED_RANGES.some(([net, bits]) => net.kind() === ip.kind() && ip.match(net, bits));
}

/** The host of a parsed URL without IPv6 brackets (`[::1]` → `::1`). */
export function hostOf(url: URL): string {
  return url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
}

/**
 * Parses a webhook endpoint by the §5.6 URL rules.
 * @throws AppError `invalid_argument`: `empty endpoint not allowed`, `invalid endpoint: malformed URL`,
 *   `invalid endpoint: only http and https schemes are allowed`, `invalid endpoint: missing host`
 */
export function parseEndpoint(endpoint: string): URL {
  if (endpoint.trim() === '') throw new AppError('invalid_argument', 'empty endpoint not allowed');
  let url: URL;
  try {
    url = new URL(endpoint.trim());
  } catch {
    throw new AppError('invalid_argument', 'invalid endpoint: malformed URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new AppError('invalid_argument', 'invalid endpoint: only http and https schemes are allowed');
  }
  if (url.hostname === '') throw new AppError('invalid_argument', 'invalid endpoint: missing host');
  if (url.username !== '' || url.password !== '') throw new AppError('invalid_argument', 'invalid endpoint: malformed URL');
  return url;
}

/** Resolves a host name to every address it has (the system resolver, like a connection would). */
export type HostResolver = (host: string) => Promise<string[]>;

/** The system resolver (`getaddrinfo`, so `/etc/hosts` and `localhost` count). */
export const systemResolver: HostResolver = async (host) => (await dnsLookup(host, { all: true, verbatim: true })).map((a) => a.address);

/**
 * The save-time check of §5.6 (`add_webhook`, `update_webhook`, `test_endpoint`): the URL rules,
 * then, unless `allowPrivate`, the address (an IP literal, or every address the name resolves to).
 * A name that does not resolve is accepted: it is checked again at every attempt.
 *
 * @throws AppError `invalid_argument` with the §5.6 messages
 */
export async function checkEndpoint(endpoint: string, o: { allowPrivate: boolean; resolve?: HostResolver }): Promise<URL> {
  const url = parseEndpoint(endpoint);
  if (o.allowPrivate) return url;
  const host = hostOf(url);
  let addresses: string[];
  if (ipaddr.isValid(host)) addresses = [host];
  else {
    try {
      addresses = await (o.resolve ?? systemResolver)(host);
    } catch {
      return url;
    }
  }
  if (addresses.some(isRefusedAddress)) throw new AppError('invalid_argument', `invalid endpoint: ${PRIVATE_TARGET_REASON}`);
  return url;
}
