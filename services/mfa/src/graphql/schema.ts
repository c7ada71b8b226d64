/**
 * @module mfa/graphql/schema
 * The mfa subgraph: `resend_otp` with the names of graphql.md §2-§3 (`verify_otp` ends in a session,
 * so authn serves it, issue 14 §5; the API schema clients see is the same). `AuthResponse`
 * and `Response` are shared value types identical to authn's; `User` is authn's entity, referenced
 * by id: the gateway fetches its fields from authn (graphql.md §5.2).
 */
import { gql } from 'graphql-tag';
import { AUTH_RESPONSE_SDL, SHARED_SCALARS_SDL } from '@gatehouse/rpc';

export const mfaTypeDefs = gql`
  extend schema @link(url: "https://specs.apollo.dev/federation/v2.3", import: ["@key", "@shareable"])
  ${SHARED_SCALARS_SDL}

  type Mutation {
    resend_otp(params: ResendOTPRequest!): Response!
  }

  type User @key(fields: "id", resolvable: false) {
    id: ID!
  }

  ${AUTH_RESPONSE_SDL}

  type Response @shareable {
    message: String!
  }

  input ResendOTPRequest {
    email: String
    phone_number: String
    state: String
  }
`;
