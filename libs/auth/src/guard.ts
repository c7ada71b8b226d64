/**
 * @module @gatehouse/auth/guard
 * The one check of who may call an RPC (issue 14 §2), run by libs/rpc's `defineService` before every
 * handler on every surface: the RPC's auth class, declared once as the `(gatehouse.common.v1.auth)`
 * option of its proto, against the caller's credentials (behaviour.md §2.3). Every refusal is 401
 * `unauthenticated` `unauthorized` (spec §5, behaviour.md §5.1), except the MFA classes, whose
 * missing `mfa` cookie is `invalid session` as behaviour.md §4.3 words it.
 */
import { AppError } from '@gatehouse/errors';
import type { AuthClass, CallContext, Guard } from '@gatehouse/rpc';
import type { Authenticator } from './authenticator.ts';
import { COOKIE_MFA, parseCookies } from './cookies.ts';

const unauthorized = (reason: string): AppError => new AppError('unauthenticated', 'unauthorized', { reason });
const INVALID_SESSION = 'invalid session';

const hasMfaCookie = (ctx: CallContext): boolean => Boolean(parseCookies(ctx.headers.cookie)[COOKIE_MFA]);

/**
 * Builds a service's guard.
 *
 * - `user`: a user credential (bearer, then session cookies); `admin`: a super-admin credential.
 * - `org_admin`: a super-admin credential. TODO(orgs): also an organization's admin (a user whose
 *   membership holds `service:org_admin`, behaviour.md §5.1), once the orgs service owns memberships;
 *   until then an org admin is refused like any user.
 * - `permissions`: a super-admin or a user credential (the handler pins the subject, §7.2).
 * - `mfa`: the `mfa` cookie is present (its session is the mfa service's to check);
 *   `user_or_mfa`: a user credential, failing that the `mfa` cookie.
 * - `public`, `internal`: never reach the guard (defineService skips it; the internal token is the
 *   transport's check).
 *
 * @param authenticator the service's credential resolution; null where the service has no session
 *   store to check users against (then every class but `mfa` is refused)
 * @returns a guard resolving with the caller (a UserCaller, an AdminCaller, or null for an MFA cookie)
 * @throws (the guard) AppError `unauthenticated` `unauthorized` or `invalid session`
 */
export function createAuthGuard(authenticator: Authenticator | null): Guard {
  const noStore = (): Promise<never> => Promise.reject(unauthorized('no_session_store'));
  return (auth: AuthClass, ctx: CallContext): Promise<unknown> => {
    switch (auth) {
      case 'public':
      case 'internal':
        return Promise.resolve(null);
      case 'user':
        return authenticator ? authenticator.requireUser(ctx) : noStore();
      case 'admin':
      case 'org_admin':
        return authenticator ? authenticator.requireAdmin(ctx) : noStore();
      case 'permissions':
        return authenticator ? authenticator.resolveCaller(ctx) : noStore();
      case 'mfa':
        return hasMfaCookie(ctx) ? Promise.resolve(null) : Promise.reject(new AppError('unauthenticated', INVALID_SESSION));
      case 'user_or_mfa':
        if (!authenticator) return hasMfaCookie(ctx) ? Promise.resolve(null) : noStore();
        return authenticator.requireUser(ctx).catch((err: unknown) => {
          if (hasMfaCookie(ctx)) return null;
          throw err;
        });
    }
  };
}
