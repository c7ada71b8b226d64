/** @module @gatehouse/authn/rpc/forgot-password — AuthnService.ForgotPassword (POST /v1/forgot_password, behaviour.md §3.4). */
import { forgotPassword, RESET_LINK_SENT } from '../domain/password-reset.ts';
import { recordUserAction } from './audit.ts';
import type { AuthnHandler, RpcContext } from './deps.ts';

/** Mails a reset link (the email leg; one answer whether or not the account exists). @throws AppError as {@link forgotPassword} */
export const forgotPasswordRpc = (c: RpcContext): AuthnHandler<'ForgotPassword'> => async (req, ctx) => {
  await forgotPassword(c, { email: req.email, phoneNumber: req.phone_number, state: req.state, redirectUri: req.redirect_uri });
  await recordUserAction(c, ctx, 'user.forgot_password_requested', { email: req.email });
  return { message: RESET_LINK_SENT, should_show_mobile_otp_screen: false };
};
