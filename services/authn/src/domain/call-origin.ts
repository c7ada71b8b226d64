/**
 * @module @gatehouse/authn/domain/call-origin
 * Where the request being served comes from (its `User-Agent` and client IP), carried beside the call
 * in an AsyncLocalStorage so that every session opened while serving it records the device that opened
 * it (issue 33, the user's session list) without threading the call context through every sign-in flow.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { SESSION_USER_AGENT_MAX_CHARS } from '@gatehouse/auth';

/** The device of a call: both values trimmed and cut to what a session record keeps; null when unknown. */
export interface CallOrigin {
  userAgent: string | null;
  ipAddress: string | null;
}

/** Longest client IP kept, in characters (an IPv6 address with a zone fits). */
const IP_MAX_CHARS = 64;

const current = new AsyncLocalStorage<CallOrigin>();

/** The origin of a call from its `User-Agent` header and client IP (either may be absent or blank). */
export function callOriginOf(userAgent: string | undefined, clientIp: string | undefined): CallOrigin {
  const ua = (userAgent ?? '').trim().slice(0, SESSION_USER_AGENT_MAX_CHARS);
  const ip = (clientIp ?? '').trim().slice(0, IP_MAX_CHARS);
  return { userAgent: ua || null, ipAddress: ip || null };
}

/** Runs `fn` with `origin` as the current call's origin (nested calls see the innermost). */
export function withCallOrigin<T>(origin: CallOrigin, fn: () => T): T {
  return current.run(origin, fn);
}

/** The current call's origin, or null outside a call (background jobs, tests calling the domain). */
export function currentCallOrigin(): CallOrigin | null {
  return current.getStore() ?? null;
}
