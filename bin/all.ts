/**
 * @module bin/all
 * All-in-one mode (ARCHITECTURE §1): one process builds every service from one Config and wires the
 * gateway to them through in-process transports. No code path of its own: the same factories, the same
 * codecs, the same HTTP layer as split mode.
 */
import { parseConfigOrExit } from '@gatehouse/config';
import { createInProcessBus, createJetStreamBus, type Bus } from '@gatehouse/bus';
import { createLogger, createMetricsRegistry, type LogLevel } from '@gatehouse/observability';
import { closeOnSignal, createInProcessClient, orFatal, serviceDescriptor, startGrpcServer, type HandlerMap } from '@gatehouse/rpc';
import { buildAuthn } from '../services/authn/src/main.ts';
import { buildAuthz } from '../services/authz/src/main.ts';
import { buildMfa } from '../services/mfa/src/main.ts';
import { buildNotifications } from '../services/notifications/src/main.ts';
import { serveGateway } from '../gateway/src/main.ts';
import { readSupergraph } from '../gateway/src/graphql/supergraph.ts';

/** `gatehouse all [flags]`. */
export async function runAllInOne(argv: readonly string[]): Promise<void> {
  const config = parseConfigOrExit('all', argv);
  const logger = createLogger(config.logLevel as LogLevel);
  const registry = createMetricsRegistry();
  const bus: Bus = config.natsUrl
    ? await orFatal('database', () => createJetStreamBus({ url: config.natsUrl!, logger, stream: config.natsStream, subjectPrefix: config.natsStream.toLowerCase() }))
    : createInProcessBus({ logger });
  const notifications = await buildNotifications(config, { logger, registry, bus });
  // authn and mfa call each other's internal APIs: each gets an in-process client over the other's
  // handlers, bound once both are built
  const mfaInternal: HandlerMap = {};
  const authnInternal: HandlerMap = {};
  const authn = await buildAuthn(config, { logger, bus, soleWriter: true, mfa: createInProcessClient(serviceDescriptor('mfa.internal'), mfaInternal) });
  const mfa = await buildMfa(config, { logger, bus, authn: createInProcessClient(serviceDescriptor('authn.internal'), authnInternal) });
  Object.assign(authnInternal, authn.internalHandlers);
  Object.assign(mfaInternal, mfa.internalHandlers);
  const authz = await buildAuthz(config, { logger, authenticator: authn.authenticator, registry });
  const authnDesc = serviceDescriptor('authn');
  const mfaDesc = serviceDescriptor('mfa');
  const authzDesc = serviceDescriptor('authz');
  const closers = await serveGateway(config, {
    clients: {
      authn: createInProcessClient(authnDesc, authn.handlers),
      mfa: createInProcessClient(mfaDesc, mfa.handlers),
      authz: createInProcessClient(authzDesc, authz.handlers),
    },
    supergraphSdl: readSupergraph(),
    subgraphs: { authn: { schema: authn.schema }, mfa: { schema: mfa.schema }, authz: { schema: authz.schema } },
  }, (admit) => startGrpcServer({
    host: config.host, port: config.grpcPort, logger, admit,
    services: [{ desc: authnDesc, handlers: authn.handlers }, { desc: mfaDesc, handlers: mfa.handlers }, { desc: authzDesc, handlers: authz.handlers }],
  }), { logger, registry });
  closeOnSignal([() => bus.close(), notifications.close, authn.close, mfa.close, authz.close, ...closers], (m) => logger.info(m));
}
