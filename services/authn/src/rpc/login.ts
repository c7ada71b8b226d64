/** @module @gatehouse/authn/rpc/login — AuthnService.Login (POST /v1/login, behaviour.md §3.3). */
import { login } from '../domain/login.ts';
import { AppError } from '@gatehouse/errors';
import { recordUserAction } from './audit.ts';
import type { AuthnHandler, RpcContext } from './deps.ts';
import { mfaChallengesOf } from './mfa.ts';
import { outcomeResponse } from './wire.ts';

/**
 * Logs in (session cookies), or, for an unverified email, has mfa mail a code (its `mfa` cookie).
 * @throws AppError as {@link login}
 */
export const loginRpc = (c: RpcContext): AuthnHandler<'Login'> => async (req, ctx) => {
  let outcome;
  try {
    outcome = await login(c, mfaChallengesOf(c.mfa, ctx), {
      email: req.email, phoneNumber: req.phone_number, password: req.password, roles: req.roles, scope: req.scope, state: req.state,
    });
  } catch (err) {
    if (err instanceof AppError && (err.code === 'unauthenticated' || err.code === 'resource_exhausted')) {
      await recordUserAction(c, ctx, 'user.login_failed', { email: req.email, details: { reason: err.code === 'unauthenticated' ? 'invalid_credentials' : 'locked_out' } });
    }
    throw err;
  }
  if (outcome.issued) await recordUserAction(c, ctx, 'user.login_success', { userId: outcome.issued.user.id, email: outcome.issued.user.email, details: { method: req.email ? 'basic_auth' : 'mobile_basic_auth' } });
  return outcomeResponse(ctx, c.options, outcome);
};
