/**
 * @module @gatehouse/service/run
 * `gatehouse <service> [flags]` in split mode (ARCHITECTURE §1, §6), for every service alike: flags →
 * shared dependencies (logger, metrics, NATS, the Redis session store, gRPC clients of the peers it
 * calls) → `module.build` → its gRPC port (public and internal APIs), its HTTP port (subgraph and
 * `/healthz`) and its metrics port. Replaces the start-up code each service used to carry.
 */
import { createCachedSessionStore, createPlatformAuth, createRedisSessionStore, type Authenticator, type InvalidationChannel } from '@gatehouse/auth';
import { createJetStreamBus } from '@gatehouse/bus';
import { loadConfigOrExit, VERSION, type Config } from '@gatehouse/config';
import { createGrpcServerMetrics, createLogger, createMetricsRegistry, startMetricsServer, startTracing, watchDependencies, type LogLevel } from '@gatehouse/observability';
import {
  closeOnSignal, createGrpcClient, deriveInternalToken, fatal, orFatal, serviceDescriptor, startGrpcServer, startServiceHttp, typedClient,
  type InternalServiceName, type ServedService,
} from '@gatehouse/rpc';
import type { PeerClient, ServiceModule, ServiceShared } from './module.ts';
import { invalidationFor } from './invalidation.ts';

/** `--<peer>-address` of an internal API (`mfa.internal` → `mfaAddress`). */
export const addressKeyOf = (api: InternalServiceName): keyof Config => `${api.split('.')[0]}Address` as keyof Config;

/**
 * Runs one service as its own process until SIGTERM/SIGINT.
 * @param argv the flags after the command name
 * @throws never: a missing required flag or a port in use ends the process with one `FATAL:` line
 */
export async function runService(module: ServiceModule, argv: readonly string[]): Promise<void> {
  const { config, warnings } = loadConfigOrExit(module.name, argv);
  // the module's build adds its own `service` key: its lines and ours each carry exactly one
  const root = createLogger(config.logLevel as LogLevel, undefined, config.logFormat);
  // before anything that opens spans; off (no SDK at all) without --otlp-endpoint
  const tracing = config.otlpEndpoint ? startTracing({ endpoint: config.otlpEndpoint, serviceName: module.name, serviceVersion: VERSION }) : null;
  const logger = root.child({ service: module.name });
  for (const w of warnings) logger.warn(w);
  for (const { key, why } of module.requires ?? []) {
    if (config[key] === undefined) fatal(`--${String(key).replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)} is required for \`gatehouse ${module.name}\`: ${why}`);
  }
  const registry = createMetricsRegistry();
  // every command takes --client-secret (notifications for its calls to admin's internal API); the
  // guard keeps a process built without one (unit fixtures) from deriving a token from nothing
  const internalToken = config.clientSecret ? deriveInternalToken(config.clientSecret) : '';
  const bus = config.natsUrl
    ? await orFatal('nats', () => createJetStreamBus({ url: config.natsUrl!, logger, stream: config.natsStream, subjectPrefix: config.natsStream.toLowerCase() }))
    : null;
  // split mode keeps sessions in Redis, so every service can check a caller itself (ARCHITECTURE §2)
  const sessions = config.redisUrl ? createRedisSessionStore({ url: config.redisUrl, keyPrefix: 'gatehouse:', logger }) : null;
  // issue 22: sessions answered from memory until a writer's notification (or, while it is down, the poll)
  // moves the version; opened on first use (a service that caches nothing holds no connection for it)
  let channel: InvalidationChannel | undefined;
  const invalidation = (): InvalidationChannel => (channel ??= invalidationFor(config, { soleWriter: false, logger }));
  const peers: Array<{ close(): void }> = [];
  let authenticator: Authenticator | null | undefined;
  const shared: ServiceShared = {
    logger: root,
    registry,
    bus,
    // made on first use: a service that checks no caller (notifications) takes no token flags
    get authenticator() {
      return (authenticator ??= sessions
        ? createPlatformAuth(config, createCachedSessionStore(sessions, { externalVersion: () => invalidation().version('credentials') })).authenticator
        : null);
    },
    soleWriter: false,
    get invalidation() {
      return invalidation();
    },
    peer<D extends InternalServiceName>(api: D): PeerClient<D> | null {
      // one address, or a list for a replicated peer (--authz-address): gRPC balances over the list
      const value = config[addressKeyOf(api)];
      const address = Array.isArray(value) ? value.join(',') : value;
      if (typeof address !== 'string' || address === '') return null;
      const desc = serviceDescriptor(api);
      const client = typedClient(desc, createGrpcClient(desc, { address, internalToken }));
      peers.push(client);
      return client as unknown as PeerClient<D>;
    },
  };
  const runtime = await module.build(config, shared);
  // its own dependencies only: a peer's outage fails the calls that need the peer, but must not
  // take this service out of rotation (readiness would cascade along the call graph). Each one's
  // outage is one `<name> is down` line and its end one `is back up` line (Redis and NATS log their own).
  const readiness = watchDependencies([...(bus?.readiness ? [bus.readiness] : []), ...(sessions ? [sessions.readiness] : []), ...(runtime.readiness ?? [])], logger);
  const served: ServedService[] = [
    ...(runtime.public ? [runtime.public] : []),
    ...(runtime.internal ? [{ ...runtime.internal, internal: true }] : []),
  ];
  const grpc = served.length === 0 ? null : await orFatal({ host: config.host, port: config.grpcPort }, () => startGrpcServer({
    host: config.host, port: config.grpcPort, logger, internalToken, services: served, observe: createGrpcServerMetrics(registry),
  }));
  const http = await orFatal({ host: config.host, port: config.httpPort }, () => startServiceHttp({
    host: config.host, port: config.httpPort, internalToken: runtime.schema ? internalToken : '', logger,
    ...(runtime.schema ? { schema: runtime.schema() } : {}),
    readiness,
  }));
  const metrics = await orFatal({ host: config.metricsHost, port: config.metricsPort }, () => startMetricsServer({ host: config.metricsHost, port: config.metricsPort, registry }));
  logger.info({ grpc_port: grpc?.port ?? null, http_port: http.port, metrics_port: metrics.port, ...runtime.logFields }, `${module.name} started`);
  // closed in reverse: first the servers (calls in flight answered, with the peers, stores and bus
  // they use still open), then what the handlers used, then metrics and tracing
  closeOnSignal([
    async () => tracing?.shutdown(), metrics.close,
    async () => bus?.close(), runtime.close, async () => sessions?.close(), async () => channel?.close(),
    async () => { for (const p of peers) p.close(); },
    async () => { for (const r of readiness) r.close(); },
    http.close, ...(grpc ? [grpc.close] : []),
  ], (m) => logger.info(m));
}
