/**
 * @module authz/graphql/resolvers
 * Binds the authz subgraph's root fields to the same handlers as the gRPC server.
 */
import type { GraphQLSchema } from 'graphql';
import { bindResolvers, buildSubgraph, protoBindings, serviceDescriptor, type HandlerMap } from '@gatehouse/rpc';
import { authzTypeDefs } from './schema.ts';

/**
 * Root field → AuthzService RPC, from the protos' `(gatehouse.common.v1.graphql)` options and the subgraph SDL
 * (Query or Mutation, the argument carrying the request, a list field's response field).
 */
export const authzBindings = protoBindings(serviceDescriptor('authz'), authzTypeDefs);

/** Builds the authz subgraph schema over `handlers` (proto method name → handler). */
export function createAuthzSubgraph(handlers: HandlerMap): GraphQLSchema {
  return buildSubgraph(authzTypeDefs, bindResolvers(serviceDescriptor('authz'), handlers, authzBindings));
}
