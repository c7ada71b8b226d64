/** @module @gatehouse/authn/rpc/verify-email — AuthnService.VerifyEmail (POST /v1/verify_email, behaviour.md §3.4). */
import { verifyEmail } from '../domain/verify-email.ts';
import { recordUserAction } from './audit.ts';
import type { AuthnHandler, RpcContext } from './deps.ts';
import { mfaChallengesOf } from './mfa.ts';
import { outcomeResponse } from './wire.ts';

/**
 * Redeems a verification token and logs the user in (session cookies), or answers the MFA gate's
 * challenge/offer (the `mfa` cookie). Audit `user.email_verified` (behaviour.md §5.7).
 * @throws AppError as {@link verifyEmail}
 */
export const verifyEmailRpc = (c: RpcContext): AuthnHandler<'VerifyEmail'> => async (req, ctx) => {
  const outcome = await verifyEmail(c, mfaChallengesOf(c.mfa, ctx), { token: req.token, state: req.state });
  if (outcome.verifiedUser) await recordUserAction(c, ctx, 'user.email_verified', { userId: outcome.verifiedUser.id, email: outcome.verifiedUser.email });
  return outcomeResponse(ctx, c.options, outcome);
};
