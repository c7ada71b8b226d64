/**
 * @module mfa/graphql/resolvers
 * Binds the mfa subgraph's root fields to the same handlers as the gRPC server (ARCHITECTURE §3).
 */
import type { GraphQLSchema } from 'graphql';
import { bindResolvers, buildSubgraph, protoBindings, serviceDescriptor, type ServiceImplementation } from '@gatehouse/rpc';
import { mfaTypeDefs } from './schema.ts';

/**
 * Root field → MfaService RPC, from the protos' `(gatehouse.common.v1.graphql)` options and the subgraph SDL
 * (Query or Mutation, the argument carrying the request, a list field's response field).
 */
export const mfaBindings = protoBindings(serviceDescriptor('mfa'), mfaTypeDefs);

/** Builds the mfa subgraph schema over the public mfa service. */
export function createMfaSubgraph(service: ServiceImplementation<'gatehouse.mfa.v1.MfaService'>): GraphQLSchema {
  return buildSubgraph(mfaTypeDefs, bindResolvers(service.desc, service.handlers, mfaBindings));
}
