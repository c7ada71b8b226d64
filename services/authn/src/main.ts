/**
 * @module authn/main
 * The only file that wires authn: flags → database (migrations, legacy index cleanup) → session
 * store (Redis, else the database) → signer and authenticator → handlers → listeners, plus the
 * outbox relay that moves authn's events to the bus.
 */
import type { GraphQLSchema } from 'graphql';
import { parseConfigOrExit, VERSION, type Config } from '@gatehouse/config';
import { databaseOptionsOf, dropLegacyUniqueIndexes, openDatabase, sqliteDataVersion, startOutboxRelay, type Database } from '@gatehouse/db';
import { createPlatformAuth, createRedisSessionStore, type Authenticator, type SessionStore } from '@gatehouse/auth';
import { createJetStreamBus, type Bus } from '@gatehouse/bus';
import { createLogger, createMetricsRegistry, startMetricsServer, type Logger, type LogLevel } from '@gatehouse/observability';
import { closeOnSignal, createGrpcClient, typedClient, deriveInternalToken, orFatal, serviceDescriptor, startGrpcServer, startServiceHttp, type HandlerMap } from '@gatehouse/rpc';
import { createAuthnService, createUserActivityCheck, type MfaInternalClient } from './service.ts';
import { authnSchema, createMikroAuthnStorage } from './storage/mikro/index.ts';
import { createCachedAuthnStorage } from './storage/cached.ts';
import { createAuthnSubgraph } from './graphql/resolvers.ts';
import type { AuthnOptions } from './domain/options.ts';

export interface AuthnRuntime {
  handlers: HandlerMap;
  /** proto `AuthnInternal`: served to other services only */
  internalHandlers: HandlerMap;
  schema: GraphQLSchema;
  authenticator: Authenticator;
  sessions: SessionStore;
  db: Database;
  close(): Promise<void>;
}

/** The flags authn reads, as its options. */
function authnOptions(config: Config): AuthnOptions {
  return { ...(config as unknown as AuthnOptions), version: VERSION };
}

/**
 * Builds authn in this process. `bus` receives authn's events through the outbox relay; without a
 * bus (split mode with no --nats-url) events stay in the outbox until one is configured.
 * `soleWriter` (all-in-one only): no other process writes this database, so on SQLite without
 * Redis the session and user-activity reads are cached in process (libs/auth README).
 * `mfa`: the mfa service's internal API (in process in all-in-one, gRPC in split mode).
 */
export async function buildAuthn(config: Config, shared: { logger: Logger; bus: Bus | null; soleWriter?: boolean; mfa?: MfaInternalClient }): Promise<AuthnRuntime> {
  const logger = shared.logger.child({ service: 'authn' });
  const dbOptions = databaseOptionsOf(config);
  const db = await orFatal('database', () => openDatabase(dbOptions, authnSchema, { logger }));
  if (db.type !== 'mongodb') {
    // spec §9: a 1.x database may carry unique constraints on these columns; uniqueness is the application's.
    await dropLegacyUniqueIndexes(db, 'authn_users', ['email', 'phone_number'], logger);
  }
  const redisSessions = config.redisUrl ? createRedisSessionStore({ url: config.redisUrl, keyPrefix: 'gatehouse:' }) : null;
  const mikro = createMikroAuthnStorage(db);
  // Credential caches only where every write passes through this process (libs/auth README)
  // (a second process on the same SQLite file is noticed through PRAGMA data_version: caches dropped)
  const externalVersion = db.type === 'sqlite' ? sqliteDataVersion(dbOptions.url ?? dbOptions.name ?? ':memory:') : null;
  const cached = shared.soleWriter === true && db.type === 'sqlite' && !redisSessions
    ? createCachedAuthnStorage(mikro, externalVersion ? { externalVersion } : {})
    : null;
  if (cached) logger.debug('credential caches on: all-in-one on SQLite is the only writer of sessions and users');
  const storage = { ...mikro, ...(cached ? { users: cached.users, sessions: cached.sessions } : {}) };
  const sessions = redisSessions ?? storage.sessions;
  // behaviour.md §2.1: a revoked or deleted user's tokens stop validating at once
  const activity = cached?.activity ?? createUserActivityCheck(storage.users);
  const { jwt, authenticator } = createPlatformAuth(config, sessions, { users: activity });
  const { handlers, internalHandlers } = createAuthnService({
    ...(shared.mfa ? { mfa: shared.mfa } : {}),
    activity,
    options: authnOptions(config),
    users: storage.users,
    sessions,
    lockout: storage.lockout,
    jwt,
    authenticator,
    logger,
  });
  const relay = shared.bus ? startOutboxRelay({ db, bus: shared.bus, logger }) : null;
  if (!shared.bus) logger.warn('no --nats-url: events stay in the outbox until a bus is configured');
  return {
    handlers,
    internalHandlers,
    schema: createAuthnSubgraph(handlers, internalHandlers),
    authenticator,
    sessions,
    db,
    async close() {
      await relay?.stop();
      await redisSessions?.close();
      await db.close();
    },
  };
}

/** `gatehouse authn [flags]` (split mode). */
export async function runAuthn(argv: readonly string[]): Promise<void> {
  const config = parseConfigOrExit('authn', argv);
  const logger = createLogger(config.logLevel as LogLevel).child({ service: 'authn' });
  const registry = createMetricsRegistry();
  const bus = config.natsUrl ? await orFatal('database', () => createJetStreamBus({ url: config.natsUrl!, logger, stream: config.natsStream, subjectPrefix: config.natsStream.toLowerCase() })) : null;
  const internalToken = deriveInternalToken(config.clientSecret);
  const mfaDesc = serviceDescriptor('mfa.internal');
  const mfa = config.mfaAddress ? typedClient(mfaDesc, createGrpcClient(mfaDesc, { address: config.mfaAddress, internalToken })) : null;
  if (!mfa) logger.warn('no --mfa-address: a login with an unverified email is refused instead of sent a code (behaviour.md §3.3 step 8)');
  const runtime = await buildAuthn(config, { logger, bus, ...(mfa ? { mfa } : {}) });
  const grpc = await orFatal({ host: config.host, port: config.grpcPort }, () => startGrpcServer({
    host: config.host, port: config.grpcPort, logger, internalToken,
    services: [
      { desc: serviceDescriptor('authn'), handlers: runtime.handlers },
      { desc: serviceDescriptor('authn.internal'), handlers: runtime.internalHandlers, internal: true },
    ],
  }));
  const http = await orFatal({ host: config.host, port: config.httpPort }, () => startServiceHttp({
    host: config.host, port: config.httpPort, schema: runtime.schema, internalToken, logger,
  }));
  const metrics = await orFatal({ host: config.metricsHost, port: config.metricsPort }, () => startMetricsServer({ host: config.metricsHost, port: config.metricsPort, registry }));
  logger.info({ grpc_port: grpc.port, http_port: http.port, metrics_port: metrics.port }, 'authn started');
  closeOnSignal([async () => bus?.close(), runtime.close, grpc.close, http.close, metrics.close, async () => mfa?.close()], (m) => logger.info(m));
}
