/**
 * @module gateway/main
 * `gatehouse gateway [flags]`: the edge in split mode. It reaches each service only through gRPC
 * clients (REST), subgraph URLs (GraphQL) and the gRPC forwarder (public port), all given by flags.
 */
import { parseConfigOrExit, VERSION, type Config } from '@gatehouse/config';
import { createLogger, createMetricsRegistry, startMetricsServer, type Logger, type LogLevel, type Registry } from '@gatehouse/observability';
import { closeOnSignal, createGrpcClient, deriveInternalToken, orFatal, serviceDescriptor, startGrpcProxy } from '@gatehouse/rpc';
import { createGatewayApp, listen, type GatewayOptions, type GatewayServices } from './app.ts';
import { readSupergraph } from './graphql/supergraph.ts';

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
    playground: config.enablePlayground ? { adminSecret: config.adminSecret, disableAdminHeaderAuth: config.disableAdminHeaderAuth } : null,
    internalToken: deriveInternalToken(config.clientSecret),
    deadlineMs: 30_000,
  };
}

/** Starts the HTTP, public gRPC and metrics listeners around a built gateway. */
export async function serveGateway(
  config: Config,
  services: GatewayServices,
  grpcPublic: (admit: (ip: string) => Promise<boolean>) => Promise<{ port: number; close(): Promise<void> }>,
  deps: { logger: Logger; registry: Registry },
): Promise<Array<() => Promise<unknown>>> {
  const gw = await createGatewayApp(gatewayOptions(config), services, deps);
  const http = await orFatal({ host: config.host, port: config.httpPort }, () => listen(gw.handler, config.host, config.httpPort));
  const admit = (ip: string): Promise<boolean> => gw.limiter.take(ip).catch(() => true);
  const grpc = await orFatal({ host: config.host, port: config.grpcPort }, () => grpcPublic(admit));
  const metrics = await orFatal({ host: config.metricsHost, port: config.metricsPort }, () => startMetricsServer({ host: config.metricsHost, port: config.metricsPort, registry: deps.registry }));
  deps.logger.info({ http_port: http.port, grpc_port: grpc.port, metrics_port: metrics.port, url: config.url }, 'gateway listening');
  return [gw.close, http.close, grpc.close, metrics.close];
}

/** `gatehouse gateway [flags]` (split mode). */
export async function runGateway(argv: readonly string[]): Promise<void> {
  const config = parseConfigOrExit('gateway', argv);
  const logger = createLogger(config.logLevel as LogLevel).child({ service: 'gateway' });
  const registry = createMetricsRegistry();
  const internalToken = deriveInternalToken(config.clientSecret);
  const authnAddress = config.authnAddress!;
  const mfaAddress = config.mfaAddress!;
  const authzAddress = [...(config.authzAddress ?? [])].join(',');
  const services: GatewayServices = {
    clients: {
      authn: createGrpcClient(serviceDescriptor('authn'), { address: authnAddress, internalToken }),
      mfa: createGrpcClient(serviceDescriptor('mfa'), { address: mfaAddress, internalToken }),
      authz: createGrpcClient(serviceDescriptor('authz'), { address: authzAddress, internalToken }),
    },
    supergraphSdl: readSupergraph(),
    subgraphs: {
      authn: { urls: [config.authnGraphqlUrl!] },
      mfa: { urls: [config.mfaGraphqlUrl!] },
      authz: { urls: [...(config.authzGraphqlUrl ?? [])] },
    },
  };
  const closers = await serveGateway(config, services, (admit) => startGrpcProxy({
    host: config.host, port: config.grpcPort, internalToken, logger, admit,
    upstreams: [
      { desc: serviceDescriptor('authn'), address: authnAddress },
      { desc: serviceDescriptor('mfa'), address: mfaAddress },
      { desc: serviceDescriptor('authz'), address: authzAddress },
    ],
  }), { logger, registry });
  closeOnSignal([...closers, async () => { services.clients.authn?.close(); services.clients.mfa?.close(); services.clients.authz?.close(); }], (m) => logger.info(m));
}
