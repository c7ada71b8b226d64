/** @module @gatehouse/authn/rpc/login — AuthnService.Login (POST /v1/login, behaviour.md §3.3). */
import { login } from '../domain/login.ts';
import type { AuthnHandler, RpcContext } from './deps.ts';
import { mfaChallengesOf } from './mfa.ts';
import { outcomeResponse } from './wire.ts';

/**
 * Logs in (session cookies), or, for an unverified email, has mfa mail a code (its `mfa` cookie).
 * @throws AppError as {@link login}
 */
export const loginRpc = (c: RpcContext): AuthnHandler<'Login'> => async (req, ctx) => outcomeResponse(ctx, c.options, await login(c, mfaChallengesOf(c.mfa, ctx), {
  email: req.email, phoneNumber: req.phone_number, password: req.password, roles: req.roles, scope: req.scope, state: req.state,
}));
