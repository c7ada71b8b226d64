/** @module @gatehouse/authn/rpc/resend-verify-email — AuthnService.ResendVerifyEmail (POST /v1/resend_verify_email, behaviour.md §3.4). */
import { RESEND_MESSAGE, resendVerifyEmail } from '../domain/resend.ts';
import { recordUserAction } from './audit.ts';
import type { AuthnHandler, RpcContext } from './deps.ts';

/** Re-sends a pending link; one answer always. @throws AppError as {@link resendVerifyEmail} */
export const resendVerifyEmailRpc = (c: RpcContext): AuthnHandler<'ResendVerifyEmail'> => async (req, ctx) => {
  await resendVerifyEmail(c, { email: req.email, identifier: req.identifier, state: req.state });
  await recordUserAction(c, ctx, 'user.verify_email_resent', { email: req.email });
  return { message: RESEND_MESSAGE };
};
