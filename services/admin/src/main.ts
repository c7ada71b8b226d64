/**
 * @module admin/main
 * The only file that wires admin: the shared admin store (libs/auth: Redis under --redis-url, else
 * this process's), authn's internal API for AdminMeta, the audit publisher, its handler map and its
 * subgraph. `buildAdmin` is the module's build (src/index.ts), the same in all-in-one and split mode.
 */
import { adminAccessStoreFor } from '@gatehouse/auth';
import { newEnvelope } from '@gatehouse/bus';
import type { Config } from '@gatehouse/config';
import { bindResolvers, buildSubgraph } from '@gatehouse/rpc';
import type { ServiceRuntime, ServiceShared } from '@gatehouse/service';
import { adminBindings, adminFixedErrors } from './graphql/resolvers.ts';
import { adminTypeDefs } from './graphql/schema.ts';
import { createAdminService } from './service.ts';

/** Builds admin in this process; `shared.authenticator` checks its callers. */
export async function buildAdmin(config: Config, shared: ServiceShared): Promise<ServiceRuntime> {
  const logger = shared.logger.child({ service: 'admin' });
  const authn = shared.peer('authn.internal');
  if (!authn) logger.warn('no --authn-address: admin/meta answers unavailable');
  const service = createAdminService({
    authenticator: shared.authenticator,
    store: adminAccessStoreFor(config),
    adminSecret: config.adminSecret,
    adminCookieSecure: config.adminCookieSecure,
    meta: { ...config, databaseType: config.databaseType ?? 'sqlite', env: config.env ?? 'production', fga: { enabled: config.fga.enabled, store: config.fga.store } },
    authn,
    emit(name, data) {
      if (!shared.bus) return;
      shared.bus.publish(newEnvelope(name, 'admin', data)).catch((err: unknown) => logger.warn({ err, event: name }, 'event not published'));
    },
    now: () => Math.floor(Date.now() / 1000),
  });
  const resolvers = bindResolvers(service.desc, service.handlers, adminBindings);
  for (const op of ['Query', 'Mutation'] as const) Object.assign((resolvers[op] ??= {}), adminFixedErrors[op]);
  return {
    public: service,
    schema: buildSubgraph(adminTypeDefs, resolvers),
    async close() {},
  };
}
