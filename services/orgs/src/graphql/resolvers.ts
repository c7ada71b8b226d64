/**
 * @module orgs/graphql/resolvers
 * The orgs subgraph's root fields → OrgsService RPCs (graphql.md §2), for
 * `bindResolvers(serviceDescriptor('orgs'), handlers, orgsBindings)`: the resolvers call the same
 * handlers as the gRPC server through the same proto codec (ARCHITECTURE §3).
 */
import { protoBindings, serviceDescriptor } from '@gatehouse/rpc';
import { orgsTypeDefs } from './schema.ts';

/**
 * Root field → OrgsService RPC, from the protos' `(gatehouse.common.v1.graphql)` options and the subgraph SDL
 * (Query or Mutation, the argument carrying the request, a list field's response field).
 */
export const orgsBindings = protoBindings(serviceDescriptor('orgs'), orgsTypeDefs);
