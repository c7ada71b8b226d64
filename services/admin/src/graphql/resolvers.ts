/**
 * @module admin/graphql/resolvers
 * The admin subgraph's root fields → AdminService RPCs (graphql.md §2), for
 * `bindResolvers(serviceDescriptor('admin'), handlers, adminBindings)`: the resolvers call the same
 * handlers as the gRPC server through the same proto codec (ARCHITECTURE §3). The deprecated
 * operations answer their fixed errors instead (graphql.md §1.3).
 */
import { fixedErrorResolvers, protoBindings, serviceDescriptor } from '@gatehouse/rpc';
import { adminTypeDefs } from './schema.ts';

/**
 * Root field → AdminService RPC, from the protos' `(gatehouse.common.v1.graphql)` options and the subgraph SDL
 * (Query or Mutation, the argument carrying the request, a list field's response field).
 */
export const adminBindings = protoBindings(serviceDescriptor('admin'), adminTypeDefs);

/**
 * The deprecated operations (`_env`, `_update_env`, `_admin_signup`, `_generate_jwt_keys`): always
 * `unimplemented` with their fixed messages, with no auth check and no side effects (graphql.md §1.3;
 * spec §7), from the `graphql_error` options of proto/gatehouse/admin/v1/deprecated.proto. Merge them
 * into the bound resolvers.
 */
export const adminFixedErrors = fixedErrorResolvers('admin');
