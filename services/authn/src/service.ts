/**
 * @module @gatehouse/authn/service
 * createAuthnService(deps) → { handlers }: the transport-free authn RPCs, keyed by proto method name.
 */
import type { HandlerMap } from '@gatehouse/rpc';
import { completeMfaLogin, getUserById, type CompleteMfaLoginRequest } from './domain/complete-mfa.ts';
import { createAuthnContext, type AuthnDeps } from './domain/deps.ts';
import { deactivateAccountHandler } from './handlers/deactivate-account.ts';
import { getJwksHandler } from './handlers/get-jwks.ts';
import { getOpenidConfigurationHandler } from './handlers/get-openid-configuration.ts';
import { loginHandler } from './handlers/login.ts';
import { magicLinkLoginHandler } from './handlers/magic-link-login.ts';
import { forgotPasswordHandler, resetPasswordHandler } from './handlers/password-reset.ts';
import { resendVerifyEmailHandler } from './handlers/resend-verify-email.ts';
import { verifyEmailHandler, verifyEmailLinkHandler } from './handlers/verify-email.ts';
import { logoutHandler } from './handlers/logout.ts';
import { metaHandler } from './handlers/meta.ts';
import { profileHandler } from './handlers/profile.ts';
import { revokeHandler } from './handlers/revoke.ts';
import { sessionHandler } from './handlers/session.ts';
import { signupHandler } from './handlers/signup.ts';
import { updateProfileHandler } from './handlers/update-profile.ts';
import { validateJwtTokenHandler } from './handlers/validate-jwt-token.ts';
import { validateSessionHandler } from './handlers/validate-session.ts';

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
    handlers: {
      Signup: signupHandler(c),
      Login: loginHandler(c),
      Logout: logoutHandler(c),
      Profile: profileHandler(c),
      UpdateProfile: updateProfileHandler(c),
      Session: sessionHandler(c),
      Revoke: revokeHandler(c),
      ValidateJwtToken: validateJwtTokenHandler(c),
      ValidateSession: validateSessionHandler(c),
      DeactivateAccount: deactivateAccountHandler(c),
      Meta: metaHandler(c),
      GetJwks: getJwksHandler(c),
      GetOpenidConfiguration: getOpenidConfigurationHandler(c),
      MagicLinkLogin: magicLinkLoginHandler(c),
      VerifyEmail: verifyEmailHandler(c),
      VerifyEmailLink: verifyEmailLinkHandler(c),
      ResendVerifyEmail: resendVerifyEmailHandler(c),
      ForgotPassword: forgotPasswordHandler(c),
      ResetPassword: resetPasswordHandler(c),
    },
    internalHandlers: {
      CompleteMfaLogin: (req, ctx) => completeMfaLogin(c, ctx, req as CompleteMfaLoginRequest),
      GetUser: (req) => getUserById(c, String((req as { user_id?: string }).user_id ?? '')),
    },
  };
}
