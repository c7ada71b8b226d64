/**
 * @module mfa/main
 * The only file that wires mfa: flags → database (migrations) → store → handlers → listeners, plus
 * the outbox relay that moves its email jobs to the bus.
 */
import type { GraphQLSchema } from 'graphql';
import { parseConfigOrExit, type Config } from '@gatehouse/config';
import { databaseOptionsOf, openDatabase, startOutboxRelay, type Database } from '@gatehouse/db';
import { createJetStreamBus, type Bus } from '@gatehouse/bus';
import { createLogger, createMetricsRegistry, startMetricsServer, type Logger, type LogLevel } from '@gatehouse/observability';
import { closeOnSignal, deriveInternalToken, orFatal, startGrpcServer, startServiceHttp, type ServiceImplementation } from '@gatehouse/rpc';
import { createMfaSubgraph } from './graphql/resolvers.ts';
import { createMfaService, type MfaOptions } from './service.ts';
import { createMikroMfaStore } from './storage/mikro/store.ts';
import { mfaSchema } from './storage/mikro/schema.ts';

export interface MfaRuntime {
  /** proto `MfaService` */
  public: ServiceImplementation<'gatehouse.mfa.v1.MfaService'>;
  /** proto `MfaInternal`: served to other services only */
  internal: ServiceImplementation<'gatehouse.mfa.v1.MfaInternal'>;
  schema: GraphQLSchema;
  db: Database;
  close(): Promise<void>;
}

/** The flags mfa reads, as its options. */
function mfaOptions(config: Config): MfaOptions {
  return config as unknown as MfaOptions;
}

/**
 * Builds mfa in this process. mfa calls no other service (issue 14 §5: authn asks it for verdicts);
 * `bus` receives the email jobs through the outbox relay (none: they wait in the outbox).
 */
export async function buildMfa(config: Config, shared: { logger: Logger; bus: Bus | null }): Promise<MfaRuntime> {
  const logger = shared.logger.child({ service: 'mfa' });
  const db = await orFatal('database', () => openDatabase(databaseOptionsOf(config), mfaSchema, { logger }));
  const service = createMfaService({ options: mfaOptions(config), store: createMikroMfaStore(db), logger });
  const relay = shared.bus ? startOutboxRelay({ db, bus: shared.bus, logger }) : null;
  if (!shared.bus) logger.warn('no --nats-url: OTP emails stay in the outbox until a bus is configured');
  return {
    ...service,
    schema: createMfaSubgraph(service.public),
    db,
    async close() {
      await relay?.stop();
      await db.close();
    },
  };
}

/** `gatehouse mfa [flags]` (split mode). */
export async function runMfa(argv: readonly string[]): Promise<void> {
  const config = parseConfigOrExit('mfa', argv);
  const logger = createLogger(config.logLevel as LogLevel).child({ service: 'mfa' });
  const registry = createMetricsRegistry();
  const internalToken = deriveInternalToken(config.clientSecret);
  const bus = config.natsUrl ? await orFatal('database', () => createJetStreamBus({ url: config.natsUrl!, logger, stream: config.natsStream, subjectPrefix: config.natsStream.toLowerCase() })) : null;
  const runtime = await buildMfa(config, { logger, bus });
  const grpc = await orFatal({ host: config.host, port: config.grpcPort }, () => startGrpcServer({
    host: config.host, port: config.grpcPort, logger, internalToken,
    services: [
      runtime.public,
      { ...runtime.internal, internal: true },
    ],
  }));
  const http = await orFatal({ host: config.host, port: config.httpPort }, () => startServiceHttp({
    host: config.host, port: config.httpPort, schema: runtime.schema, internalToken, logger,
  }));
  const metrics = await orFatal({ host: config.metricsHost, port: config.metricsPort }, () => startMetricsServer({ host: config.metricsHost, port: config.metricsPort, registry }));
  logger.info({ grpc_port: grpc.port, http_port: http.port, metrics_port: metrics.port }, 'mfa started');
  closeOnSignal([async () => bus?.close(), runtime.close, grpc.close, http.close, metrics.close], (m) => logger.info(m));
}
