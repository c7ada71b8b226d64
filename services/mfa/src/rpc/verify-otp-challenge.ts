/** @module @gatehouse/mfa/rpc/verify-otp-challenge — MfaInternal.VerifyOtpChallenge: wire ↔ domain, and the `mfa` cookie. */
import type { mfa } from '@gatehouse/contracts';
import type { CallContext } from '@gatehouse/rpc';
import type { MfaContext } from '../domain/deps.ts';
import { verifyOtpChallenge } from '../domain/verify-otp.ts';
import { clearMfaCookieOn, mfaHandleOf } from './cookies.ts';

/** @throws AppError as {@link verifyOtpChallenge} */
export const verifyOtpChallengeRpc = (c: MfaContext) => async (req: mfa.VerifyOtpChallengeRequest, ctx: CallContext): Promise<mfa.MfaVerdict> => {
  const v = await verifyOtpChallenge(c, mfaHandleOf(ctx), { otp: req.otp, isTotp: req.is_totp, email: req.email, phoneNumber: req.phone_number });
  clearMfaCookieOn(ctx, c.options);
  return {
    user_id: v.userId, verified_channel: v.verifiedChannel, verified_contact: v.verifiedContact,
    login_method: v.loginMethod, roles: v.roles, scope: v.scope, state: v.state, auth_time: v.authTime,
    amr: v.amr, enrolled_method: v.enrolledMethod,
  };
};
