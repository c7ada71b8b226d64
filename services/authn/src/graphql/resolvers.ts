/**
 * @module authn/graphql/resolvers
 * Binds the authn subgraph's root fields to the same handlers the gRPC server uses
 * (ARCHITECTURE §3), and the deprecated operations to their fixed errors (graphql.md §1.3).
 */
import type { GraphQLSchema } from 'graphql';
import { aliasResolvers, bindResolvers, fixedErrorResolvers, buildSubgraph, protoBindings, serviceDescriptor, toGraphqlError, type HandlerMap, type SubgraphContext } from '@gatehouse/rpc';
import { authnTypeDefs } from './schema.ts';

/**
 * Root field → AuthnService RPC, from the protos' `(gatehouse.common.v1.graphql)` options and the subgraph SDL
 * (Query or Mutation, the argument carrying the request, a list field's response field).
 */
export const authnBindings = protoBindings(serviceDescriptor('authn'), authnTypeDefs);

/**
 * Authorizer's mobile operations: always `unimplemented`, no auth check (graphql.md §1.3), from the
 * `graphql_error` options of proto/gatehouse/authn/v1/deprecated.proto.
 */
export const authnFixedErrors = fixedErrorResolvers('authn');

/**
 * Builds the authn subgraph schema over `handlers` (proto method name → handler). `internal` serves
 * the `User` entity to other subgraphs (`GetUser`, graphql.md §5.2: `__resolveReference` loads the row).
 */
export function createAuthnSubgraph(handlers: HandlerMap, internal: HandlerMap): GraphQLSchema {
  const resolvers = bindResolvers(serviceDescriptor('authn'), handlers, authnBindings);
  Object.assign(resolvers.Mutation!, authnFixedErrors.Mutation);
  const getUser = serviceDescriptor('authn.internal').methods.get('GetUser')!;
  const User = {
    async __resolveReference(ref: { id?: unknown }, ctx: SubgraphContext) {
      try {
        return getUser.normalizeResponse(await internal.GetUser!({ user_id: String(ref.id ?? '') }, ctx.callContext));
      } catch (e) {
        throw toGraphqlError(e);
      }
    },
  };
  // `InviteMembersResponse.Users`: Authorizer's name for `users`, kept as an alias (graphql.md D10)
  return buildSubgraph(authnTypeDefs, { ...resolvers, User, ...aliasResolvers('authn') });
}
