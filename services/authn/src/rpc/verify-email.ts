/** @module @gatehouse/authn/rpc/verify-email — AuthnService.VerifyEmail (POST /v1/verify_email, behaviour.md §3.4). */
import { verifyEmail } from '../domain/verify-email.ts';
import type { AuthnHandler, RpcContext } from './deps.ts';
import { mfaChallengesOf } from './mfa.ts';
import { outcomeResponse } from './wire.ts';

/**
 * Redeems a verification token and logs the user in (session cookies), or answers the MFA gate's
 * challenge/offer (the `mfa` cookie). @throws AppError as {@link verifyEmail}
 */
export const verifyEmailRpc = (c: RpcContext): AuthnHandler<'VerifyEmail'> => async (req, ctx) =>
  outcomeResponse(ctx, c.options, await verifyEmail(c, mfaChallengesOf(c.mfa, ctx), { token: req.token, state: req.state }));
