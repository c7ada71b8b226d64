/**
 * @module authn/graphql/resolvers
 * Binds the authn subgraph's root fields to the same handlers the gRPC server uses
 * (ARCHITECTURE §3), and the deprecated operations to their fixed errors (graphql.md §1.3).
 */
import type { GraphQLSchema } from 'graphql';
import { alwaysFails, bindResolvers, buildSubgraph, serviceDescriptor, toGraphqlError, type FieldBinding, type HandlerMap, type SubgraphContext } from '@gatehouse/rpc';
import { authnTypeDefs } from './schema.ts';

const p = (rpc: string): FieldBinding => ({ rpc, arg: 'params' });
const none = (rpc: string): FieldBinding => ({ rpc, arg: null });

/** Root field → AuthnService RPC and the argument holding its request (graphql.md §2). */
export const authnBindings = {
  Query: {
    meta: none('Meta'),
    session: p('Session'),
    profile: none('Profile'),
    validate_jwt_token: p('ValidateJwtToken'),
    validate_session: p('ValidateSession'),
    _users: p('Users'),
    _user: p('User'),
    _verification_requests: p('VerificationRequests'),
    _client: p('Client'),
    _clients: p('Clients'),
    _trusted_issuer: p('TrustedIssuer'),
    _trusted_issuers: p('TrustedIssuers'),
  },
  Mutation: {
    signup: p('Signup'),
    login: p('Login'),
    magic_link_login: p('MagicLinkLogin'),
    logout: none('Logout'),
    update_profile: p('UpdateProfile'),
    verify_email: p('VerifyEmail'),
    resend_verify_email: p('ResendVerifyEmail'),
    forgot_password: p('ForgotPassword'),
    reset_password: p('ResetPassword'),
    revoke: p('Revoke'),
    deactivate_account: none('DeactivateAccount'),
    _delete_user: p('DeleteUser'),
    _update_user: p('UpdateUser'),
    _revoke_access: { rpc: 'RevokeAccess', arg: 'param' },
    _enable_access: { rpc: 'EnableAccess', arg: 'param' },
    _invite_members: p('InviteMembers'),
    _create_client: p('CreateClient'),
    _update_client: p('UpdateClient'),
    _delete_client: p('DeleteClient'),
    _rotate_client_secret: p('RotateClientSecret'),
    _add_trusted_issuer: p('AddTrustedIssuer'),
    _update_trusted_issuer: p('UpdateTrustedIssuer'),
    _delete_trusted_issuer: p('DeleteTrustedIssuer'),
    // the MFA completions that issue a session (issue 14)
    verify_otp: p('VerifyOtp'),
    skip_mfa_setup: p('SkipMfaSetup'),
    lock_mfa: p('LockMfa'),
    email_otp_mfa_setup: p('EmailOtpMfaSetup'),
    sms_otp_mfa_setup: p('SmsOtpMfaSetup'),
    totp_mfa_setup: p('TotpMfaSetup'),
    webauthn_registration_verify: p('WebauthnRegistrationVerify'),
    webauthn_login_verify: p('WebauthnLoginVerify'),
  },
} satisfies Parameters<typeof bindResolvers>[2];

/** Authorizer's mobile operations: always `unimplemented`, no auth check (graphql.md §1.3). */
export const authnFixedErrors = {
  Mutation: {
    mobile_signup: alwaysFails('unimplemented', 'deprecated, use signup with mobile phone_number'),
    mobile_login: alwaysFails('unimplemented', 'deprecated, use login with mobile phone_number'),
  },
};

/** `InviteMembersResponse.Users` is Authorizer's name for `users`, kept as an alias (graphql.md D10). */
const InviteMembersResponse = { Users: (parent: { users?: unknown }) => parent.users };

/**
 * Builds the authn subgraph schema over `handlers` (proto method name → handler). `internal` serves
 * the `User` entity to other subgraphs (`GetUser`, graphql.md §5.2: `__resolveReference` loads the row).
 */
export function createAuthnSubgraph(handlers: HandlerMap, internal: HandlerMap): GraphQLSchema {
  const resolvers = bindResolvers(serviceDescriptor('authn'), handlers, authnBindings);
  Object.assign(resolvers.Mutation!, authnFixedErrors.Mutation);
  const getUser = serviceDescriptor('authn.internal').methods.get('GetUser')!;
  const User = {
    async __resolveReference(ref: { id?: unknown }, ctx: SubgraphContext) {
      try {
        return getUser.normalizeResponse(await internal.GetUser!({ user_id: String(ref.id ?? '') }, ctx.callContext));
      } catch (e) {
        throw toGraphqlError(e);
      }
    },
  };
  return buildSubgraph(authnTypeDefs, { ...resolvers, User, InviteMembersResponse });
}
