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
import { closeOnSignal, createGrpcClient, deriveInternalToken, orFatal, serviceDescriptor, startGrpcServer, startServiceHttp, type HandlerMap } from '@gatehouse/rpc';
import { createMfaSubgraph } from './graphql/resolvers.ts';
import { createMfaService, type AuthnInternalClient, type MfaOptions } from './service.ts';
import { createMikroMfaStore } from './storage/mikro/store.ts';
import { mfaSchema } from './storage/mikro/schema.ts';

export interface MfaRuntime {
  /** proto `MfaService` */
  handlers: HandlerMap;
  /** proto `MfaInternal`: served to other services only */
  internalHandlers: HandlerMap;
  schema: GraphQLSchema;
  db: Database;
  close(): Promise<void>;
}

/** The flags mfa reads, as its options. */
function mfaOptions(config: Config): MfaOptions {
  return config as unknown as MfaOptions;
}

/**
 * Builds mfa in this process. `authn` is authn's internal API (in process in all-in-one, gRPC in
 * split mode); `bus` receives the email jobs through the outbox relay (none: they wait in the outbox).
 */
export async function buildMfa(config: Config, shared: { logger: Logger; bus: Bus | null; authn: AuthnInternalClient }): Promise<MfaRuntime> {
  const logger = shared.logger.child({ service: 'mfa' });
  const db = await orFatal('database', () => openDatabase(databaseOptionsOf(config), mfaSchema, { logger }));
  const { handlers, internalHandlers } = createMfaService({
    options: mfaOptions(config),
    store: createMikroMfaStore(db),
    authn: shared.authn,
    logger,
  });
  const relay = shared.bus ? startOutboxRelay({ db, bus: shared.bus, logger }) : null;
  if (!shared.bus) logger.warn('no --nats-url: OTP emails stay in the outbox until a bus is configured');
  return {
    handlers,
    internalHandlers,
    schema: createMfaSubgraph(handlers),
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
  // --authn-address is required for this command (libs/config): every completion issues tokens there
  const authn = createGrpcClient(serviceDescriptor('authn.internal'), { address: config.authnAddress!, internalToken });
  const runtime = await buildMfa(config, { logger, bus, authn });
  const grpc = await orFatal({ host: config.host, port: config.grpcPort }, () => startGrpcServer({
    host: config.host, port: config.grpcPort, logger, internalToken,
    services: [
      { desc: serviceDescriptor('mfa'), handlers: runtime.handlers },
      { desc: serviceDescriptor('mfa.internal'), handlers: runtime.internalHandlers, internal: true },
    ],
  }));
  const http = await orFatal({ host: config.host, port: config.httpPort }, () => startServiceHttp({
    host: config.host, port: config.httpPort, schema: runtime.schema, internalToken, logger,
  }));
  const metrics = await orFatal({ host: config.metricsHost, port: config.metricsPort }, () => startMetricsServer({ host: config.metricsHost, port: config.metricsPort, registry }));
  logger.info({ grpc_port: grpc.port, http_port: http.port, metrics_port: metrics.port }, 'mfa started');
  closeOnSignal([async () => bus?.close(), runtime.close, grpc.close, http.close, metrics.close, async () => authn.close()], (m) => logger.info(m));
}
