/**
 * @module @gatehouse/mfa/rpc/cookies
 * The `mfa` cookie on the wire (behaviour.md §2.4): read from the caller's Cookie header, set and
 * cleared through `ctx.setCookies`, which every transport carries back as Set-Cookie.
 */
import { clearMfaCookie, COOKIE_MFA, mfaCookie, parseCookies } from '@gatehouse/auth';
import type { CallContext } from '@gatehouse/rpc';
import type { ArmedSession } from '../domain/deps.ts';
import { cookieOptions, type MfaOptions } from '../domain/options.ts';

/** The handle the caller's `mfa` cookie carries, or undefined. */
export const mfaHandleOf = (ctx: CallContext): string | undefined => parseCookies(ctx.headers.cookie)[COOKIE_MFA];

/** Sets the `mfa` cookie for `armed`: Max-Age counts from the clock reading its expiry was computed from. */
export function setMfaCookie(ctx: CallContext, options: MfaOptions, armed: ArmedSession): void {
  ctx.setCookies.push(mfaCookie(armed.handle, Math.max(0, armed.expiresAt - armed.armedAt), cookieOptions(options)));
}

/** Clears the `mfa` cookie (its session is over). */
export function clearMfaCookieOn(ctx: CallContext, options: MfaOptions): void {
  ctx.setCookies.push(clearMfaCookie(cookieOptions(options)));
}
