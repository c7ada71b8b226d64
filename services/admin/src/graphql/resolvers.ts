/**
 * @module admin/graphql/resolvers
 * The admin subgraph's root fields → AdminService RPCs (graphql.md §2), for
 * `bindResolvers(serviceDescriptor('admin'), handlers, adminBindings)`: the resolvers call the same
 * handlers as the gRPC server through the same proto codec (ARCHITECTURE §3). The deprecated
 * operations answer their fixed errors instead (graphql.md §1.3).
 */
import { alwaysFails, protoBindings, serviceDescriptor } from '@gatehouse/rpc';
import { adminTypeDefs } from './schema.ts';

/**
 * Root field → AdminService RPC, from the protos' `(gatehouse.common.v1.graphql)` options and the subgraph SDL
 * (Query or Mutation, the argument carrying the request, a list field's response field).
 */
export const adminBindings = protoBindings(serviceDescriptor('admin'), adminTypeDefs);

const ENV_DEPRECATED = 'deprecated. please configure env via cli args';

/**
 * The deprecated operations: always `unimplemented` with these exact messages, with no auth check
 * and no side effects (graphql.md §1.3; spec §7). Merge them into the bound resolvers.
 */
export const adminFixedErrors = {
  Query: {
    _env: alwaysFails('unimplemented', ENV_DEPRECATED),
  },
  Mutation: {
    _update_env: alwaysFails('unimplemented', ENV_DEPRECATED),
    _admin_signup: alwaysFails('unimplemented', 'deprecated. please configure admin secret via cli args'),
    _generate_jwt_keys: alwaysFails('unimplemented', 'deprecated. please configure jwt keys via cli args'),
  },
};
