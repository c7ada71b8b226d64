/** @module @gatehouse/authn/rpc/validate-session — AuthnService.ValidateSession (POST /v1/validate_session, behaviour.md §3.5). */
import { COOKIE_SESSION, COOKIE_SESSION_DOMAIN, parseCookies } from '@gatehouse/auth';
import { validateSession } from '../domain/validate.ts';
import { publicUser } from '../domain/user.ts';
import type { AuthnHandler, RpcContext } from './deps.ts';

/**
 * `{is_valid: true, user}` for a live session. The session is the body's `cookie` (the session cookie's
 * value, behaviour.md §3.5); without one, the caller's own `Cookie` header (`cookie_session`, then
 * `cookie_session_domain`), so a browser can validate its session without copying the cookie into the body.
 * @throws AppError as {@link validateSession}
 */
export const validateSessionRpc = (c: RpcContext): AuthnHandler<'ValidateSession'> => async (req, ctx) => {
  const header = req.cookie ? undefined : parseCookies(ctx.headers.cookie);
  const cookie = req.cookie || header?.[COOKIE_SESSION] || header?.[COOKIE_SESSION_DOMAIN];
  const user = await validateSession(c, { cookie, roles: req.roles, requiredRelations: req.required_relations });
  return { is_valid: true, user: publicUser(user) };
};
