/**
 * @module authz/rpc/subject
 * Subject pinning for check_permissions and list_permissions (spec §5 "Subject pinning for permission
 * endpoints", behaviour.md §7.2): the subject is the caller's own unless a super-admin names one.
 */
import { AppError } from '@gatehouse/errors';
import type { Authenticator } from '@gatehouse/auth';
import type { CallContext } from '@gatehouse/rpc';
import { parseCheckSubject, parseSubject } from '../domain/index.ts';

/**
 * Resolves the subject of check_permissions / list_permissions (behaviour.md §7.2).
 * @param explicit the request's `user`; null, undefined or '' when absent
 * @returns `type:id` (or, for a super-admin, a userset `type:id#relation` or wildcard `type:*`)
 * @throws AppError `unauthenticated`; `invalid_argument` (super-admin without `user`, malformed user);
 *   `permission_denied` `not authorized to query authorization for another subject`
 */
export async function pinSubject(authenticator: Authenticator, ctx: CallContext, explicit: string | null | undefined): Promise<string> {
  const caller = await authenticator.resolveCaller(ctx);
  const absent = explicit === null || explicit === undefined || explicit === '';
  if (caller.kind === 'admin') {
    if (absent) throw new AppError('invalid_argument', 'user is required when calling as super-admin');
    // §7.2: a super-admin may name a userset (`group:eng#member`) or a typed wildcard (`user:*`)
    return parseCheckSubject(explicit).key;
  }
  const given = absent ? null : parseSubject(explicit);
  const own = `user:${caller.userId}`;
  if (given !== null && given !== own) {
    throw new AppError('permission_denied', 'not authorized to query authorization for another subject');
  }
  return own;
}
