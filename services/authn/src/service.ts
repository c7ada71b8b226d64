/**
 * @module @gatehouse/authn/service
 * createAuthnService(deps) → { handlers }: the transport-free authn RPCs, keyed by proto method name.
 */
import { defineService, notImplemented, serviceDescriptor, type HandlerMap } from '@gatehouse/rpc';
import { getUserById, verifyOtp } from './domain/complete-mfa.ts';
import { createAuthnContext, type AuthnDeps } from './domain/deps.ts';
import { login } from './domain/login.ts';
import { magicLinkLogin } from './domain/magic-link.ts';
import { meta, openidConfiguration } from './domain/meta.ts';
import { forgotPassword, resetPassword } from './domain/password-reset.ts';
import { deactivateAccount, profile, updateProfile } from './domain/profile.ts';
import { resendVerifyEmail } from './domain/resend.ts';
import { logout, refreshSession, revoke } from './domain/session.ts';
import { signup } from './domain/signup.ts';
import { validateJwtToken, validateSession } from './domain/validate.ts';
import { verifyEmail, verifyEmailLinkTarget } from './domain/verify-email.ts';

export type { AuthnDeps, MfaInternalClient, PermissionChecker } from './domain/deps.ts';
export type { AuthnOptions } from './domain/options.ts';
export { createUserActivityCheck } from './domain/user.ts';

export interface AuthnService {
  /** proto `gatehouse.authn.v1.AuthnService` */
  handlers: HandlerMap;
  /** proto `gatehouse.authn.v1.AuthnInternal` (service-to-service; never routed by the gateway) */
  internalHandlers: HandlerMap;
}

/**
 * Builds the authn service. Requests and responses are the spec's snake_case JSON shapes; handlers
 * push `Set-Cookie` values into `ctx.setCookies` and throw AppError.
 * @throws AppError `invalid_argument` when `--custom-access-token-script` does not compile
 */
export function createAuthnService(deps: AuthnDeps): AuthnService {
  const c = createAuthnContext(deps);
  return {
    handlers: defineService(serviceDescriptor('authn'), {
      Signup: (req, ctx) => signup(c, ctx, req),
      Login: (req, ctx) => login(c, ctx, req),
      Logout: (_req, ctx) => logout(c, ctx),
      Profile: (_req, ctx) => profile(c, ctx),
      UpdateProfile: (req, ctx) => updateProfile(c, ctx, req),
      Session: (req, ctx) => refreshSession(c, ctx, req),
      Revoke: (req) => revoke(c, req),
      ValidateJwtToken: (req) => validateJwtToken(c, req),
      ValidateSession: (req) => validateSession(c, req),
      DeactivateAccount: (_req, ctx) => deactivateAccount(c, ctx),
      Meta: async () => meta(c),
      GetJwks: async () => c.jwt.jwks(),
      GetOpenidConfiguration: async () => openidConfiguration(c),
      MagicLinkLogin: (req) => magicLinkLogin(c, req),
      VerifyEmail: (req, ctx) => verifyEmail(c, ctx, req),
      VerifyEmailLink: (req, ctx) => verifyEmailLinkTarget(c, ctx, req),
      ResendVerifyEmail: (req) => resendVerifyEmail(c, req),
      ForgotPassword: (req) => forgotPassword(c, req),
      ResetPassword: (req) => resetPassword(c, req),
      VerifyOtp: (req, ctx) => verifyOtp(c, ctx, req),
      SkipMfaSetup: notImplemented,
      WebauthnRegistrationVerify: notImplemented,
      WebauthnLoginVerify: notImplemented,
      Users: notImplemented,
      User: notImplemented,
      UpdateUser: notImplemented,
      DeleteUser: notImplemented,
      VerificationRequests: notImplemented,
      RevokeAccess: notImplemented,
      EnableAccess: notImplemented,
      InviteMembers: notImplemented,
    }).handlers,
    internalHandlers: defineService(serviceDescriptor('authn.internal'), {
      GetUser: (req) => getUserById(c, req.user_id),
    }).handlers,
  };
}
