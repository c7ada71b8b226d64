/** @module @gatehouse/authn/rpc/session — AuthnService.Session (POST /v1/session, behaviour.md §2.2, §3.5): refresh or rotation. */
import { refreshSession, SESSION_REFRESHED } from '../domain/session.ts';
import type { AuthnHandler, RpcContext } from './deps.ts';
import { issuedResponse } from './wire.ts';

/**
 * New tokens for the caller's session: a cookie caller gets a rotated session and new cookies, a
 * bearer caller new tokens only.
 * @throws AppError as {@link refreshSession}
 */
export const sessionRpc = (c: RpcContext): AuthnHandler<'Session'> => async (req, ctx) => {
  const caller = await c.authenticator.requireUser(ctx);
  const issued = await refreshSession(c, caller, { roles: req.roles, scope: req.scope, state: req.state, requiredRelations: req.required_relations });
  return issuedResponse(ctx, c.options, SESSION_REFRESHED, issued);
};
