/** @module @gatehouse/authn/rpc/verify-email — AuthnService.VerifyEmail (POST /v1/verify_email, behaviour.md §3.4). */
import { EMAIL_VERIFIED, verifyEmail } from '../domain/verify-email.ts';
import { recordUserAction } from './audit.ts';
import type { AuthnHandler, RpcContext } from './deps.ts';
import { issuedResponse } from './wire.ts';

/** Redeems a verification token and logs the user in (session cookies). @throws AppError as {@link verifyEmail} */
export const verifyEmailRpc = (c: RpcContext): AuthnHandler<'VerifyEmail'> => async (req, ctx) => {
  const issued = await verifyEmail(c, { token: req.token, state: req.state });
  await recordUserAction(c, ctx, 'user.email_verified', { userId: issued.user.id, email: issued.user.email });
  return issuedResponse(ctx, c.options, EMAIL_VERIFIED, issued);
};
