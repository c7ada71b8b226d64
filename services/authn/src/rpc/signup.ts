/** @module @gatehouse/authn/rpc/signup — AuthnService.Signup (POST /v1/signup, behaviour.md §3.2). */
import { auditRecord } from '@gatehouse/auth';
import { signup } from '../domain/signup.ts';
import { recordUserAction } from './audit.ts';
import type { AuthnHandler, RpcContext } from './deps.ts';
import { mfaChallengesOf } from './mfa.ts';
import { outcomeResponse, profileFieldsOf } from './wire.ts';

/**
 * Signs up and logs in (session cookies), mails a verification link, or texts a code (phone
 * verification; the mfa service sets the `mfa` cookie). `is_multi_factor_auth_enabled`
 * is accepted and ignored (graphql.md D5). Audit `user.signup` (behaviour.md §5.7): recorded here
 * for the account the call created, or, with email verification on, by the domain with the account
 * after the answer (issue 30 §6).
 * @throws AppError as {@link signup}
 */
export const signupRpc = (c: RpcContext): AuthnHandler<'Signup'> => async (req, ctx) => {
  const outcome = await signup(c, mfaChallengesOf(c.mfa, ctx), {
    email: req.email, phoneNumber: req.phone_number, password: req.password, confirmPassword: req.confirm_password,
    ...profileFieldsOf(req), picture: req.picture, roles: req.roles, scope: req.scope,
    redirectUri: req.redirect_uri, state: req.state, appData: req.app_data,
  }, (action, o) => auditRecord(ctx, action, o));
  if (outcome.createdUserId) await recordUserAction(c, ctx, 'user.signup', { userId: outcome.createdUserId, email: req.email ?? null });
  return outcomeResponse(ctx, c.options, outcome);
};
