/** @module @gatehouse/authn/rpc/user — AuthnService.User (POST /v1/admin/user, behaviour.md §5.3). */
import { findUserByIdOrEmail } from '../domain/admin-users.ts';
import { publicUser } from '../domain/user.ts';
import { enrolledOf } from './mfa.ts';
import type { AuthnHandler, RpcContext } from './deps.ts';

/** One user by exactly one of `id`, `email`. @throws AppError `invalid_argument`, `not_found` */
export const userRpc = (c: RpcContext): AuthnHandler<'User'> => async (req, ctx) => {
  const user = await findUserByIdOrEmail(c, req);
  return publicUser(user, await enrolledOf(c, ctx, user.id));
};
