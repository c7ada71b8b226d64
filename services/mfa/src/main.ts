/**
 * @module mfa/main
 * The only file that wires mfa: flags → database (migrations) → store → handlers, plus the outbox
 * relay that moves its email jobs to the bus. `buildMfa` is the module's build (src/index.ts), the
 * same in all-in-one and split mode.
 */
import type { Config } from '@gatehouse/config';
import { databaseOptionsOf, databaseReadiness, openDatabase, startOutboxRelay } from '@gatehouse/db';
import { orFatal } from '@gatehouse/rpc';
import type { ServiceRuntime, ServiceShared } from '@gatehouse/service';
import { createMfaSubgraph } from './graphql/resolvers.ts';
import { createMfaService, type MfaOptions } from './service.ts';
import { createMikroMfaStore } from './storage/mikro/store.ts';
import { mfaSchema } from './storage/mikro/schema.ts';

/** The flags mfa reads, as its options. */
function mfaOptions(config: Config): MfaOptions {
  return config as unknown as MfaOptions;
}

/**
 * Builds mfa in this process. mfa calls no other service (issue 14 §5: authn asks it for verdicts);
 * `shared.bus` receives the email jobs through the outbox relay (none: they wait in the outbox);
 * `shared.authenticator` checks signed-in callers (none: their RPCs answer 401).
 */
export async function buildMfa(config: Config, shared: ServiceShared): Promise<ServiceRuntime> {
  const logger = shared.logger.child({ service: 'mfa' });
  const db = await orFatal('database', () => openDatabase(databaseOptionsOf(config), mfaSchema, { logger }));
  const service = createMfaService({ options: mfaOptions(config), store: createMikroMfaStore(db), authenticator: shared.authenticator, logger });
  const relay = shared.bus ? startOutboxRelay({ db, bus: shared.bus, logger }) : null;
  if (!shared.bus) logger.warn('no --nats-url: OTP emails stay in the outbox until a bus is configured');
  if (!shared.authenticator) logger.warn('no --redis-url: the mfa RPCs of a signed-in user answer 401 (no session store to check callers against)');
  return {
    public: service.public,
    internal: service.internal,
    schema: createMfaSubgraph(service.public),
    readiness: [databaseReadiness(db, databaseOptionsOf(config))],
    async close() {
      await relay?.stop();
      await db.close();
    },
  };
}
