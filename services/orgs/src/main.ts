/**
 * @module orgs/main
 * The only file that wires orgs: flags → database (migrations) → the SCIM store; authn's and authz's
 * internal APIs (SCIM users and group tuples); its events (`user.provisioned`, …, `group.*`,
 * `audit.recorded`) published to the bus after each write; the handler map and its subgraph.
 * `buildOrgs` is the module's build (src/index.ts), the same in all-in-one and split mode.
 */
import { newEnvelope } from '@gatehouse/bus';
import type { Config } from '@gatehouse/config';
import { hmacSha256Hex } from '@gatehouse/crypto';
import { databaseOptionsOf, databaseReadiness, openDatabase, type ServiceSchema } from '@gatehouse/db';
import { bindResolvers, buildSubgraph, orFatal } from '@gatehouse/rpc';
import type { ServiceRuntime, ServiceShared } from '@gatehouse/service';
import { orgsBindings } from './graphql/resolvers.ts';
import { orgsTypeDefs } from './graphql/schema.ts';
import { scimOnlyDirectory } from './scim/directory.ts';
import { scimEntities, scimMigration } from './scim/storage/schema.ts';
import { createMikroScimStore } from './scim/storage/store.ts';
import { createOrgsService } from './service.ts';

const orgsSchema: ServiceSchema = { service: 'orgs', entities: scimEntities, migrations: [scimMigration] };

/** Builds orgs in this process; `shared.authenticator` checks its callers, `shared.bus` carries its events. */
export async function buildOrgs(config: Config, shared: ServiceShared): Promise<ServiceRuntime> {
  const logger = shared.logger.child({ service: 'orgs' });
  const dbOptions = databaseOptionsOf(config);
  const db = await orFatal('database', () => openDatabase(dbOptions, orgsSchema, { logger }));
  const now = () => Math.floor(Date.now() / 1000);
  const publish = (name: string, data: unknown): void => {
    if (!shared.bus) return;
    shared.bus.publish(newEnvelope(name as never, 'orgs', data as never)).catch((err: unknown) => logger.warn({ err, event: name }, 'event not published'));
  };
  const authn = shared.peer('authn.internal');
  if (!authn) logger.warn('no --authn-address: SCIM user operations answer 503');
  const authz = shared.peer('authz.internal');
  if (!authz) logger.warn('no --authz-address: SCIM groups answer 501');
  const store = createMikroScimStore(db);
  const service = createOrgsService({
    authenticator: shared.authenticator,
    scim: {
      scim: {
        store, orgs: scimOnlyDirectory(store, now), authn, authz, now,
        emit: (name, data) => publish(name, data),
        tokenKey: config.encryptionKey ?? hmacSha256Hex(config.clientSecret ?? '', 'gatehouse/scim-token-key/v1'),
        baseUrl: config.url.replace(/\/+$/, ''),
      },
      audit: (record) => publish('audit.recorded', record),
      logger,
    },
  });
  return {
    public: service,
    schema: buildSubgraph(orgsTypeDefs, bindResolvers(service.desc, service.handlers, orgsBindings)),
    readiness: [databaseReadiness(db, dbOptions)],
    async close() {
      await db.close();
    },
  };
}
