/**
 * @module mfa/graphql/resolvers
 * Binds the mfa subgraph's root fields to the same handlers as the gRPC server (ARCHITECTURE §3).
 */
import type { GraphQLSchema } from 'graphql';
import { bindResolvers, buildSubgraph, serviceDescriptor, type HandlerMap } from '@gatehouse/rpc';
import { mfaTypeDefs } from './schema.ts';

const p = (rpc: string) => ({ rpc, arg: 'params' });

/** Builds the mfa subgraph schema over `handlers` (proto method name → handler). */
export function createMfaSubgraph(handlers: HandlerMap): GraphQLSchema {
  return buildSubgraph(mfaTypeDefs, bindResolvers(serviceDescriptor('mfa'), handlers, {
    Mutation: {
      verify_otp: p('VerifyOtp'),
      resend_otp: p('ResendOtp'),
    },
  }));
}
