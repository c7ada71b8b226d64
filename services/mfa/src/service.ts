/**
 * @module @gatehouse/mfa/service
 * createMfaService(deps) → { handlers, internalHandlers }: the transport-free mfa RPCs keyed by proto
 * method name: `MfaService` (public) and `MfaInternal` (service-to-service).
 */
import { defineService, serviceDescriptor, type HandlerMap } from '@gatehouse/rpc';
import { openOtpChallenge } from './domain/challenge.ts';
import { createMfaContext, type MfaDeps } from './domain/deps.ts';
import { resendOtp } from './domain/resend-otp.ts';
import { verifyOtp } from './domain/verify-otp.ts';

export type { AuthnInternalClient, MfaDeps } from './domain/deps.ts';
export type { MfaOptions } from './domain/options.ts';

export interface MfaService {
  /** proto `gatehouse.mfa.v1.MfaService` */
  handlers: HandlerMap;
  /** proto `gatehouse.mfa.v1.MfaInternal` */
  internalHandlers: HandlerMap;
}

/**
 * Builds the mfa service. Requests and responses are the spec's snake_case shapes (normalised by
 * the proto codecs); handlers push `Set-Cookie` values into `ctx.setCookies` and throw AppError.
 */
export function createMfaService(deps: MfaDeps): MfaService {
  const c = createMfaContext(deps);
  return {
    handlers: defineService(serviceDescriptor('mfa'), {
      VerifyOtp: (req, ctx) => verifyOtp(c, ctx, req),
      ResendOtp: (req, ctx) => resendOtp(c, ctx, req),
    }).handlers,
    internalHandlers: defineService(serviceDescriptor('mfa.internal'), {
      OpenOtpChallenge: (req, ctx) => openOtpChallenge(c, ctx, req),
    }).handlers,
  };
}
