/**
 * @module @gatehouse/authn/service
 * createAuthnService(deps): authn's handler maps, one entry per RPC of `AuthnService` (public) and
 * `AuthnInternal` (service-to-service), each from rpc/<method>.ts. The map only: who may call is each
 * RPC's auth class (proto), enforced by the guard before any handler; rpc/ turns the wire into domain
 * values and back; the logic is in domain/. RPCs the contract declares and this release does not
 * serve yet answer `unimplemented` (after the auth-class check).
 */
import { createAuthGuard } from '@gatehouse/auth';
import { defineService, serviceDescriptor, type HandlerMap } from '@gatehouse/rpc';
import { deactivateAccountRpc } from './rpc/deactivate-account.ts';
import { forgotPasswordRpc } from './rpc/forgot-password.ts';
import { getJwksRpc } from './rpc/get-jwks.ts';
import { getOpenidConfigurationRpc } from './rpc/get-openid-configuration.ts';
import { createRpcContext, type AuthnDeps } from './rpc/deps.ts';
import { findUsersRpc, provisionUserRpc, setUserActiveRpc, updateProvisionedUserRpc } from './rpc/scim-users.ts';
import { getUserRpc } from './rpc/get-user.ts';
import { loginRpc } from './rpc/login.ts';
import { endCookieSessionRpc, logoutRpc } from './rpc/logout.ts';
import { magicLinkLoginRpc } from './rpc/magic-link-login.ts';
import { metaRpc } from './rpc/meta.ts';
import { profileRpc } from './rpc/profile.ts';
import { resendVerifyEmailRpc } from './rpc/resend-verify-email.ts';
import { resetPasswordRpc } from './rpc/reset-password.ts';
import { revokeRpc } from './rpc/revoke.ts';
import { sessionRpc } from './rpc/session.ts';
import { signupRpc } from './rpc/signup.ts';
import { updateProfileRpc } from './rpc/update-profile.ts';
import { validateJwtTokenRpc } from './rpc/validate-jwt-token.ts';
import { validateSessionRpc } from './rpc/validate-session.ts';
import { verifyEmailRpc } from './rpc/verify-email.ts';
import { verifyEmailLinkRpc } from './rpc/verify-email-link.ts';
import { completeFederatedLoginRpc } from './rpc/federated.ts';
import { socialCallbackRpc, socialLoginRpc } from './rpc/social.ts';
import { createSocialUpstream } from './social/upstream.ts';
import { emailOtpMfaSetupRpc, lockMfaRpc, skipMfaSetupRpc, smsOtpMfaSetupRpc, totpMfaSetupRpc } from './rpc/mfa-gate.ts';
import { verifyOtpRpc } from './rpc/verify-otp.ts';
import { deleteUserRpc } from './rpc/delete-user.ts';
import { enableAccessRpc } from './rpc/enable-access.ts';
import { inviteMembersRpc } from './rpc/invite-members.ts';
import { revokeAccessRpc } from './rpc/revoke-access.ts';
import { revokeUserSessionsRpc } from './rpc/revoke-user-sessions.ts';
import { updateUserRpc } from './rpc/update-user.ts';
import { userRpc } from './rpc/user.ts';
import { usersRpc } from './rpc/users.ts';
import { verificationRequestsRpc } from './rpc/verification-requests.ts';
import { webauthnLoginVerifyRpc, webauthnRegistrationVerifyRpc } from './rpc/webauthn.ts';
import {
  addTrustedIssuerRpc, clientRpc, clientsRpc, createClientRpc, deleteClientRpc, deleteTrustedIssuerRpc, rotateClientSecretRpc,
  trustedIssuerRpc, trustedIssuersRpc, updateClientRpc, updateTrustedIssuerRpc,
} from './rpc/clients.ts';
import { manageRegisteredClientRpc, registerClientRpc } from './rpc/registration.ts';
import { revokeOtherSessionsRpc, revokeSessionRpc, sessionsRpc } from './rpc/user-sessions.ts';
import { callOriginOf, withCallOrigin } from './domain/call-origin.ts';
import { consentGrantsRpc, revokeConsentGrantRpc, revokeUserConsentGrantRpc, userConsentGrantsRpc } from './rpc/consent.ts';
import { authorizeRpc, deviceAuthorizationRpc, deviceVerificationRpc, endSessionRpc, oauthIntrospectRpc, oauthRevokeRpc, oauthTokenRpc, pushedAuthorizationRequestRpc, userinfoRpc } from './rpc/oauth.ts';

export type { PermissionChecker } from './domain/deps.ts';
export type { AuthnDeps, MfaInternalClient } from './rpc/deps.ts';
export type { AuthnOptions } from './domain/options.ts';
export { createUserActivityCheck } from './domain/user.ts';

export interface AuthnService {
  /** proto `gatehouse.authn.v1.AuthnService` */
  handlers: HandlerMap;
  /** proto `gatehouse.authn.v1.AuthnInternal` (service-to-service; never routed by the gateway) */
  internalHandlers: HandlerMap;
}

/**
 * Builds the authn service. Requests and responses are the generated contract's types (snake_case
 * wire fields); handlers push `Set-Cookie` values into `ctx.setCookies` and throw AppError.
 * @throws AppError `invalid_argument` when `--custom-access-token-script` does not compile
 */
export function createAuthnService(deps: AuthnDeps): AuthnService {
  const c = createRpcContext(deps);
  const social = createSocialUpstream(c.options, c.logger);
  return {
    handlers: withCallOrigins(defineService(serviceDescriptor('authn'), {
      Signup: signupRpc(c),
      Login: loginRpc(c),
      Logout: logoutRpc(c),
      Profile: profileRpc(c),
      UpdateProfile: updateProfileRpc(c),
      Session: sessionRpc(c),
      Revoke: revokeRpc(c),
      ValidateJwtToken: validateJwtTokenRpc(c),
      ValidateSession: validateSessionRpc(c),
      DeactivateAccount: deactivateAccountRpc(c),
      Meta: metaRpc(c),
      GetJwks: getJwksRpc(c),
      GetOpenidConfiguration: getOpenidConfigurationRpc(c),
      MagicLinkLogin: magicLinkLoginRpc(c),
      VerifyEmail: verifyEmailRpc(c),
      VerifyEmailLink: verifyEmailLinkRpc(c),
      ResendVerifyEmail: resendVerifyEmailRpc(c),
      ForgotPassword: forgotPasswordRpc(c),
      ResetPassword: resetPasswordRpc(c),
      VerifyOtp: verifyOtpRpc(c),
      SkipMfaSetup: skipMfaSetupRpc(c),
      LockMfa: lockMfaRpc(c),
      EmailOtpMfaSetup: emailOtpMfaSetupRpc(c),
      SmsOtpMfaSetup: smsOtpMfaSetupRpc(c),
      TotpMfaSetup: totpMfaSetupRpc(c),
      WebauthnRegistrationVerify: webauthnRegistrationVerifyRpc(c),
      WebauthnLoginVerify: webauthnLoginVerifyRpc(c),
      Users: usersRpc(c),
      User: userRpc(c),
      UpdateUser: updateUserRpc(c),
      DeleteUser: deleteUserRpc(c),
      VerificationRequests: verificationRequestsRpc(c),
      RevokeAccess: revokeAccessRpc(c),
      EnableAccess: enableAccessRpc(c),
      InviteMembers: inviteMembersRpc(c),
      CreateClient: createClientRpc(c),
      UpdateClient: updateClientRpc(c),
      DeleteClient: deleteClientRpc(c),
      RotateClientSecret: rotateClientSecretRpc(c),
      Client: clientRpc(c),
      Clients: clientsRpc(c),
      AddTrustedIssuer: addTrustedIssuerRpc(c),
      UpdateTrustedIssuer: updateTrustedIssuerRpc(c),
      DeleteTrustedIssuer: deleteTrustedIssuerRpc(c),
      TrustedIssuer: trustedIssuerRpc(c),
      TrustedIssuers: trustedIssuersRpc(c),
      ConsentGrants: consentGrantsRpc(c),
      RevokeConsentGrant: revokeConsentGrantRpc(c),
      UserConsentGrants: userConsentGrantsRpc(c),
      RevokeUserConsentGrant: revokeUserConsentGrantRpc(c),
      Sessions: sessionsRpc(c),
      RevokeSession: revokeSessionRpc(c),
      RevokeOtherSessions: revokeOtherSessionsRpc(c),
      RevokeUserSessions: revokeUserSessionsRpc(c),
      OauthToken: oauthTokenRpc(c),
      Authorize: authorizeRpc(c),
      OauthRevoke: oauthRevokeRpc(c),
      OauthIntrospect: oauthIntrospectRpc(c),
      Userinfo: userinfoRpc(c),
      RegisterClient: registerClientRpc(c),
      ManageRegisteredClient: manageRegisteredClientRpc(c),
      PushedAuthorizationRequest: pushedAuthorizationRequestRpc(c),
      DeviceAuthorization: deviceAuthorizationRpc(c),
      DeviceVerification: deviceVerificationRpc(c),
      EndSession: endSessionRpc(c),
      SocialLogin: socialLoginRpc(c, social),
      SocialCallback: socialCallbackRpc(c, social),
    }, createAuthGuard(c.authenticator)).handlers),
    internalHandlers: withCallOrigins(defineService(serviceDescriptor('authn.internal'), {
      GetUser: getUserRpc(c),
      GetMeta: metaRpc(c),
      ProvisionUser: provisionUserRpc(c),
      FindUsers: findUsersRpc(c),
      UpdateProvisionedUser: updateProvisionedUserRpc(c),
      SetUserActive: setUserActiveRpc(c),
      CompleteFederatedLogin: completeFederatedLoginRpc(c),
      EndCookieSession: endCookieSessionRpc(c),
    }).handlers),
  };
}

/**
 * Runs every handler of `handlers` with its call's origin (User-Agent, client IP) current, so the
 * sessions it opens record their device (issue 33, `domain/call-origin.ts`).
 */
function withCallOrigins(handlers: HandlerMap): HandlerMap {
  return Object.fromEntries(Object.entries(handlers).map(([name, handler]) => [name, ((req, ctx) =>
    withCallOrigin(callOriginOf(ctx.headers['user-agent'], ctx.clientIp), () => handler(req, ctx))) as HandlerMap[string]]));
}
