/**
 * @module @gatehouse/authn/domain/redirect
 * The `redirect_uri` rule of behaviour.md §3.1.
 */
import { AppError } from '@gatehouse/errors';
import type { AuthnOptions } from './options.ts';

function originOf(u: URL): string {
  return `${u.protocol}//${u.host}`;
}

/**
 * Accepts a redirect URI that exactly matches a `--redirect-uris` entry, or whose origin passes
 * `--allowed-origins` (with `*`, only the `--url` origin); http/https only. Absent → `<url>/app`.
 * @throws AppError `invalid_argument` `invalid redirect URI`
 */
export function checkRedirectUri(o: AuthnOptions, raw: string | undefined): string {
  if (raw === undefined || raw.trim() === '') return `${o.url}/app`;
  const invalid = new AppError('invalid_argument', 'invalid redirect URI');
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    throw invalid;
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw invalid;
  if (o.redirectUris.includes(raw)) return raw;
  const origin = originOf(u);
  for (const entry of o.allowedOrigins.length > 0 ? o.allowedOrigins : ['*']) {
    if (entry === '*') {
      if (origin === originOf(new URL(o.url))) return raw;
      continue;
    }
    if (entry.includes('://')) {
      try {
        if (originOf(new URL(entry)) === origin) return raw;
      } catch {
        // an unparsable entry matches nothing
      }
      continue;
    }
    if (entry.startsWith('*.')) {
      if (u.hostname.endsWith(entry.slice(1)) && u.hostname !== entry.slice(2)) return raw;
      continue;
    }
    if (entry === u.host || entry === u.hostname) return raw;
  }
  throw invalid;
}
