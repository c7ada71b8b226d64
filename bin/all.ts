/**
 * @module bin/all
 * All-in-one mode (ARCHITECTURE §1): one process builds every service of the registry from one Config
 * and wires the gateway to them through in-process transports. No code path of its own: the same
 * module builds, the same codecs, the same HTTP layer as split mode.
 */
import { loadConfigOrExit, VERSION, type Config } from '@gatehouse/config';
import { createInProcessBus, createJetStreamBus, type Bus } from '@gatehouse/bus';
import { databaseOptionsOf, databaseTarget } from '@gatehouse/db';
import { createGrpcServerMetrics, createLogger, createMetricsRegistry, redisTarget, startTracing, watchDependencies, type LogLevel, type Logger, type Registry } from '@gatehouse/observability';
import { closeOnSignal, createInProcessClient, orFatal, startGrpcServer, type ServiceImplementation } from '@gatehouse/rpc';
import { buildInProcess, invalidationFor } from '@gatehouse/service';
import { SERVICES } from '../services/registry.ts';
import { serveGateway } from '../gateway/src/main.ts';
import { withWorker } from '../gateway/src/workers.ts';
import type { GatewayServices } from '../gateway/src/app.ts';
import { readSupergraph } from '../gateway/src/graphql/supergraph.ts';

/** Every service of all-in-one, built and wired to each other, ready to be served. */
export interface AllInOne {
  /** what the gateway needs: in-process clients and subgraph schemas */
  gateway: GatewayServices;
  /** the public APIs the public gRPC port serves directly */
  grpc: ServiceImplementation[];
  /** each service's close, in build order (close them in reverse; the bus is the caller's) */
  closers: Array<() => Promise<unknown>>;
}

/** Builds every service of the registry from one Config and wires them in process. */
export async function buildAllInOne(config: Config, shared: { logger: Logger; registry: Registry; bus: Bus }): Promise<AllInOne> {
  // issue 22: one notification channel for every service of the process (libs/auth README "Credential caches")
  const invalidation = invalidationFor(config, { soleWriter: true, logger: shared.logger });
  const built = await buildInProcess(SERVICES, config, { ...shared, invalidation });
  const gateway: GatewayServices = { clients: {}, supergraphSdl: readSupergraph(), subgraphs: {} };
  const grpc: ServiceImplementation[] = [];
  for (const { module, runtime } of built) {
    if (module.publicApi && runtime.public) {
      gateway.clients[module.publicApi] = createInProcessClient(runtime.public.desc, runtime.public.handlers);
      grpc.push(runtime.public);
    }
    if (runtime.schema) gateway.subgraphs[module.name] = { schema: runtime.schema };
  }
  // each dependency's outage is one `<name> is down` line and one `is back up` line (one per pool group)
  const readiness = watchDependencies([...(shared.bus.readiness ? [shared.bus.readiness] : []), ...built.flatMap(({ runtime }) => runtime.readiness ?? [])], shared.logger);
  gateway.readiness = readiness;
  return {
    gateway, grpc,
    closers: [async () => { for (const r of readiness) r.close(); }, () => invalidation.close(), ...built.map(({ runtime }) => () => runtime.close())],
  };
}

/** `gatehouse all [flags]`. */
export async function runAllInOne(argv: readonly string[]): Promise<void> {
  const { config, warnings } = loadConfigOrExit('all', argv);
  const logger = withWorker(createLogger(config.logLevel as LogLevel, undefined, config.logFormat));
  const tracing = config.otlpEndpoint ? startTracing({ endpoint: config.otlpEndpoint, serviceName: 'gatehouse', serviceVersion: VERSION }) : null;
  for (const w of warnings) logger.warn(w);
  const registry = createMetricsRegistry();
  const bus: Bus = config.natsUrl
    ? await orFatal('nats', () => createJetStreamBus({ url: config.natsUrl!, logger, stream: config.natsStream, subjectPrefix: config.natsStream.toLowerCase() }))
    : createInProcessBus({ logger });
  const all = await buildAllInOne(config, { logger, registry, bus });
  const closers = await serveGateway(config, all.gateway, (admit) => startGrpcServer({
    host: config.host, port: config.grpcPort, logger, admit, services: all.grpc, observe: createGrpcServerMetrics(registry), reflection: true,
  }), {
    logger, registry,
    summary: {
      database: `${config.databaseType} ${databaseTarget(databaseOptionsOf(config))}`,
      sessions: config.redisUrl ? `redis ${redisTarget(config.redisUrl)}` : 'database',
      bus: bus.readiness ? `nats ${bus.readiness.target} stream ${config.natsStream}` : 'in-process',
      authorization_store: config.fga.enabled ? config.fga.store : null,
      email: config.isEmailConfigured ? `smtp ${config.smtpHost}:${config.smtpPort}` : config.devOutbox.email ? 'development outbox' : null,
    },
  });
  closeOnSignal([() => bus.close(), ...all.closers.reverse(), ...closers, async () => tracing?.shutdown()], (m) => logger.info(m));
}
