/**
 * @module @gatehouse/authn/rpc/cookies
 * The session cookies on the wire (behaviour.md §2.4): `cookie_session` and `cookie_session_domain`
 * set from a domain {@link SessionCookie}, and cleared with `mfa`, through `ctx.setCookies`, which
 * every transport carries back as Set-Cookie.
 */
import { clearMfaCookie, clearSessionCookies, sessionCookies, type AppCookieOptions } from '@gatehouse/auth';
import type { CallContext } from '@gatehouse/rpc';
import type { SessionCookie } from '../domain/issue.ts';
import type { AuthnOptions } from '../domain/options.ts';

/** The cookie settings of the flags `--url`, `--app-cookie-secure`, `--app-cookie-same-site`. */
const cookieOptions = (o: AuthnOptions): AppCookieOptions => ({ url: o.url, secure: o.appCookieSecure, sameSite: o.appCookieSameSite });

/** Sets both session cookies for a new session. */
export function setSessionCookies(ctx: CallContext, options: AuthnOptions, cookie: SessionCookie): void {
  ctx.setCookies.push(...sessionCookies(cookie.handle, cookie.maxAgeSeconds, cookieOptions(options)));
}

/** Clears both session cookies and `mfa`: the caller is signed out (logout, deactivation, an identifier change). */
export function clearCookies(ctx: CallContext, options: AuthnOptions): void {
  const co = cookieOptions(options);
  ctx.setCookies.push(...clearSessionCookies(co), clearMfaCookie(co));
}
