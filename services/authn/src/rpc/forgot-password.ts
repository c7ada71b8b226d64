/** @module @gatehouse/authn/rpc/forgot-password — AuthnService.ForgotPassword (POST /v1/forgot_password, behaviour.md §3.4). */
import { auditRecord } from '@gatehouse/auth';
import { forgotPassword, RESET_LINK_SENT, RESET_OTP_SENT } from '../domain/password-reset.ts';
import type { AuthnHandler, RpcContext } from './deps.ts';
import { mfaChallengesOf } from './mfa.ts';

/**
 * Mails a reset link (email leg), or has mfa text a code and set the `mfa` cookie (phone leg); one
 * answer per leg whether or not the account exists. @throws AppError as {@link forgotPassword}
 */
export const forgotPasswordRpc = (c: RpcContext): AuthnHandler<'ForgotPassword'> => async (req, ctx) => {
  const leg = await forgotPassword(c, { email: req.email, phoneNumber: req.phone_number, state: req.state, redirectUri: req.redirect_uri },
    mfaChallengesOf(c.mfa, ctx), (action, o) => auditRecord(ctx, action, o));
  return leg === 'phone' ? { message: RESET_OTP_SENT, should_show_mobile_otp_screen: true } : { message: RESET_LINK_SENT, should_show_mobile_otp_screen: false };
};
