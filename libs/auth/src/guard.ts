/**
 * @module @gatehouse/auth/guard
 * The one check of who may call an RPC (issue 14 §2), run by libs/rpc's `defineService` before every
 * handler on every surface: the RPC's auth class, declared once as the `(gatehouse.common.v1.auth)`
 * option of its proto, against the caller's credentials (behaviour.md §2.3). Every refusal is 401
 * `unauthenticated` `unauthorized` (spec §5, behaviour.md §5.1), except the MFA classes, whose
 * missing `mfa` cookie is `invalid session` as behaviour.md §4.3 words it.
 */
import { AppError } from '@gatehouse/errors';
import type { AuthClass, CallContext, Guard, GuardedCall } from '@gatehouse/rpc';
import type { AdminCaller, Authenticator, UserCaller } from './authenticator.ts';
import { COOKIE_MFA, parseCookies } from './cookies.ts';
import { requireDelegatedScope } from './delegation.ts';

const unauthorized = (reason: string): AppError => new AppError('unauthenticated', 'unauthorized', { reason });
const INVALID_SESSION = 'invalid session';

const hasMfaCookie = (ctx: CallContext): boolean => Boolean(parseCookies(ctx.headers.cookie)[COOKIE_MFA]);

/**
 * Who is an org admin of which organization (behaviour.md §5.1, §6.1): the orgs service answers from
 * its membership table (one indexed lookup); another service asks orgs' internal API.
 */
export interface OrgAdminDirectory {
  /**
   * The organization an org-scoped call addresses (from `org_id`, or from the record it names), or
   * null when it addresses none that exists: then only a super-admin may call.
   */
  orgOf(call: GuardedCall): Promise<string | null>;
  /** whether the user's membership in the org holds `service:org_admin` */
  isOrgAdmin(userId: string, orgId: string): Promise<boolean>;
}

export interface AuthGuardOptions {
  /** enables the org-admin half of `org_admin` (absent: only a super-admin passes it) */
  orgAdmins?: OrgAdminDirectory;
}

/**
 * The `org_admin` class: a super-admin, or a user credential whose membership in the organization the
 * call addresses holds `service:org_admin` (behaviour.md §5.1, §6.1). An org admin addressing another
 * org, or an org that does not exist, is refused like any user.
 * @returns the caller (an AdminCaller, or the org admin's UserCaller)
 * @throws AppError `unauthenticated` `unauthorized`
 */
async function requireOrgAdmin(authenticator: Authenticator, ctx: CallContext, call: GuardedCall | undefined, orgAdmins?: OrgAdminDirectory): Promise<AdminCaller | UserCaller> {
  const caller = await authenticator.resolveCaller(ctx);
  if (caller.kind === 'admin') return caller;
  // a service-account (client_credentials) token is never an org admin (behaviour.md §2.3)
  if (caller.kind === 'service_account' || !orgAdmins || !call) throw unauthorized('not_super_admin');
  const orgId = await orgAdmins.orgOf(call);
  if (orgId === null || !(await orgAdmins.isOrgAdmin(caller.userId, orgId))) throw unauthorized('not_org_admin');
  requireDelegatedScope(caller.delegation, caller.scope, call);
  return caller;
}

/**
 * A user caller, once the scope rule of delegated tokens holds for the call (issue 34 §3): a token with
 * `act` may call a mutating RPC only with an explicit write scope.
 * @throws AppError `permission_denied` (see requireDelegatedScope)
 */
function delegatedScopeHolds<C>(call: GuardedCall | undefined): (caller: C) => C {
  return (caller) => {
    const u = caller as Partial<UserCaller> | null;
    if (u?.kind === 'user') requireDelegatedScope(u.delegation, u.scope ?? [], call);
    return caller;
  };
}

/**
 * Builds a service's guard.
 *
 * - `user`: a user credential (bearer, then session cookies); `admin`: a super-admin credential.
 * - `org_admin`: a super-admin credential, or (with `options.orgAdmins`) the org admin of the
 *   organization the call addresses (see {@link requireOrgAdmin}).
 * - `permissions`: a super-admin or a user credential (the handler pins the subject, §7.2).
 * - a delegated user token (RFC 8693 `act`) passes a mutating RPC only with an explicit write scope
 *   (`gatehouse:write` or `gatehouse:<operation>`), else 403 `permission_denied` (issue 34 §3).
 * - `mfa`: the `mfa` cookie is present (its session is the mfa service's to check);
 *   `user_or_mfa`: a user credential, failing that the `mfa` cookie.
 * - `public`, `internal`: never reach the guard (defineService skips it; the internal token is the
 *   transport's check).
 *
 * @param authenticator the service's credential resolution; null where the service has no session
 *   store to check users against (then every class but `mfa` is refused)
 * @param options the org-admin directory of services with org-scoped RPCs
 * @returns a guard resolving with the caller (a UserCaller, an AdminCaller, or null for an MFA cookie)
 * @throws (the guard) AppError `unauthenticated` `unauthorized` or `invalid session`
 */
export function createAuthGuard(authenticator: Authenticator | null, options: AuthGuardOptions = {}): Guard {
  const noStore = (): Promise<never> => Promise.reject(unauthorized('no_session_store'));
  return (auth: AuthClass, ctx: CallContext, call?: GuardedCall): Promise<unknown> => {
    switch (auth) {
      case 'public':
      case 'internal':
        return Promise.resolve(null);
      case 'user':
        return authenticator ? authenticator.requireUser(ctx).then(delegatedScopeHolds(call)) : noStore();
      case 'admin':
        return authenticator ? authenticator.requireAdmin(ctx) : noStore();
      case 'org_admin':
        return authenticator ? requireOrgAdmin(authenticator, ctx, call, options.orgAdmins) : noStore();
      case 'permissions':
        return authenticator ? authenticator.resolveCaller(ctx).then(delegatedScopeHolds(call)) : noStore();
      case 'mfa':
        return hasMfaCookie(ctx) ? Promise.resolve(null) : Promise.reject(new AppError('unauthenticated', INVALID_SESSION));
      case 'user_or_mfa':
        if (!authenticator) return hasMfaCookie(ctx) ? Promise.resolve(null) : noStore();
        return authenticator.requireUser(ctx).catch((err: unknown) => {
          if (hasMfaCookie(ctx)) return null;
          throw err;
        }).then(delegatedScopeHolds(call));
    }
  };
}
