/** @module @gatehouse/mfa/rpc/resend-otp — MfaService.ResendOtp (POST /v1/resend_otp): wire ↔ domain, and the `mfa` cookie. */
import { auditRecord } from '@gatehouse/auth';
import type { common, mfa } from '@gatehouse/contracts';
import type { CallContext } from '@gatehouse/rpc';
import type { MfaContext } from '../domain/deps.ts';
import { OTP_SENT, resendOtp } from '../domain/resend-otp.ts';
import { mfaHandleOf, setMfaCookie } from './cookies.ts';

/** @throws AppError as {@link resendOtp} */
export const resendOtpRpc = (c: MfaContext) => async (req: mfa.ResendOtpRequest, ctx: CallContext): Promise<common.Response> => {
  const armed = await resendOtp(c, mfaHandleOf(ctx), { email: req.email, phoneNumber: req.phone_number }, (action, o) => auditRecord(ctx, action, o));
  setMfaCookie(ctx, c.options, armed);
  return { message: OTP_SENT };
};
