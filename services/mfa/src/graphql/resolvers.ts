/**
 * @module mfa/graphql/resolvers
 * Binds the mfa subgraph's root fields to the same handlers as the gRPC server (ARCHITECTURE §3).
 */
import type { GraphQLSchema } from 'graphql';
import { bindResolvers, buildSubgraph, type ServiceImplementation } from '@gatehouse/rpc';
import { mfaTypeDefs } from './schema.ts';

const p = (rpc: string) => ({ rpc, arg: 'params' });

/** Builds the mfa subgraph schema over the public mfa service. */
export function createMfaSubgraph(service: ServiceImplementation<'gatehouse.mfa.v1.MfaService'>): GraphQLSchema {
  return buildSubgraph(mfaTypeDefs, bindResolvers(service.desc, service.handlers, {
    Mutation: {
      resend_otp: p('ResendOtp'),
    },
  }));
}
