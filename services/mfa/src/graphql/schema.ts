/**
 * @module mfa/graphql/schema
 * The mfa subgraph: the MFA and passkey operations that issue no session (graphql.md §2, §5.1), with
 * the names of graphql.md §2-§3. lock_mfa and the email/SMS/TOTP setups are authn's (issue 16). The completions that issue one (verify_otp, skip_mfa_setup,
 * webauthn_registration_verify, webauthn_login_verify) are authn's (issue 14); clients see the same
 * composed schema. `AuthResponse` and `Response` are shared value types identical
 * to authn's; `User` is authn's entity, referenced by id: the gateway fetches its fields from authn
 * (graphql.md §5.2).
 */
import { gql } from 'graphql-tag';
import { AUTH_RESPONSE_SDL, SHARED_SCALARS_SDL } from '@gatehouse/rpc';

export const mfaTypeDefs = gql`
  extend schema @link(url: "https://specs.apollo.dev/federation/v2.3", import: ["@key", "@shareable"])
  ${SHARED_SCALARS_SDL}

  type Query {
    webauthn_credentials: [WebauthnCredentialInfo!]!
  }

  type Mutation {
    resend_otp(params: ResendOTPRequest!): Response!
    webauthn_registration_options(email: String, phone_number: String): WebauthnRegistrationOptionsResponse!
    webauthn_login_options(email: String): WebauthnLoginOptionsResponse!
    webauthn_delete_credential(id: ID!): Response!
  }

  type User @key(fields: "id", resolvable: false) {
    id: ID!
  }

  ${AUTH_RESPONSE_SDL}

  type Response @shareable {
    message: String!
  }

  type WebauthnRegistrationOptionsResponse {
    options: String!
  }

  type WebauthnLoginOptionsResponse {
    options: String!
  }

  type WebauthnCredentialInfo {
    id: ID!
    name: String!
    transports: [String!]
    created_at: Int64
    updated_at: Int64
    last_used_at: Int64
  }

  input ResendOTPRequest {
    email: String
    phone_number: String
    state: String
  }
`;
