/**
 * @module @gatehouse/orgs/dns
 * The TXT lookups of domain verification (behaviour.md §6.2) through `node:dns` `Resolver`: a 5 s
 * timeout, one try, at the `--dns-resolver` servers (ip:port list) or the system's.
 */
import { Resolver } from 'node:dns/promises';
import type { TxtResolver } from './domain/domains.ts';

/** The §6.2 lookup timeout, in milliseconds. */
export const DNS_TIMEOUT_MS = 5000;

/** Answers that mean "the name has no TXT record" rather than "the lookup failed". */
const NO_RECORD = new Set(['ENODATA', 'ENOTFOUND']);

/**
 * Builds the resolver.
 * @param servers `--dns-resolver` (ip:port or [ipv6]:port); empty: the system's resolvers
 * @throws Error (at start) when a server is not an IP address with a port
 */
export function createTxtResolver(servers: readonly string[]): TxtResolver {
  const resolver = new Resolver({ timeout: DNS_TIMEOUT_MS, tries: 1 });
  if (servers.length > 0) resolver.setServers([...servers]);
  return {
    async resolveTxt(name) {
      try {
        return await resolver.resolveTxt(name);
      } catch (err) {
        if (NO_RECORD.has((err as NodeJS.ErrnoException).code ?? '')) return [];
        throw err;
      }
    },
  };
}
