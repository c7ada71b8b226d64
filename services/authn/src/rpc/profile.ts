/** @module @gatehouse/authn/rpc/profile — AuthnService.Profile (GET /v1/profile, behaviour.md §3.5). */
import { activeUser, publicUser } from '../domain/user.ts';
import type { AuthnHandler, RpcContext } from './deps.ts';

/**
 * The caller's User. A hot path: two reads (the caller, memoised per call since the guard resolved
 * it, and the user) and one async layer, as before the split.
 * @throws AppError `unauthenticated` `unauthorized`
 */
export const profileRpc = (c: RpcContext): AuthnHandler<'Profile'> => async (_req, ctx) =>
  publicUser(await activeUser(c.users, (await c.authenticator.requireUser(ctx)).userId));
