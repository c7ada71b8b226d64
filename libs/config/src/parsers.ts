/** @module @gatehouse/config/parsers: flag value parsers; each turns one raw argv string into a typed value or throws. */

import { isIP } from 'node:net';

/** The value kind a flag carries; `list` is a comma-separated list. */
export type FlagType = 'string' | 'number' | 'boolean' | 'list';

/** A flag value parser. `parse` throws {@link FlagValueError} with the user-facing message on bad input. */
export interface Parser<T> {
  readonly type: FlagType;
  /** @param raw the value as written on the command line, never empty @param flag e.g. `--http-port` */
  parse(raw: string, flag: string): T;
}

/** A bad flag value; `message` is the text printed after `FATAL: `. */
export class FlagValueError extends Error {
  override readonly name = 'FlagValueError';
  /** one line per problem; a list flag reports every bad entry, not just the first */
  readonly messages: readonly string[];
  constructor(messages: string | readonly string[]) {
    const all = typeof messages === 'string' ? [messages] : messages;
    super(all.join('; '));
    this.messages = all;
  }
}

/** Free text, trimmed (a trailing newline from a mounted secret is never part of the value). */
export const str: Parser<string> = { type: 'string', parse: (raw) => raw.trim() };

/**
 * A PEM document. Values that went through a shell or a YAML file often carry literal `\n`
 * sequences instead of line breaks; they are turned back into line breaks.
 */
export const pem: Parser<string> = {
  type: 'string',
  parse: (raw) => raw.replace(/\\r\\n|\\n/g, '\n').replace(/\r\n/g, '\n').trim(),
};

function integer(raw: string, flag: string, min: number, max: number, what: string): number {
  const text = raw.trim();
  const n = Number(text);
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(n) || n < min || n > max) {
    throw new FlagValueError(`${flag} must be ${what}, got "${raw}"`);
  }
  return n;
}

/** A TCP port, 0-65535; 0 asks the OS for a free port (tests use it). */
export const port: Parser<number> = {
  type: 'number',
  parse: (raw, flag) => integer(raw, flag, 0, 65535, 'a port number between 0 and 65535'),
};

/** An integer ≥ 0 (0 often means "off", e.g. `--rate-limit-rps=0`). */
export const nonNegativeInt: Parser<number> = {
  type: 'number',
  parse: (raw, flag) => integer(raw, flag, 0, Number.MAX_SAFE_INTEGER, 'a non-negative whole number'),
};

/** An integer ≥ 1 (lifetimes in seconds, limits). */
export const positiveInt: Parser<number> = {
  type: 'number',
  parse: (raw, flag) => integer(raw, flag, 1, Number.MAX_SAFE_INTEGER, 'a positive whole number'),
};

/**
 * A number of worker processes: `auto` (one per core the process may use, `os.availableParallelism()`,
 * decided at start) or a whole number from 1 to 64.
 */
export const workerCount: Parser<number | 'auto'> = {
  type: 'string',
  parse: (raw, flag) => (raw.trim().toLowerCase() === 'auto' ? 'auto' : integer(raw, flag, 1, 64, 'auto or a whole number from 1 to 64')),
};

const DURATION_UNITS: Readonly<Record<string, number>> = { s: 1, m: 60, h: 3600, d: 86_400 };

/**
 * A duration in whole seconds: `<n>` (seconds) or `<n>s`, `<n>m`, `<n>h`, `<n>d`; `0` means "never"
 * where the flag says so (retention flags: keep forever).
 */
export const duration: Parser<number> = {
  type: 'number',
  parse: (raw, flag) => {
    const m = /^(\d+)([smhd]?)$/.exec(raw.trim().toLowerCase());
    const n = m ? Number(m[1]) * (DURATION_UNITS[m[2] || 's'] ?? 1) : Number.NaN;
    if (!m || !Number.isSafeInteger(n)) throw new FlagValueError(`${flag} must be a duration such as 30d, 12h, 90m or 3600 (seconds), got "${raw}"`);
    return n;
  },
};

/** `true` or `false` (any case); a bare `--flag` means true (handled by the argv reader). */
export const bool: Parser<boolean> = {
  type: 'boolean',
  parse: (raw, flag) => {
    const v = raw.trim().toLowerCase();
    if (v === 'true') return true;
    if (v === 'false') return false;
    throw new FlagValueError(`${flag} must be true or false, got "${raw}"`);
  },
};

/** A comma-separated list; entries are trimmed and empty entries dropped. */
export const list: Parser<readonly string[]> = {
  type: 'list',
  parse: (raw) => raw.split(',').map((s) => s.trim()).filter((s) => s !== ''),
};

/** A comma list of E.164 country calling codes (`+1,+44` or `1,44`), each stored as `+<digits>`. */
export const countryCodeList: Parser<readonly string[]> = {
  type: 'list',
  parse: (raw, flag) => raw.split(',').map((s) => s.trim()).filter((s) => s !== '').map((part) => {
    const digits = part.replace(/^\+/, '');
    if (!/^[0-9]{1,4}$/.test(digits)) throw new FlagValueError(`${flag} must list country calling codes such as +1,+44, got "${part}"`);
    return `+${digits}`;
  }),
};

/**
 * One of a fixed set of lower-case values (input is lower-cased first).
 * @param unsupported when true the error reads `unsupported <flag>: <value>` (behaviour.md §1.4 wording)
 */
export function oneOf<const V extends string>(values: readonly V[], unsupported = false): Parser<V> {
  return {
    type: 'string',
    parse: (raw, flag) => {
      const v = raw.trim().toLowerCase();
      if ((values as readonly string[]).includes(v)) return v as V;
      throw new FlagValueError(
        unsupported ? `unsupported ${flag}: ${raw}` : `${flag} must be one of ${values.join(', ')}, got "${raw}"`,
      );
    },
  };
}

/** JWT algorithms (behaviour.md §1.3). Matched case-insensitively, stored upper-case. */
export const JWT_TYPES = [
  'HS256', 'HS384', 'HS512', 'RS256', 'RS384', 'RS512', 'ES256', 'ES384', 'ES512',
] as const;
export type JwtType = (typeof JWT_TYPES)[number];

export const jwtType: Parser<JwtType> = {
  type: 'string',
  parse: (raw, flag) => {
    const v = raw.trim().toUpperCase();
    if ((JWT_TYPES as readonly string[]).includes(v)) return v as JwtType;
    throw new FlagValueError(`unsupported ${flag}: ${raw}`);
  },
};

/** A gRPC address `host:port` (host may be a bracketed IPv6 literal). */
export const address: Parser<string> = {
  type: 'string',
  parse: (raw, flag) => checkAddress(raw.trim(), flag),
};

/** A comma list of `host:port` addresses (replicas). */
export const addressList: Parser<readonly string[]> = {
  type: 'list',
  parse: (raw, flag) => {
    const items = list.parse(raw, flag);
    if (items.length === 0) throw new FlagValueError(`${flag} must list at least one host:port`);
    return items.map((a) => checkAddress(a, flag));
  },
};

function checkAddress(a: string, flag: string): string {
  const m = /^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+):(\d{1,5})$/.exec(a);
  if (!m || Number(m[2]) < 1 || Number(m[2]) > 65535) {
    throw new FlagValueError(`${flag} must be host:port, got "${a}"`);
  }
  return a;
}

/** An absolute http(s) URL; the trailing `/` is dropped. */
export const httpUrl: Parser<string> = {
  type: 'string',
  parse: (raw, flag) => checkHttpUrl(raw.trim(), flag),
};

/** A comma list of absolute http(s) URLs. */
export const httpUrlList: Parser<readonly string[]> = {
  type: 'list',
  parse: (raw, flag) => list.parse(raw, flag).map((u) => checkHttpUrl(u, flag)),
};

function checkHttpUrl(u: string, flag: string): string {
  let parsed: URL;
  try {
    parsed = new URL(u);
  } catch {
    throw new FlagValueError(`${flag}: invalid URL "${u}"`);
  }
  if ((parsed.protocol !== 'http:' && parsed.protocol !== 'https:') || parsed.hostname === '') {
    throw new FlagValueError(`${flag}: invalid URL "${u}" (an absolute http or https URL is required)`);
  }
  return u.endsWith('/') ? u.replace(/\/+$/, '') : u;
}

/** The message of behaviour.md §1.4 for a malformed `--url`. */
export const URL_FORMAT_MESSAGE =
  '--url must be an absolute http or https URL with a host and no user-info, query or fragment';

/**
 * The public base URL (`--url`): http(s), a host, an optional path prefix, no user-info, query or
 * fragment (behaviour.md §1.4). Returned without a trailing `/`, e.g. `https://auth.example.com/id`.
 */
export const baseUrl: Parser<string> = {
  type: 'string',
  parse: (raw) => {
    const text = raw.trim();
    let u: URL;
    try {
      u = new URL(text);
    } catch {
      throw new FlagValueError(URL_FORMAT_MESSAGE);
    }
    const bad = (u.protocol !== 'http:' && u.protocol !== 'https:') || u.hostname === '' ||
      u.username !== '' || u.password !== '' || text.includes('?') || text.includes('#');
    if (bad) throw new FlagValueError(URL_FORMAT_MESSAGE);
    return `${u.origin}${u.pathname.replace(/\/+$/, '')}`;
  },
};

/**
 * `--allowed-origins`: `*`, or origins `scheme://host[:port]`, where the host may start with a
 * `*.` wildcard label. No path, query, fragment or user-info. Stored lower-case, without a trailing `/`.
 */
export const originList: Parser<readonly string[]> = {
  type: 'list',
  parse: (raw, flag) => {
    const items = list.parse(raw, flag);
    const bad = items.filter((o) => normaliseOrigin(o) === null);
    if (bad.length > 0) throw new FlagValueError(bad.map((o) => `${flag}: invalid origin "${o}"`));
    return items.map((o) => normaliseOrigin(o) as string);
  },
};

function normaliseOrigin(o: string): string | null {
  if (o === '*') return o;
  const m = /^([a-z][a-z0-9+.-]*):\/\/(\*\.)?([^/?#@*]+)\/?$/i.exec(o);
  if (!m) return null;
  try {
    const u = new URL(`${m[1]}://${m[3]}`);
    if (u.hostname === '' || u.pathname.replace(/^\/$/, '') !== '') return null;
  } catch {
    return null;
  }
  return o.replace(/\/$/, '').toLowerCase();
}

/** `--trusted-proxies`: IPv4/IPv6 CIDR ranges; a bare address means that one host (/32 or /128). */
export const cidrList: Parser<readonly string[]> = {
  type: 'list',
  parse: (raw, flag) => {
    const items = list.parse(raw, flag);
    const bad = items.filter((c) => !isCidr(c));
    if (bad.length > 0) throw new FlagValueError(bad.map((c) => `${flag}: invalid CIDR "${c}"`));
    return items;
  },
};

function isCidr(c: string): boolean {
  const [addr = '', prefix, extra] = c.split('/');
  if (extra !== undefined) return false;
  const family = isIP(addr);
  if (family === 0) return false;
  if (prefix === undefined) return true;
  if (!/^\d{1,3}$/.test(prefix)) return false;
  return Number(prefix) <= (family === 4 ? 32 : 128);
}
