/**
 * @module authz/graphql/resolvers
 * Binds the authz subgraph's root fields to the same handlers as the gRPC server.
 */
import type { GraphQLSchema } from 'graphql';
import { bindResolvers, buildSubgraph, serviceDescriptor, type FieldBinding, type HandlerMap } from '@gatehouse/rpc';
import { authzTypeDefs } from './schema.ts';

const p = (rpc: string): FieldBinding => ({ rpc, arg: 'params' });

/** Root field → AuthzService RPC and the argument holding its request (graphql.md §2). */
export const authzBindings = {
  Query: {
    check_permissions: p('CheckPermissions'),
    list_permissions: p('ListPermissions'),
    _fga_get_model: { rpc: 'GetModel', arg: null },
    _fga_read_tuples: p('ReadTuples'),
    _fga_list_users: p('ListUsers'),
    _fga_expand: p('Expand'),
  },
  Mutation: {
    _fga_write_model: p('WriteModel'),
    _fga_write_tuples: p('WriteTuples'),
    _fga_delete_tuples: p('DeleteTuples'),
    _fga_reset: { rpc: 'Reset', arg: null },
  },
} satisfies Parameters<typeof bindResolvers>[2];

/** Builds the authz subgraph schema over `handlers` (proto method name → handler). */
export function createAuthzSubgraph(handlers: HandlerMap): GraphQLSchema {
  return buildSubgraph(authzTypeDefs, bindResolvers(serviceDescriptor('authz'), handlers, authzBindings));
}
