/** @module @gatehouse/authn/rpc/signup — AuthnService.Signup (POST /v1/signup, behaviour.md §3.2). */
import { signup } from '../domain/signup.ts';
import type { AuthnHandler, RpcContext } from './deps.ts';
import { mfaChallengesOf } from './mfa.ts';
import { outcomeResponse, profileFieldsOf } from './wire.ts';

/**
 * Signs up and logs in (session cookies), or mails a verification link. `is_multi_factor_auth_enabled`
 * is accepted and ignored (graphql.md D5).
 * @throws AppError as {@link signup}
 */
export const signupRpc = (c: RpcContext): AuthnHandler<'Signup'> => async (req, ctx) => outcomeResponse(ctx, c.options, await signup(c, mfaChallengesOf(c.mfa, ctx), {
  email: req.email, phoneNumber: req.phone_number, password: req.password, confirmPassword: req.confirm_password,
  ...profileFieldsOf(req), picture: req.picture, roles: req.roles, scope: req.scope,
  redirectUri: req.redirect_uri, state: req.state, appData: req.app_data,
}));
