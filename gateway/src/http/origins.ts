/** @module gateway/http/origins Origin parsing and `--allowed-origins` matching shared by CSRF and CORS (behaviour.md §2.5). */

/** A browser origin split into its parts; `port` is '' when it is the scheme's default. */
export interface ParsedOrigin {
  readonly scheme: string;
  /** lower-case host; IPv6 literals keep their brackets */
  readonly host: string;
  readonly port: string;
}

const DEFAULT_PORTS: Readonly<Record<string, string>> = { http: '80', https: '443', ws: '80', wss: '443' };

/** `host[:port]` with the default port of `scheme` dropped. */
export function hostPort(host: string, port: string, scheme?: string): string {
  const p = scheme !== undefined && DEFAULT_PORTS[scheme] === port ? '' : port;
  return p === '' ? host.toLowerCase() : `${host.toLowerCase()}:${p}`;
}

/**
 * Parses an `Origin` value or the scheme://host[:port] of a URL (a `Referer`).
 * Returns undefined for `null`, opaque or malformed values. Default ports are normalised away (RFC 6454 §4).
 */
export function parseOrigin(value: string | undefined): ParsedOrigin | undefined {
  if (value === undefined) return undefined;
  // browsers send the same few origins over and over: remember the parses (a WHATWG URL parse each)
  if (PARSED.has(value)) return PARSED.get(value);
  const parsed = parseOriginUncached(value);
  if (PARSED.size >= PARSED_MAX) PARSED.delete(PARSED.keys().next().value!);
  PARSED.set(value, parsed);
  return parsed;
}

const PARSED = new Map<string, ParsedOrigin | undefined>();
const PARSED_MAX = 1024;

function parseOriginUncached(value: string): ParsedOrigin | undefined {
  const trimmed = value.trim();
  if (trimmed === '' || trimmed === 'null') return undefined;
  let url: URL;
  try {
    url = new URL(trimmed);
  } catch {
    return undefined;
  }
  const scheme = url.protocol.replace(/:$/, '').toLowerCase();
  if (url.hostname === '' || !/^[a-z][a-z0-9+.-]*$/.test(scheme)) return undefined;
  // WHATWG URL already drops the default port for special schemes.
  return Object.freeze({ scheme, host: url.hostname.toLowerCase(), port: url.port });
}

/** The serialised origin `scheme://host[:port]`. */
export function formatOrigin(o: ParsedOrigin): string {
  return `${o.scheme}://${hostPort(o.host, o.port, o.scheme)}`;
}

/** One compiled `--allowed-origins` entry. */
interface OriginRule {
  /** undefined: the entry had no scheme and matches any scheme */
  readonly scheme: string | undefined;
  /** exact host, or the suffix `.example.com` for a `*.example.com` entry */
  readonly host: string;
  readonly wildcardSubdomain: boolean;
  /** '' when the entry had no port (or the scheme's default port) */
  readonly port: string;
}

/** Compiled `--allowed-origins`. `any` is true for the default `*` (same-origin only for CSRF). */
export interface OriginPolicy {
  readonly any: boolean;
  readonly rules: readonly OriginRule[];
}

function compileEntry(entry: string): OriginRule | undefined {
  const raw = entry.trim().toLowerCase().replace(/\/+$/, '');
  if (raw === '') return undefined;
  const schemeMatch = /^([a-z][a-z0-9+.-]*):\/\/(.*)$/.exec(raw);
  const scheme = schemeMatch?.[1];
  let rest = schemeMatch ? (schemeMatch[2] ?? '') : raw;
  let wildcardSubdomain = false;
  if (rest.startsWith('*.')) {
    wildcardSubdomain = true;
    rest = rest.slice(1); // keep the leading dot: ".example.com"
  }
  // Reuse the URL parser for host/port normalisation (IDNA, IPv6, default ports).
  const probeHost = wildcardSubdomain ? `x${rest}` : rest;
  const probe = parseOrigin(`${scheme ?? 'http'}://${probeHost}`);
  if (!probe) return undefined;
  let port = probe.port;
  if (scheme === undefined) {
    // parseOrigin dropped ':80' for the probe scheme; a scheme-less entry keeps whatever port was written.
    const explicit = /:(\d+)$/.exec(rest);
    port = explicit?.[1] ?? '';
  }
  const host = wildcardSubdomain ? probe.host.slice(1) : probe.host;
  return { scheme, host, wildcardSubdomain, port };
}

/**
 * Compiles `--allowed-origins`. An empty list or one containing `*` means "any origin"
 * (CORS `*`, CSRF same-origin only). Unparseable entries are skipped (startup validation rejects them).
 */
export function compileOriginPolicy(allowedOrigins: readonly string[]): OriginPolicy {
  const entries = allowedOrigins.map((o) => o.trim()).filter((o) => o !== '');
  if (entries.length === 0 || entries.includes('*')) return { any: true, rules: [] };
  const rules = entries.map(compileEntry).filter((r): r is OriginRule => r !== undefined);
  return { any: false, rules };
}

function ruleMatches(rule: OriginRule, o: ParsedOrigin): boolean {
  if (rule.scheme !== undefined && rule.scheme !== o.scheme) return false;
  const originPort = DEFAULT_PORTS[o.scheme] === o.port ? '' : o.port;
  const rulePort = rule.scheme !== undefined && DEFAULT_PORTS[rule.scheme] === rule.port ? '' : rule.port;
  if (rule.scheme === undefined && rulePort !== '' && DEFAULT_PORTS[o.scheme] === rulePort && originPort === '') {
    // scheme-less "example.com:443" matches https://example.com
  } else if (rulePort !== originPort) {
    return false;
  }
  if (rule.wildcardSubdomain) return o.host.endsWith(rule.host) && o.host.length > rule.host.length;
  return o.host === rule.host;
}

/**
 * True when `origin` is in an explicit `--allowed-origins` list: an entry with a scheme matches
 * scheme, host and port; one without matches host[:port] under any scheme; `*.example.com`
 * matches subdomains but not the apex (behaviour.md §2.5). Always false for the `*` policy.
 */
export function isListedOrigin(policy: OriginPolicy, origin: ParsedOrigin): boolean {
  return !policy.any && policy.rules.some((rule) => ruleMatches(rule, origin));
}
