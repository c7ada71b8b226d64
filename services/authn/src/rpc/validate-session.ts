/** @module @gatehouse/authn/rpc/validate-session — AuthnService.ValidateSession (POST /v1/validate_session, behaviour.md §3.5). */
import { validateSession } from '../domain/validate.ts';
import { publicUser } from '../domain/user.ts';
import type { AuthnHandler, RpcContext } from './deps.ts';

/** `{is_valid: true, user}` for a live session cookie value. @throws AppError as {@link validateSession} */
export const validateSessionRpc = (c: RpcContext): AuthnHandler<'ValidateSession'> => async (req) => {
  const user = await validateSession(c, { cookie: req.cookie, roles: req.roles, requiredRelations: req.required_relations });
  return { is_valid: true, user: publicUser(user) };
};
