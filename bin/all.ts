/**
 * @module bin/all
 * All-in-one mode (ARCHITECTURE §1): one process builds every service from one Config and wires the
 * gateway to them through in-process transports. No code path of its own: the same factories, the same
 * codecs, the same HTTP layer as split mode.
 */
import { parseConfigOrExit, type Config } from '@gatehouse/config';
import { createInProcessBus, createJetStreamBus, type Bus } from '@gatehouse/bus';
import { createLogger, createMetricsRegistry, type LogLevel, type Logger, type Registry } from '@gatehouse/observability';
import { closeOnSignal, createInProcessClient, orFatal, serviceDescriptor, startGrpcServer, typedClient, type HandlerMap, type ServiceDescriptor } from '@gatehouse/rpc';
import { buildAuthn } from '../services/authn/src/main.ts';
import { buildAuthz } from '../services/authz/src/main.ts';
import { buildMfa } from '../services/mfa/src/main.ts';
import { buildNotifications } from '../services/notifications/src/main.ts';
import { serveGateway } from '../gateway/src/main.ts';
import type { GatewayServices } from '../gateway/src/app.ts';
import { readSupergraph } from '../gateway/src/graphql/supergraph.ts';

/** Every service of all-in-one, built and wired to each other, ready to be served. */
export interface AllInOne {
  /** what the gateway needs: in-process clients and subgraph schemas */
  gateway: GatewayServices;
  /** the services the public gRPC port serves directly */
  grpc: Array<{ desc: ServiceDescriptor; handlers: HandlerMap }>;
  /** each service's close, in build order (close them in reverse; the bus is the caller's) */
  closers: Array<() => Promise<unknown>>;
}

/**
 * Builds notifications, mfa, authn and authz from one Config and wires them in process. Calls go one
 * way (issue 14 §5): authn asks mfa, mfa calls no one, so mfa is built first.
 */
export async function buildAllInOne(config: Config, shared: { logger: Logger; registry: Registry; bus: Bus }): Promise<AllInOne> {
  const { logger, registry, bus } = shared;
  const notifications = await buildNotifications(config, { logger, registry, bus });
  const mfa = await buildMfa(config, { logger, bus });
  const authn = await buildAuthn(config, { logger, bus, soleWriter: true, mfa: typedClient(mfa.internal.desc, createInProcessClient(mfa.internal.desc, mfa.internal.handlers)) });
  const authz = await buildAuthz(config, { logger, authenticator: authn.authenticator, registry });
  const authnDesc = serviceDescriptor('authn');
  const mfaDesc = serviceDescriptor('mfa');
  const authzDesc = serviceDescriptor('authz');
  return {
    gateway: {
      clients: {
        authn: createInProcessClient(authnDesc, authn.handlers),
        mfa: createInProcessClient(mfaDesc, mfa.public.handlers),
        authz: createInProcessClient(authzDesc, authz.handlers),
      },
      supergraphSdl: readSupergraph(),
      subgraphs: { authn: { schema: authn.schema }, mfa: { schema: mfa.schema }, authz: { schema: authz.schema } },
    },
    grpc: [{ desc: authnDesc, handlers: authn.handlers }, { desc: mfaDesc, handlers: mfa.public.handlers }, { desc: authzDesc, handlers: authz.handlers }],
    closers: [notifications.close, mfa.close, authn.close, authz.close],
  };
}

/** `gatehouse all [flags]`. */
export async function runAllInOne(argv: readonly string[]): Promise<void> {
  const config = parseConfigOrExit('all', argv);
  const logger = createLogger(config.logLevel as LogLevel);
  const registry = createMetricsRegistry();
  const bus: Bus = config.natsUrl
    ? await orFatal('database', () => createJetStreamBus({ url: config.natsUrl!, logger, stream: config.natsStream, subjectPrefix: config.natsStream.toLowerCase() }))
    : createInProcessBus({ logger });
  const all = await buildAllInOne(config, { logger, registry, bus });
  const closers = await serveGateway(config, all.gateway, (admit) => startGrpcServer({
    host: config.host, port: config.grpcPort, logger, admit, services: all.grpc,
  }), { logger, registry });
  closeOnSignal([() => bus.close(), ...all.closers, ...closers], (m) => logger.info(m));
}
