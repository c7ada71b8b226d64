/** @module @gatehouse/authn/rpc/reset-password — AuthnService.ResetPassword (POST /v1/reset_password, behaviour.md §3.4). */
import { PASSWORD_UPDATED, resetPassword } from '../domain/password-reset.ts';
import { recordUserAction } from './audit.ts';
import type { AuthnHandler, RpcContext } from './deps.ts';

/** Sets a new password with a link token; no tokens, no cookies. @throws AppError as {@link resetPassword} */
export const resetPasswordRpc = (c: RpcContext): AuthnHandler<'ResetPassword'> => async (req, ctx) => {
  const done = await resetPassword(c, { token: req.token, otp: req.otp, phoneNumber: req.phone_number, password: req.password, confirmPassword: req.confirm_password });
  await recordUserAction(c, ctx, 'user.password_reset', { userId: done.userId });
  return { message: PASSWORD_UPDATED };
};
