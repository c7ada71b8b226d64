/**
 * @module authz/main
 * The only file that wires authz: flags → store → engine → handlers → listeners. `buildAuthz` is
 * what all-in-one mode calls; `runAuthz` is `gatehouse authz` in split mode, serving the service's
 * own gRPC port (also the direct API for internal platforms), its subgraph and its metrics.
 */
import type { GraphQLSchema } from 'graphql';
import type { Config } from '@gatehouse/config';
import { parseConfigOrExit } from '@gatehouse/config';
import { databaseOptionsOf, openDatabase, sqliteDataVersion, type Database, type DatabaseType } from '@gatehouse/db';
import { createPlatformAuth, createRedisSessionStore, type Authenticator } from '@gatehouse/auth';
import { createLogger, createMetricsRegistry, startMetricsServer, type Logger, type LogLevel, type Registry } from '@gatehouse/observability';
import { Gauge } from 'prom-client';
import { closeOnSignal, deriveInternalToken, fatal, orFatal, serviceDescriptor, startGrpcServer, startServiceHttp, type HandlerMap } from '@gatehouse/rpc';
import { createEngine, type Engine } from './domain/index.ts';
import { createMemoryStore } from './storage/memory.ts';
import { createSqlStore } from './storage/sql/store.ts';
import { fgaMigrations, sqlPortOf } from './storage/sql/db-port.ts';
import { createAuthzService } from './service.ts';
import { createAuthzSubgraph } from './graphql/resolvers.ts';

export interface AuthzRuntime {
  handlers: HandlerMap;
  schema: GraphQLSchema;
  engine: Engine | null;
  close(): Promise<void>;
}

/**
 * Opens the engine's store per spec §1: off; in memory; the main SQL database; or `--fga-store-url`.
 * @throws when the store cannot be opened (the caller turns it into a FATAL line)
 */
async function openStore(config: Config, logger: Logger): Promise<{ engine: Engine | null; db: Database | null }> {
  if (!config.fga.enabled || !config.fga.store) return { engine: null, db: null };
  if (config.fga.store === 'memory') return { engine: createEngine({ store: createMemoryStore() }), db: null };
  const options = config.fga.sharesMainDatabase
    ? databaseOptionsOf(config)
    : { type: config.fga.store as DatabaseType, url: config.fga.url ?? '' };
  const db = await openDatabase(options, { service: 'authz', entities: [], migrations: fgaMigrations }, { logger });
  // SQLite: the revision is re-read only after another process commits (PRAGMA data_version)
  const externalVersion = db.type === 'sqlite' ? sqliteDataVersion(options.url ?? options.name ?? ':memory:') : null;
  return { engine: createEngine({ store: createSqlStore(sqlPortOf(db), { externalVersion }) }), db };
}

/** Builds the authz service in this process (all-in-one shares the caller's authenticator). */
/** Engine gauges on the process registry (low cardinality: no subject or object labels). */
function registerEngineMetrics(engine: Engine, registry: Registry): void {
  const stat = (name: string, help: string, pick: (s: ReturnType<Engine['stats']>) => number): void => {
    new Gauge({ name, help, registers: [registry], collect() { this.set(pick(engine.stats())); } });
  };
  stat('gatehouse_authz_store_revision', 'revision of the relationship store this replica has loaded', (s) => s.revision);
  stat('gatehouse_authz_tuples', 'relationship tuples in this replica\'s snapshot', (s) => s.tuples);
  stat('gatehouse_authz_snapshot_full_loads', 'full snapshot loads since start', (s) => s.full_loads);
  stat('gatehouse_authz_snapshot_catch_ups', 'incremental catch-ups from the change log since start', (s) => s.catch_ups);
}

export async function buildAuthz(config: Config, shared: { logger: Logger; authenticator: Authenticator; registry: Registry }): Promise<AuthzRuntime> {
  const logger = shared.logger.child({ service: 'authz' });
  const { engine, db } = await orFatal('engine', async () => {
    const opened = await openStore(config, logger);
    // load the snapshot before serving, so the first request does not pay for it
    await opened.engine?.warm();
    return opened;
  });
  if (engine) registerEngineMetrics(engine, shared.registry);
  const { handlers } = createAuthzService({ engine, authenticator: shared.authenticator });
  return {
    handlers,
    schema: createAuthzSubgraph(handlers),
    engine,
    async close() { await db?.close(); },
  };
}

/** `gatehouse authz [flags]` (split mode). */
export async function runAuthz(argv: readonly string[]): Promise<void> {
  const config = parseConfigOrExit('authz', argv);
  const logger = createLogger(config.logLevel as LogLevel).child({ service: 'authz' });
  if (!config.redisUrl) fatal('--redis-url is required for `gatehouse authz`: callers\' sessions are shared through Redis in split mode');
  const registry = createMetricsRegistry();
  const sessions = createRedisSessionStore({ url: config.redisUrl, keyPrefix: 'gatehouse:' });
  const { authenticator } = createPlatformAuth(config, sessions);
  const runtime = await buildAuthz(config, { logger, authenticator, registry });
  const internalToken = deriveInternalToken(config.clientSecret);
  const grpc = await orFatal({ host: config.host, port: config.grpcPort }, () => startGrpcServer({
    host: config.host, port: config.grpcPort, logger, internalToken,
    services: [{ desc: serviceDescriptor('authz'), handlers: runtime.handlers }],
  }));
  const http = await orFatal({ host: config.host, port: config.httpPort }, () => startServiceHttp({
    host: config.host, port: config.httpPort, schema: runtime.schema, internalToken, logger,
  }));
  const metrics = await orFatal({ host: config.metricsHost, port: config.metricsPort }, () => startMetricsServer({ host: config.metricsHost, port: config.metricsPort, registry }));
  logger.info({ grpc_port: grpc.port, http_port: http.port, metrics_port: metrics.port, store: config.fga.store }, 'authz started');
  closeOnSignal([runtime.close, () => sessions.close(), grpc.close, http.close, metrics.close], (m) => logger.info(m));
}
