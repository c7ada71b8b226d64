/**
 * @module admin/main
 * The only file that wires admin: its handler map and its subgraph (the admin plane owns no tables
 * yet). `buildAdmin` is the module's build (src/index.ts), the same in all-in-one and split mode.
 */
import type { Config } from '@gatehouse/config';
import { bindResolvers, buildSubgraph } from '@gatehouse/rpc';
import type { ServiceRuntime, ServiceShared } from '@gatehouse/service';
import { adminBindings, adminFixedErrors } from './graphql/resolvers.ts';
import { adminTypeDefs } from './graphql/schema.ts';
import { createAdminService } from './service.ts';

/** Builds admin in this process; `shared.authenticator` checks its callers. */
export async function buildAdmin(_config: Config, shared: ServiceShared): Promise<ServiceRuntime> {
  const service = createAdminService({ authenticator: shared.authenticator });
  const resolvers = bindResolvers(service.desc, service.handlers, adminBindings);
  for (const op of ['Query', 'Mutation'] as const) Object.assign((resolvers[op] ??= {}), adminFixedErrors[op]);
  return {
    public: service,
    schema: buildSubgraph(adminTypeDefs, resolvers),
    async close() {},
  };
}
