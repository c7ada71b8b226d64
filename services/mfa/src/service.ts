/**
 * @module @gatehouse/mfa/service
 * createMfaService(deps): mfa's handler maps, one entry per RPC of `MfaService` (public) and
 * `MfaInternal` (service-to-service), each from rpc/. RPCs the contract declares and this release
 * does not serve yet answer `unimplemented` (after the auth-class check of libs/rpc).
 */
import { createAuthGuard } from '@gatehouse/auth';
import { defineService, serviceDescriptor, type ServiceImplementation } from '@gatehouse/rpc';
import { createMfaContext, type MfaDeps } from './domain/deps.ts';
import {
  beginOtpEnrolmentRpc, beginTotpEnrolmentRpc, enrolledMfaMethodsRpc, lockMfaRpc, resetUserMfaRpc, skipMfaSetupRpc,
} from './rpc/enrolment.ts';
import { evaluateGateRpc } from './rpc/evaluate-gate.ts';
import { openOtpChallengeRpc } from './rpc/open-otp-challenge.ts';
import { verifyWebauthnLoginRpc, verifyWebauthnRegistrationRpc } from './rpc/passkey-verdicts.ts';
import { webauthnCredentialsRpc, webauthnDeleteCredentialRpc, webauthnLoginOptionsRpc, webauthnRegistrationOptionsRpc } from './rpc/passkeys.ts';
import { resendOtpRpc } from './rpc/resend-otp.ts';
import { verifyOtpChallengeRpc } from './rpc/verify-otp-challenge.ts';

export type { MfaDeps } from './domain/deps.ts';
export type { MfaOptions } from './domain/options.ts';

export interface MfaService {
  /** proto `gatehouse.mfa.v1.MfaService` */
  public: ServiceImplementation<'gatehouse.mfa.v1.MfaService'>;
  /** proto `gatehouse.mfa.v1.MfaInternal` */
  internal: ServiceImplementation<'gatehouse.mfa.v1.MfaInternal'>;
}

/** Builds the mfa service; handlers push `Set-Cookie` values into `ctx.setCookies` and throw AppError. */
export function createMfaService(deps: MfaDeps): MfaService {
  const c = createMfaContext(deps);
  return {
    public: defineService(serviceDescriptor('mfa'), {
      ResendOtp: resendOtpRpc(c),
      WebauthnRegistrationOptions: webauthnRegistrationOptionsRpc(c),
      WebauthnLoginOptions: webauthnLoginOptionsRpc(c),
      WebauthnCredentials: webauthnCredentialsRpc(c),
      WebauthnDeleteCredential: webauthnDeleteCredentialRpc(c),
    }, createAuthGuard(deps.authenticator)),
    internal: defineService(serviceDescriptor('mfa.internal'), {
      OpenOtpChallenge: openOtpChallengeRpc(c),
      VerifyOtpChallenge: verifyOtpChallengeRpc(c),
      EvaluateGate: evaluateGateRpc(c),
      SkipMfaSetup: skipMfaSetupRpc(c),
      LockMfa: lockMfaRpc(c),
      BeginOtpEnrolment: beginOtpEnrolmentRpc(c),
      BeginTotpEnrolment: beginTotpEnrolmentRpc(c),
      ResetUserMfa: resetUserMfaRpc(c),
      EnrolledMfaMethods: enrolledMfaMethodsRpc(c),
      VerifyWebauthnRegistration: verifyWebauthnRegistrationRpc(c),
      VerifyWebauthnLogin: verifyWebauthnLoginRpc(c),
    }),
  };
}
