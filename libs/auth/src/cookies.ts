/**
 * @module @gatehouse/auth/cookies
 * Cookie parsing (RFC 6265 §5.4) and the Set-Cookie strings of behaviour.md §2.4.
 */
import { isIP } from 'node:net';

export const COOKIE_SESSION = 'cookie_session';
export const COOKIE_SESSION_DOMAIN = 'cookie_session_domain';
export const COOKIE_MFA = 'mfa';
export const COOKIE_ADMIN = 'service-admin';

export type SameSite = 'none' | 'lax' | 'strict';

/** Cookie settings from the flags: `--url`, `--app-cookie-secure`, `--app-cookie-same-site`. */
export interface AppCookieOptions {
  /** `--url`; its host decides `cookie_session_domain`'s Domain */
  url: string;
  secure: boolean;
  sameSite: SameSite;
}

/**
 * Parses a `Cookie` request header into name → value. The first occurrence of a name wins;
 * values are percent-decoded when they decode cleanly, and surrounding quotes are dropped.
 */
export function parseCookies(header: string | undefined): Record<string, string> {
  const out: Record<string, string> = Object.create(null) as Record<string, string>;
  if (!header) return out;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq <= 0) continue;
    const name = part.slice(0, eq).trim();
    if (!name || name in out) continue;
    let value = part.slice(eq + 1).trim();
    if (value.length >= 2 && value.startsWith('"') && value.endsWith('"')) value = value.slice(1, -1);
    try {
      value = decodeURIComponent(value);
    } catch {
      // keep the raw value
    }
    out[name] = value;
  }
  return out;
}

/**
 * Two-level public suffixes honoured when computing the registrable domain. This is a small,
 * deliberate subset of the Public Suffix List (the common ccTLD second levels), not the whole list:
 * a host under a suffix missing here gets Domain = its last two labels.
 */
export const TWO_LEVEL_PUBLIC_SUFFIXES: ReadonlySet<string> = new Set([
  'co.uk', 'org.uk', 'ac.uk', 'gov.uk', 'ltd.uk', 'plc.uk', 'me.uk', 'net.uk', 'sch.uk',
  'com.au', 'net.au', 'org.au', 'edu.au', 'gov.au', 'asn.au', 'id.au',
  'co.nz', 'org.nz', 'net.nz', 'govt.nz', 'ac.nz',
  'co.jp', 'ne.jp', 'or.jp', 'ac.jp', 'go.jp',
  'co.za', 'org.za', 'gov.za', 'co.in', 'net.in', 'org.in', 'gov.in', 'ac.in',
  'com.br', 'net.br', 'org.br', 'gov.br', 'com.cn', 'net.cn', 'org.cn', 'gov.cn',
  'com.mx', 'org.mx', 'com.ar', 'com.tr', 'com.sg', 'com.hk', 'com.tw', 'co.kr', 'or.kr',
  'co.il', 'org.il', 'com.my', 'co.id', 'co.th', 'com.ph', 'com.vn', 'com.pk', 'com.ng', 'co.ke',
]);

/**
 * The registrable domain of a host ("eTLD+1"), or null for a host-only cookie: IP addresses,
 * single-label hosts (`localhost`) and hosts that are themselves a public suffix.
 */
export function registrableDomain(host: string): string | null {
  const h = host.toLowerCase().replace(/^\[|\]$/g, '').replace(/\.$/, '');
  if (isIP(h) !== 0) return null;
  const labels = h.split('.').filter(Boolean);
  if (labels.length < 2) return null;
  const lastTwo = labels.slice(-2).join('.');
  if (TWO_LEVEL_PUBLIC_SUFFIXES.has(lastTwo)) {
    return labels.length >= 3 ? labels.slice(-3).join('.') : null;
  }
  return lastTwo;
}

export interface SetCookieOptions {
  maxAgeSeconds: number;
  path?: string;
  domain?: string | null;
  httpOnly?: boolean;
  secure: boolean;
  sameSite: SameSite;
}

/**
 * Serialises one `Set-Cookie` value (RFC 6265 §4.1). SameSite `none` is sent as `Lax` when the
 * cookie is not Secure, because browsers reject `None` without Secure (behaviour.md §2.4).
 */
export function serializeCookie(name: string, value: string, o: SetCookieOptions): string {
  const sameSite = o.sameSite === 'none' && !o.secure ? 'lax' : o.sameSite;
  const parts = [`${name}=${encodeURIComponent(value)}`, `Path=${o.path ?? '/'}`];
  if (o.domain) parts.push(`Domain=${o.domain}`);
  parts.push(`Max-Age=${Math.max(0, Math.floor(o.maxAgeSeconds))}`);
  if (o.httpOnly !== false) parts.push('HttpOnly');
  if (o.secure) parts.push('Secure');
  parts.push(`SameSite=${sameSite[0]!.toUpperCase()}${sameSite.slice(1)}`);
  return parts.join('; ');
}

/** RFC 6265bis §4.1.3.2: a cookie of this name must be Secure, host-only and Path=/. */
export const HOST_PREFIX = '__Host-';

/**
 * The name of a cookie Gatehouse names itself (not one of behaviour.md §2.4's, whose names the API
 * fixes): `__Host-<name>` when it is Secure, else `name` (a browser drops a prefixed cookie that is not
 * Secure). Read the cookie by this name only, so a plain-named one planted from a sibling domain or
 * over http is never taken for it.
 */
export function ownCookieName(name: string, secure: boolean): string {
  return secure ? `${HOST_PREFIX}${name}` : name;
}

/** What {@link ownCookie} needs: as {@link SetCookieOptions}, without Domain, and `path` required. */
export interface OwnCookieOptions {
  maxAgeSeconds: number;
  /** the narrowest path that still reaches the route that reads it; used only when not Secure */
  path: string;
  secure: boolean;
  sameSite: SameSite;
}

/**
 * Serialises a cookie Gatehouse names itself (issue 30 §7): host-only and HttpOnly always; when
 * Secure, named `__Host-<name>` with `Path=/` (RFC 6265bis §4.1.3.2: the browser then refuses it
 * unless it is Secure, came from a secure origin, has no Domain and Path=/, so no sibling or parent
 * domain and no plain-http answer can set or shadow it); when not Secure (http development), its plain
 * name on `path`. Clear it with the same options, an empty value and `maxAgeSeconds: 0`.
 */
export function ownCookie(name: string, value: string, o: OwnCookieOptions): string {
  return serializeCookie(ownCookieName(name, o.secure), value, {
    maxAgeSeconds: o.maxAgeSeconds, path: o.secure ? '/' : o.path, secure: o.secure, sameSite: o.sameSite,
  });
}

/**
 * The path of `route` under `--url`, for a cookie's Path: `https://id.example.com/auth` and
 * `/oauth/sso` give `/auth/oauth/sso` (a gateway behind a path prefix sees its routes under it).
 * @param route starts with `/`
 */
export function pathUnder(url: string, route: string): string {
  let base = '';
  try {
    base = new URL(url).pathname.replace(/\/+$/, '');
  } catch {
    // no usable --url: the route itself
  }
  return `${base}${route}`;
}

function urlHost(url: string): string {
  try {
    return new URL(url).hostname;
  } catch {
    return '';
  }
}

/** The `cookie_session` + `cookie_session_domain` pair for a session handle (behaviour.md §2.4). */
export function sessionCookies(handle: string, maxAgeSeconds: number, o: AppCookieOptions): string[] {
  const base = { maxAgeSeconds, secure: o.secure, sameSite: o.sameSite };
  return [
    serializeCookie(COOKIE_SESSION, handle, base),
    serializeCookie(COOKIE_SESSION_DOMAIN, handle, { ...base, domain: registrableDomain(urlHost(o.url)) }),
  ];
}

/** Clears both session cookies: same name, Path and Domain, empty value, `Max-Age=0`. */
export function clearSessionCookies(o: AppCookieOptions): string[] {
  return sessionCookies('', 0, o);
}

/** The host-only `mfa` cookie (behaviour.md §2.4, §4.2). */
export function mfaCookie(value: string, maxAgeSeconds: number, o: AppCookieOptions): string {
  return serializeCookie(COOKIE_MFA, value, { maxAgeSeconds, secure: o.secure, sameSite: o.sameSite });
}

export function clearMfaCookie(o: AppCookieOptions): string {
  return mfaCookie('', 0, o);
}

/** The `service-admin` cookie: host-only, HttpOnly, SameSite=Strict, Max-Age 3600 (behaviour.md §2.4). */
export function adminCookie(value: string, o: { secure: boolean; maxAgeSeconds?: number }): string {
  return serializeCookie(COOKIE_ADMIN, value, { maxAgeSeconds: o.maxAgeSeconds ?? 3600, secure: o.secure, sameSite: 'strict' });
}

export function clearAdminCookie(o: { secure: boolean }): string {
  return adminCookie('', { secure: o.secure, maxAgeSeconds: 0 });
}
