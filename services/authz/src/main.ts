/**
 * @module authz/main
 * The only file that wires authz: flags → store → engine → handlers. `buildAuthz` is the module's
 * build (src/index.ts), the same in all-in-one and split mode (where runService serves the service's
 * own gRPC port, also the direct API for internal platforms, its subgraph and its metrics).
 */
import { USER_DELETED_BACKOFF_MS, USER_DELETED_MAX_ATTEMPTS, consumeUserDeleted, newEnvelope, type Bus } from '@gatehouse/bus';
import { combineVersions, type Authenticator, type InvalidationChannel } from '@gatehouse/auth';
import type { Config } from '@gatehouse/config';
import type { BusEvents } from '@gatehouse/contracts';
import { databaseOptionsOf, databaseReadiness, openDatabase, sqliteDataVersion, startOutboxRelay, type Database, type DatabaseType } from '@gatehouse/db';
import type { DependencyCheck, Logger, Registry } from '@gatehouse/observability';
import { Gauge } from 'prom-client';
import { registerRequestSeries, scheduleMemoryRelease } from '@gatehouse/observability';
import { createCallContext, fatal, orFatal, serviceDescriptor } from '@gatehouse/rpc';
import type { ServiceRuntime, ServiceShared } from '@gatehouse/service';
import { createEngine, type Engine } from './domain/index.ts';
import { deleteOrgGroupTuples } from './domain/org-groups.ts';
import { createMemoryCatalog, createMemoryStore } from './storage/memory.ts';
import { createSqlStore } from './storage/sql/store.ts';
import { startChangeLogCompaction, type ChangeLogCompaction } from './storage/compaction.ts';
import { createSqlCatalog } from './storage/sql/catalog.ts';
import type { AuthzStore, StoreCatalog } from './storage/ports.ts';
import { monotonicFactory } from 'ulid';
import { withTxEvents, type TxEvents } from './storage/tx-events.ts';
import type { EngineAudit } from './rpc/deps.ts';
import { publishingStore } from './storage/notify.ts';
import { fgaMigrations, sqlPortOf } from './storage/sql/db-port.ts';
import { createAuthzService } from './service.ts';
import { createAuthzInternal } from './rpc/internal.ts';
import { createAuthzSubgraph } from './graphql/resolvers.ts';
import type { OpenFgaAuthn } from './openfga-api/http.ts';


/**
 * Opens the engine's store per spec §1: off; in memory; the main SQL database; `--fga-store-url`; or,
 * with `--fga-store=openfga`, an OpenFGA server that answers instead of the embedded engine (issue 21 §4).
 * @throws when the store cannot be opened (the caller turns it into a FATAL line)
 */
async function openStore(config: Config, logger: Logger, channel: InvalidationChannel | null): Promise<OpenedStore> {
  if (!config.fga.enabled || !config.fga.store) return { engine: null, db: null, readiness: [], store: null, catalog: null };
  if (config.fga.store === 'memory') {
    const store = createMemoryStore();
    return { engine: createEngine({ store }), db: null, readiness: [], store, catalog: createMemoryCatalog() };
  }
  if (config.fga.store === 'openfga') {
    // the OpenFGA client (@openfga/sdk, ≈ 6 MiB of heap) loads only in this mode (issue 22 §3)
    const { createOpenFgaEngine } = await import('./openfga/engine.ts');
    const url = config.fga.url ?? '';
    const engine = createOpenFgaEngine({ url, storeId: config.fga.storeId, apiToken: config.fga.apiToken });
    let target = url;
    try {
      target = new URL(url).host;
    } catch { /* the flag's own validation reports a bad URL */ }
    return { engine, db: null, readiness: [{ name: 'openfga', target, check: () => engine.ready() }], store: null, catalog: null };
  }
  const options = config.fga.sharesMainDatabase
    ? databaseOptionsOf(config)
    : { type: config.fga.store as DatabaseType, url: config.fga.url ?? '', ...(config.databaseCreate ? { create: true } : {}) };
  const db = await openDatabase(options, { service: 'authz', entities: [], migrations: fgaMigrations }, { logger });
  // the revision is re-read only after a write was notified (issue 22: the process's channel, polling while
  // it is down) or, on SQLite, after another process committed (PRAGMA data_version); never per call
  const dataVersion = db.type === 'sqlite' ? sqliteDataVersion(options.url ?? options.name ?? ':memory:') : null;
  const externalVersion = channel || dataVersion ? combineVersions(dataVersion, channel ? () => channel.version('authz') : null) : null;
  const port = sqlPortOf(db);
  const sql = createSqlStore(port, { externalVersion, outboxTable: db.outbox.table });
  const publishing = (s: AuthzStore): AuthzStore => (channel ? publishingStore(s, () => channel.publish('authz')) : s);
  const store = publishing(sql);
  const engine = createEngine({ store });
  // issue 32 §3: this replica reports the revision its snapshot applied; the change log is compacted below
  // what every live replica has applied
  const compaction = startChangeLogCompaction({ store: sql, applied: () => (engine.stats().full_loads > 0 ? engine.stats().revision : null), logger });
  // the OpenFGA API's other stores (issue 36 §1): tables of their own, writes notified on the same topic
  const catalog = createSqlCatalog(port, { externalVersion, wrap: publishing });
  return { engine, db, readiness: [databaseReadiness(db, options)], store, catalog, compaction };
}

/** What {@link openStore} opened: the engine, its database, and for the OpenFGA API its store and the catalog of other stores. */
interface OpenedStore {
  engine: Engine | null;
  db: Database | null;
  readiness: DependencyCheck[];
  /** the engine's store (null over an OpenFGA server or when off) */
  store: AuthzStore | null;
  /** the OpenFGA API's other stores (null over an OpenFGA server or when off) */
  catalog: StoreCatalog | null;
  /** issue 32 §3: the change log's compaction (SQL stores only) */
  compaction?: ChangeLogCompaction;
}

/**
 * How engine admin actions are recorded (issue 32): with a SQL store, the event is written by the store
 * in the write's own transaction ({@link withTxEvents}); when the write stored none (nothing changed in
 * a transaction of the store), it goes to the outbox in a transaction of its own before the answer.
 * Without a database (memory or OpenFGA store) it is published to the bus (a failure is logged).
 */
function engineAudit(db: Database | null, bus: Bus | null, logger: Logger): EngineAudit | undefined {
  if (!db && !bus) return undefined;
  return {
    async around(write, record) {
      const events: TxEvents = { make: (info) => [newEnvelope('audit.recorded', 'authz', record(info))], written: false };
      const result = await withTxEvents(events, write);
      if (events.written) return result;
      const envelope = newEnvelope('audit.recorded', 'authz', record({ result }));
      if (db) {
        await db.transactional(async (em) => db.outbox.enqueue(em, envelope));
      } else {
        await bus!.publish(envelope).catch((err: unknown) => logger.warn({ err, action: envelope.data.action }, 'audit event not published'));
      }
      return result;
    },
  };
}

/** Engine gauges on the process registry (low cardinality: no subject or object labels). */
function registerEngineMetrics(engine: Engine, registry: Registry): void {
  const stat = (name: string, help: string, pick: (s: ReturnType<Engine['stats']>) => number): void => {
    new Gauge({ name, help, registers: [registry], collect() { this.set(pick(engine.stats())); } });
  };
  stat('gatehouse_authz_store_revision', 'revision of the relationship store this replica has loaded', (s) => s.revision);
  stat('gatehouse_authz_tuples', 'relationship tuples in this replica\'s snapshot', (s) => s.tuples);
  stat('gatehouse_authz_snapshot_full_loads', 'full snapshot loads since start', (s) => s.full_loads);
  stat('gatehouse_authz_snapshot_catch_ups', 'incremental catch-ups from the change log since start', (s) => s.catch_ups);
  stat('gatehouse_authz_partial_checks', 'check calls answered from the store while a full snapshot load ran, since start', (s) => s.partial_checks);
  stat('gatehouse_authz_partial_lists', 'list_permissions, list_users and expand calls answered from the store while a full snapshot load ran, since start', (s) => s.partial_lists);
  stat('gatehouse_authz_partial_fetches', 'objects and users those calls read from the store, since start', (s) => s.partial_fetches);
  stat('gatehouse_authz_partial_waits', 'check, list and expand calls that needed too many fetches and waited for the full snapshot, since start', (s) => s.partial_waits);
}

/**
 * `gatehouse_authz_openfga_requests_total{method,outcome}` and `gatehouse_authz_openfga_request_duration_seconds`
 * (histogram, same labels) for the calls the OpenFGA backend makes (`method`: the OpenFGA API method,
 * `outcome`: `ok`, `invalid` or `unavailable`); low cardinality, no store, object or subject labels.
 */
async function registerOpenFgaMetrics(registry: Registry): Promise<void> {
  const { observeOpenFga } = await import('./openfga/client.ts');
  const table = registerRequestSeries(registry, {
    counter: { name: 'gatehouse_authz_openfga_requests_total', help: 'calls to the OpenFGA server, by API method and outcome' },
    histogram: {
      name: 'gatehouse_authz_openfga_request_duration_seconds', help: 'OpenFGA call duration in seconds, by API method and outcome',
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    },
    labelNames: ['method', 'outcome'],
  });
  observeOpenFga((method, outcome, seconds) => table.series({ method, outcome }).record(seconds));
}

/**
 * OpenFGA's own API (issue 36), HTTP on `--openfga-http-port` and gRPC on `--openfga-grpc-port`, over the
 * same engine as `/v1` (and the stores created through it), when either flag is given; null otherwise.
 * Its modules load only then.
 * @throws never: a port that cannot be bound, or the flag without an engine, ends the process with a FATAL line
 */
async function serveOpenFgaApi(config: Config, opened: OpenedStore, authenticator: Authenticator, logger: Logger, registry: Registry): Promise<{ close(): Promise<void> } | null> {
  if (config.openfgaHttpPort === undefined && config.openfgaGrpcPort === undefined) return null;
  const engine = opened.engine;
  if (!engine) fatal('--openfga-http-port and --openfga-grpc-port need the authorization engine (a SQL main database, or --fga-store)');
  const { startOpenFgaHttp } = await import('./openfga-api/http.ts');
  const { createOpenFgaOperations, GATEHOUSE_STORE_ID } = await import('./openfga-api/operations.ts');
  const { createStoreDirectory } = await import('./openfga-api/stores.ts');
  const stores = createStoreDirectory({ engine, store: opened.store, catalog: opened.catalog, newId: monotonicFactory() });
  const ops = createOpenFgaOperations(stores, {
    maxTuplesPerWrite: config.openfgaMaxTuplesPerWrite, maxChecksPerBatchCheck: config.openfgaMaxChecksPerBatchCheck,
    listObjectsMaxResults: config.openfgaListObjectsMaxResults, listUsersMaxResults: config.openfgaListUsersMaxResults,
    listDeadlineMs: config.openfgaListDeadline * 1000,
  });
  const authn: OpenFgaAuthn = config.openfgaAuthnMethod === 'none' ? { method: 'none' }
    : config.openfgaAuthnMethod === 'oidc'
      ? { method: 'oidc', caller: (authorization) => authenticator.resolveCaller(createCallContext({ headers: { authorization }, protocol: 'rest' })), clientIds: config.openfgaAuthnClientIds ?? [] }
      : { method: 'preshared', keys: config.openfgaAuthnPresharedKeys ?? [] };
  if (authn.method === 'none') logger.warn('the OpenFGA API accepts every caller unauthenticated (--openfga-authn-method=none): local development only');
  const host = config.openfgaHttpHost;
  const closers: Array<() => Promise<void>> = [];
  if (config.openfgaHttpPort !== undefined) {
    const server = await orFatal({ host, port: config.openfgaHttpPort }, () => startOpenFgaHttp({ host, port: config.openfgaHttpPort!, ops, authn, logger, registry }));
    logger.info({ host, port: server.port, store_id: GATEHOUSE_STORE_ID, authn: authn.method }, 'OpenFGA API listening');
    closers.push(() => server.close());
  }
  if (config.openfgaGrpcPort !== undefined) {
    const { startOpenFgaGrpc } = await import('./openfga-api/grpc.ts');
    const server = await orFatal({ host, port: config.openfgaGrpcPort }, () => startOpenFgaGrpc({ host, port: config.openfgaGrpcPort!, ops, authn, logger, registry }));
    logger.info({ host, grpc_port: server.port, store_id: GATEHOUSE_STORE_ID, authn: authn.method }, 'OpenFGA gRPC API listening');
    closers.push(() => server.close());
  }
  return { close: async () => { await Promise.all(closers.map((c) => c())); } };
}

/**
 * Builds the authz service: the engine over its store, whose snapshot loads while it serves. Callers are checked
 * against the deployment's session store (`shared.authenticator`: authn's in all-in-one, Redis in
 * split mode, where src/index.ts requires --redis-url).
 * @throws never: a store that cannot be opened ends the process with a FATAL line
 */
export async function buildAuthz(config: Config, shared: ServiceShared): Promise<ServiceRuntime & { engine: Engine | null }> {
  const logger = shared.logger.child({ service: 'authz' });
  const authenticator = shared.authenticator ?? fatal('authz needs the deployment\'s session store to check callers (--redis-url in split mode)');
  const opened = await orFatal('engine', async () => {
    const store = await openStore(config, logger, shared.invalidation ?? null);
    // an OpenFGA server is connected before serving: one that is not there is a start-up failure
    if (config.fga.store === 'openfga') await store.engine?.warm();
    return store;
  });
  const { engine, db, readiness, compaction } = opened;
  // The embedded engine loads its snapshot while the process starts serving (issue 22 §3): start-up
  // waits for what every request needs (the store open), not for the tuples. A check before the load
  // ends answers from the store (the engine's partial index); a request that needs the whole snapshot
  // (lists, expand) waits for that same load (SnapshotCache shares it); a failed load is retried by the
  // next request.
  if (config.fga.store !== 'openfga') {
    // the load allocates several times the index it leaves (driver rows, strings, one page at a time):
    // the heap V8 grew for it is handed back once it is done (issue 22 §3)
    engine?.warm().then(() => scheduleMemoryRelease(), (err: unknown) => logger.warn({ err }, 'authorization snapshot not loaded at start-up; the next request loads it'));
  }
  // the snapshot gauges describe the embedded engine; over OpenFGA, its calls are counted and timed instead
  if (engine && config.fga.store !== 'openfga') registerEngineMetrics(engine, shared.registry);
  if (engine && config.fga.store === 'openfga') await registerOpenFgaMetrics(shared.registry);
  const bus = shared.bus;
  // behaviour.md §5.7, issue 32: engine admin actions through authz's outbox (the relay takes them to the bus)
  const relay = db && bus ? startOutboxRelay({ db, bus, logger }) : null;
  const audit = engineAudit(db, bus, logger);
  const { handlers } = createAuthzService({ engine, authenticator, delegatedPermissions: config.delegatedPermissions, ...(audit ? { audit } : {}) });
  const openfgaApi = await serveOpenFgaApi(config, opened, authenticator, logger, shared.registry);
  // behaviour.md §5.3 delete_user: the deleted user's tuples go, also when the event waited for us
  const userDeleted = engine && shared.bus
    ? await consumeUserDeleted(shared.bus, { durable: 'authz-user-deleted', forget: (userId) => engine.deleteUserTuples(userId), logger })
    : null;
  // behaviour.md §6.1 delete_organization: the org's SCIM group tuples go with it (orgs' `organization.deleted`)
  const orgDeleted = engine && shared.bus
    ? await shared.bus.consume({
      durable: 'authz-organization-deleted', names: ['organization.deleted'], maxAttempts: USER_DELETED_MAX_ATTEMPTS, backoffMs: USER_DELETED_BACKOFF_MS,
      async handler(envelope) {
        const orgId = (envelope.data as Partial<BusEvents['organization.deleted']>).org_id;
        if (!orgId) return;
        const removed = await deleteOrgGroupTuples(engine, orgId);
        logger.debug({ event_id: envelope.id, removed }, 'group tuples of a deleted organization removed');
      },
    })
    : null;
  return {
    public: { desc: serviceDescriptor('authz'), handlers },
    internal: { desc: serviceDescriptor('authz.internal'), handlers: createAuthzInternal({ engine, authenticator }) },
    schema: () => createAuthzSubgraph(handlers),
    engine,
    logFields: { store: config.fga.store },
    readiness,
    async close() {
      await openfgaApi?.close();
      await userDeleted?.stop();
      await orgDeleted?.stop();
      await relay?.stop();
      await compaction?.stop();
      await db?.close();
    },
  };
}
