/** @module @gatehouse/authn/rpc/profile — AuthnService.Profile (GET /v1/profile, behaviour.md §3.5). */
import { activeUser, publicUser } from '../domain/user.ts';
import type { AuthnHandler, RpcContext } from './deps.ts';
import { enrolledOf } from './mfa.ts';

/**
 * The caller's User. A hot path: two reads (the caller, memoised per call since the guard resolved
 * it, and the user), and mfa's `enrolled_mfa_methods` (behaviour.md §5.3).
 * @throws AppError `unauthenticated` `unauthorized`
 */
export const profileRpc = (c: RpcContext): AuthnHandler<'Profile'> => async (_req, ctx) => {
  const user = await activeUser(c.users, (await c.authenticator.requireUser(ctx)).userId);
  return publicUser(user, await enrolledOf(c, ctx, user.id));
};
