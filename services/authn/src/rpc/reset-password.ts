/** @module @gatehouse/authn/rpc/reset-password — AuthnService.ResetPassword (POST /v1/reset_password, behaviour.md §3.4). */
import { auditRecord } from '@gatehouse/auth';
import { PASSWORD_UPDATED, resetPassword } from '../domain/password-reset.ts';
import type { AuthnHandler, RpcContext } from './deps.ts';
import { mfaChallengesOf } from './mfa.ts';

/**
 * Sets a new password with a link token, or with an OTP of the caller's `password_reset` MFA session
 * (its `mfa` cookie, cleared by mfa on success); no tokens, no session cookies.
 * @throws AppError as {@link resetPassword}
 */
export const resetPasswordRpc = (c: RpcContext): AuthnHandler<'ResetPassword'> => async (req, ctx) => {
  await resetPassword(c, { token: req.token, otp: req.otp, phoneNumber: req.phone_number, password: req.password, confirmPassword: req.confirm_password },
    mfaChallengesOf(c.mfa, ctx), (action, o) => auditRecord(ctx, action, o));
  return { message: PASSWORD_UPDATED };
};
