/**
 * @module gateway/main
 * `gatehouse gateway [flags]`: the edge in split mode. It reaches each service of the registry
 * (services/registry.ts) only through gRPC clients (REST), subgraph URLs (GraphQL) and the gRPC
 * forwarder (public port), all given by flags.
 */
import { loadConfigOrExit, VERSION, type Config } from '@gatehouse/config';
import { createGrpcServerMetrics, createLogger, createMetricsRegistry, redisTarget, startMetricsServer, startTracing, watchDependency, type Logger, type LogLevel, type Registry, type WatchedDependency } from '@gatehouse/observability';
import { closeOnSignal, createGrpcClient, deriveInternalToken, orFatal, serviceDescriptor, startGrpcProxy, type ServiceDescriptor } from '@gatehouse/rpc';
import { SERVICES } from '../../services/registry.ts';
import { createGatewayApp, listen, type GatewayOptions, type GatewayServices } from './app.ts';
import { readSupergraph } from './graphql/supergraph.ts';
import { announceWorkerReady, httpWorkerCount, httpWorkerIndex, withWorker } from './workers.ts';

/** The gateway options from the flags (shared with all-in-one). */
export function gatewayOptions(config: Config): GatewayOptions {
  return {
    http: {
      allowedOrigins: [...config.allowedOrigins],
      trustedProxies: [...config.trustedProxies],
      url: config.url,
      enableHsts: config.enableHsts,
      rateLimitRps: config.rateLimitRps,
      rateLimitBurst: config.rateLimitBurst,
      ...(config.redisUrl ? { redisUrl: config.redisUrl } : {}),
    },
    version: VERSION,
    introspection: config.enableGraphqlIntrospection,
    limits: { maxDepth: config.graphqlMaxDepth, maxComplexity: config.graphqlMaxComplexity, maxAliases: config.graphqlMaxAliases },
    playground: config.enablePlayground,
    loginPage: config.enableLoginPage ? { organizationName: config.organizationName, organizationLogo: config.organizationLogo } : null,
    dashboard: config.enableDashboard,
    internalToken: deriveInternalToken(config.clientSecret),
    deadlineMs: 30_000,
    mcp: config.mcpEnabled,
    openfgaUrl: config.gatewayOpenfgaUrl ?? null,
  };
}

/** Starts the HTTP, public gRPC and metrics listeners around a built gateway. */
export async function serveGateway(
  config: Config,
  services: GatewayServices,
  grpcPublic: (admit: (ip: string) => Promise<boolean>) => Promise<{ port: number; close(): Promise<void> }>,
  deps: { logger: Logger; registry: Registry; summary?: Record<string, unknown> },
): Promise<Array<() => Promise<unknown>>> {
  const gw = await createGatewayApp(gatewayOptions(config), services, deps);
  const http = await orFatal({ host: config.host, port: config.httpPort }, () => listen(gw.handler, config.host, config.httpPort));
  const admit = (ip: string): Promise<boolean> => gw.limiter.take(ip).catch(() => true);
  const grpc = await orFatal({ host: config.host, port: config.grpcPort }, () => grpcPublic(admit));
  // an HTTP worker's metrics are served, summed, by its primary (workers.ts)
  const worker = httpWorkerIndex();
  const metrics = worker !== null
    ? { port: config.metricsPort, close: async () => undefined }
    : await orFatal({ host: config.metricsHost, port: config.metricsPort }, () => startMetricsServer({ host: config.metricsHost, port: config.metricsPort, registry: deps.registry }));
  const workers = worker === null ? {} : { http_workers: httpWorkerCount(config) };
  deps.logger.info(startupSummary(config, { http: http.port, grpc: grpc.port, metrics: metrics.port }, { ...deps.summary, ...workers }), `Gatehouse is serving ${config.url}`);
  announceWorkerReady(deps.registry);
  return [gw.close, http.close, grpc.close, metrics.close];
}

/**
 * The one start-up line (issue 15): where everything is served, what storage and bus are in use
 * (`extra`, from the caller), and which settings are development defaults a production deployment
 * must not keep.
 */
export function startupSummary(config: Config, ports: { http: number; grpc: number; metrics: number }, extra: Record<string, unknown>): Record<string, unknown> {
  const base = config.url.replace(/\/+$/, '');
  const developmentDefaults = [
    ...(config.env === 'development' ? ['--env=development'] : []),
    ...(config.env === 'development' && config.url === `http://localhost:${config.httpPort}` ? [`--url=${config.url}`] : []),
    ...(config.allowedOrigins.includes('*') ? ['--allowed-origins=*'] : []),
    ...(!config.appCookieSecure ? ['--app-cookie-secure=false'] : []),
    ...(config.adminSecret.length < 32 ? ['--admin-secret shorter than 32 characters'] : []),
  ];
  return {
    url: base,
    rest: `${base}/v1`,
    graphql: `${base}/graphql`,
    playground: config.enablePlayground ? `${base}/graphql (super-admins: the service-admin cookie or the admin secret header)` : null,
    login_page: config.enableLoginPage ? `${base}/app` : null,
    dashboard: config.enableDashboard ? `${base}/dashboard` : null,
    openfga: config.gatewayOpenfgaUrl ? `${base}/stores → ${config.gatewayOpenfgaUrl}` : null,
    openapi: `${base}/openapi.json`,
    grpc: `${config.host}:${ports.grpc}`,
    http_port: ports.http,
    metrics: `${config.metricsHost}:${ports.metrics}/metrics`,
    ...extra,
    development_defaults: developmentDefaults,
  };
}

/**
 * How long `/readyz` waits for a service's channel to connect, ms: an answer within Kubernetes' default
 * probe timeout (1 s) even while a service the gateway does not require is down.
 */
const READY_WAIT_MS = 500;

/** A flag value that may be one address or a list (replicas), as a comma list / a list of URLs. */
const listOf = (v: unknown): string[] => (Array.isArray(v) ? v.map(String) : typeof v === 'string' && v !== '' ? [v] : []);

/**
 * `gatehouse gateway [flags]` (split mode): a gRPC client, a subgraph URL and a public-port upstream
 * for every service of the registry that has a public API, at its `--<name>-address` and
 * `--<name>-graphql-url` (libs/config requires them).
 */
export async function runGateway(argv: readonly string[]): Promise<void> {
  const { config, warnings } = loadConfigOrExit('gateway', argv);
  const logger = withWorker(createLogger(config.logLevel as LogLevel, undefined, config.logFormat).child({ service: 'gateway' }));
  const tracing = config.otlpEndpoint ? startTracing({ endpoint: config.otlpEndpoint, serviceName: 'gateway', serviceVersion: VERSION }) : null;
  for (const w of warnings) logger.warn(w);
  const registry = createMetricsRegistry();
  const internalToken = deriveInternalToken(config.clientSecret);
  const readiness: WatchedDependency[] = [];
  const services: GatewayServices = { clients: {}, supergraphSdl: readSupergraph(), subgraphs: {}, readiness };
  const upstreams: Array<{ desc: ServiceDescriptor; address: string }> = [];
  for (const module of SERVICES) {
    if (!module.publicApi) continue;
    const address = listOf(config[`${module.name}Address` as keyof Config]).join(',');
    const desc = serviceDescriptor(module.publicApi);
    const client = createGrpcClient(desc, { address, internalToken });
    services.clients[module.publicApi] = client;
    // issue 37 §4: only an essential service (authn) makes /readyz 503; each one's state is listed, and
    // its channel's outage is one `service:<name> is down` line and its end one `is back up` line
    readiness.push(watchDependency({ name: `service:${module.name}`, target: address, required: module.essential === true, check: () => client.waitForReady!(READY_WAIT_MS) }, logger));
    upstreams.push({ desc, address });
    if (module.typeDefs) services.subgraphs[module.name] = { urls: listOf(config[`${module.name}GraphqlUrl` as keyof Config]) };
  }
  const closers = await serveGateway(config, services, (admit) => startGrpcProxy({
    host: config.host, port: config.grpcPort, internalToken, logger, admit, upstreams, observe: createGrpcServerMetrics(registry),
  }), { logger, registry, summary: { services: Object.fromEntries(upstreams.map((u) => [u.desc.service, u.address])), sessions: config.redisUrl ? `redis ${redisTarget(config.redisUrl)}` : null } });
  // closed in reverse: the listeners first (requests in flight answered through the service
  // clients, still open), then the clients, then tracing
  closeOnSignal([async () => tracing?.shutdown(), async () => { for (const c of Object.values(services.clients)) c?.close(); for (const r of readiness) r.close(); }, ...closers], (m) => logger.info(m));
}
