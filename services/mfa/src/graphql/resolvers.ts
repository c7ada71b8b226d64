/**
 * @module mfa/graphql/resolvers
 * Binds the mfa subgraph's root fields to the same handlers as the gRPC server (ARCHITECTURE §3).
 */
import type { GraphQLSchema } from 'graphql';
import { bindResolvers, buildSubgraph, type FieldBinding, type ServiceImplementation } from '@gatehouse/rpc';
import { mfaTypeDefs } from './schema.ts';

const p = (rpc: string): FieldBinding => ({ rpc, arg: 'params' });
/** the request's fields are the field's top-level arguments (graphql.md §2 WebAuthn rule) */
const top = (rpc: string): FieldBinding => ({ rpc, arg: '*' });

/**
 * Root field → MfaService RPC (graphql.md §2): the argument holding the request, and the response
 * field that carries a bare GraphQL list (REST wraps it, graphql.md D7).
 */
export const mfaBindings = {
  Query: {
    webauthn_credentials: { rpc: 'WebauthnCredentials', arg: null, unwrap: 'webauthn_credentials' },
  },
  Mutation: {
    resend_otp: p('ResendOtp'),
    webauthn_registration_options: top('WebauthnRegistrationOptions'),
    webauthn_login_options: top('WebauthnLoginOptions'),
    webauthn_delete_credential: top('WebauthnDeleteCredential'),
  },
} satisfies Parameters<typeof bindResolvers>[2];

/** Builds the mfa subgraph schema over the public mfa service. */
export function createMfaSubgraph(service: ServiceImplementation<'gatehouse.mfa.v1.MfaService'>): GraphQLSchema {
  return buildSubgraph(mfaTypeDefs, bindResolvers(service.desc, service.handlers, mfaBindings));
}
