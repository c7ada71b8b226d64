/** @module @gatehouse/authn/rpc/verify-otp — AuthnService.VerifyOtp (POST /v1/verify_otp, behaviour.md §4.3). */
import { OTP_VERIFIED, verifyOtp } from '../domain/complete-mfa.ts';
import { recordUserAction } from './audit.ts';
import type { AuthnHandler, RpcContext } from './deps.ts';
import { auditOf, mfaChallengesOf } from './mfa.ts';
import { issuedResponse } from './wire.ts';

/**
 * Completes the caller's MFA session (its `mfa` cookie, cleared by mfa) with a code and issues the
 * withheld tokens with session cookies.
 * @throws AppError as {@link verifyOtp}
 */
export const verifyOtpRpc = (c: RpcContext): AuthnHandler<'VerifyOtp'> => async (req, ctx) => {
  const issued = await verifyOtp(c, mfaChallengesOf(c.mfa, ctx), { otp: req.otp, isTotp: req.is_totp, email: req.email, phoneNumber: req.phone_number, state: req.state }, auditOf(ctx));
  await recordUserAction(c, ctx, 'user.login_success', { userId: issued.user.id, email: issued.user.email, details: { method: req.is_totp ? 'totp' : 'otp' } });
  return issuedResponse(ctx, c.options, OTP_VERIFIED, issued);
};
