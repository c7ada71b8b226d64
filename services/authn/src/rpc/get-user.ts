/** @module @gatehouse/authn/rpc/get-user — AuthnInternal.GetUser: one User by id, for the federated `User` entity (graphql.md §5.2). */
import { getUserById, publicUser } from '../domain/user.ts';
import type { AuthnInternalHandler, RpcContext } from './deps.ts';
import { enrolledOf } from './mfa.ts';

/** @throws AppError `not_found` `user not found` */
export const getUserRpc = (c: RpcContext): AuthnInternalHandler<'GetUser'> => async (req, ctx) => {
  const user = await getUserById(c.users, req.user_id);
  return publicUser(user, await enrolledOf(c, ctx, user.id));
};
