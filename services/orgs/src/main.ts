/**
 * @module orgs/main
 * The only file that wires orgs: its handler map and its subgraph (organizations own no tables
 * yet). `buildOrgs` is the module's build (src/index.ts), the same in all-in-one and split mode.
 */
import type { Config } from '@gatehouse/config';
import { bindResolvers, buildSubgraph } from '@gatehouse/rpc';
import type { ServiceRuntime, ServiceShared } from '@gatehouse/service';
import { orgsBindings } from './graphql/resolvers.ts';
import { orgsTypeDefs } from './graphql/schema.ts';
import { createOrgsService } from './service.ts';

/** Builds orgs in this process; `shared.authenticator` checks its callers. */
export async function buildOrgs(_config: Config, shared: ServiceShared): Promise<ServiceRuntime> {
  const service = createOrgsService({ authenticator: shared.authenticator });
  return {
    public: service,
    schema: buildSubgraph(orgsTypeDefs, bindResolvers(service.desc, service.handlers, orgsBindings)),
    async close() {},
  };
}
