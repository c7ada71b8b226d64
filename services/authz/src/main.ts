/**
 * @module authz/main
 * The only file that wires authz: flags → store → engine → handlers. `buildAuthz` is the module's
 * build (src/index.ts), the same in all-in-one and split mode (where runService serves the service's
 * own gRPC port, also the direct API for internal platforms, its subgraph and its metrics).
 */
import { USER_DELETED_BACKOFF_MS, USER_DELETED_MAX_ATTEMPTS, consumeUserDeleted, newEnvelope } from '@gatehouse/bus';
import { combineVersions, type InvalidationChannel } from '@gatehouse/auth';
import type { Config } from '@gatehouse/config';
import type { BusEvents } from '@gatehouse/contracts';
import { databaseOptionsOf, databaseReadiness, openDatabase, sqliteDataVersion, type Database, type DatabaseType } from '@gatehouse/db';
import type { DependencyCheck, Logger, Registry } from '@gatehouse/observability';
import { Gauge } from 'prom-client';
import { registerRequestSeries, scheduleMemoryRelease } from '@gatehouse/observability';
import { fatal, orFatal, serviceDescriptor } from '@gatehouse/rpc';
import type { ServiceRuntime, ServiceShared } from '@gatehouse/service';
import { createEngine, type Engine } from './domain/index.ts';
import { deleteOrgGroupTuples } from './domain/org-groups.ts';
import { createMemoryStore } from './storage/memory.ts';
import { createSqlStore } from './storage/sql/store.ts';
import { publishingStore } from './storage/notify.ts';
import { fgaMigrations, sqlPortOf } from './storage/sql/db-port.ts';
import { createAuthzService } from './service.ts';
import { createAuthzInternal } from './rpc/internal.ts';
import { createAuthzSubgraph } from './graphql/resolvers.ts';


/**
 * Opens the engine's store per spec §1: off; in memory; the main SQL database; `--fga-store-url`; or,
 * with `--fga-store=openfga`, an OpenFGA server that answers instead of the embedded engine (issue 21 §4).
 * @throws when the store cannot be opened (the caller turns it into a FATAL line)
 */
async function openStore(config: Config, logger: Logger, channel: InvalidationChannel | null): Promise<{ engine: Engine | null; db: Database | null; readiness: DependencyCheck[] }> {
  if (!config.fga.enabled || !config.fga.store) return { engine: null, db: null, readiness: [] };
  if (config.fga.store === 'memory') return { engine: createEngine({ store: createMemoryStore() }), db: null, readiness: [] };
  if (config.fga.store === 'openfga') {
    // the OpenFGA client (@openfga/sdk, ≈ 6 MiB of heap) loads only in this mode (issue 22 §3)
    const { createOpenFgaEngine } = await import('./openfga/engine.ts');
    const url = config.fga.url ?? '';
    const engine = createOpenFgaEngine({ url, storeId: config.fga.storeId, apiToken: config.fga.apiToken });
    let target = url;
    try {
      target = new URL(url).host;
    } catch { /* the flag's own validation reports a bad URL */ }
    return { engine, db: null, readiness: [{ name: 'openfga', target, check: () => engine.ready() }] };
  }
  const options = config.fga.sharesMainDatabase
    ? databaseOptionsOf(config)
    : { type: config.fga.store as DatabaseType, url: config.fga.url ?? '', ...(config.databaseCreate ? { create: true } : {}) };
  const db = await openDatabase(options, { service: 'authz', entities: [], migrations: fgaMigrations }, { logger });
  // the revision is re-read only after a write was notified (issue 22: the process's channel, polling while
  // it is down) or, on SQLite, after another process committed (PRAGMA data_version); never per call
  const dataVersion = db.type === 'sqlite' ? sqliteDataVersion(options.url ?? options.name ?? ':memory:') : null;
  const externalVersion = channel || dataVersion ? combineVersions(dataVersion, channel ? () => channel.version('authz') : null) : null;
  const sql = createSqlStore(sqlPortOf(db), { externalVersion });
  const store = channel ? publishingStore(sql, () => channel.publish('authz')) : sql;
  return { engine: createEngine({ store }), db, readiness: [databaseReadiness(db, options)] };
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
  stat('gatehouse_authz_partial_fetches', 'objects and users those checks read from the store, since start', (s) => s.partial_fetches);
  stat('gatehouse_authz_partial_waits', 'check calls that needed too many fetches and waited for the full snapshot, since start', (s) => s.partial_waits);
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
 * Builds the authz service: the engine over its store, whose snapshot loads while it serves. Callers are checked
 * against the deployment's session store (`shared.authenticator`: authn's in all-in-one, Redis in
 * split mode, where src/index.ts requires --redis-url).
 * @throws never: a store that cannot be opened ends the process with a FATAL line
 */
export async function buildAuthz(config: Config, shared: ServiceShared): Promise<ServiceRuntime & { engine: Engine | null }> {
  const logger = shared.logger.child({ service: 'authz' });
  const authenticator = shared.authenticator ?? fatal('authz needs the deployment\'s session store to check callers (--redis-url in split mode)');
  const { engine, db, readiness } = await orFatal('engine', async () => {
    const opened = await openStore(config, logger, shared.invalidation ?? null);
    // an OpenFGA server is connected before serving: one that is not there is a start-up failure
    if (config.fga.store === 'openfga') await opened.engine?.warm();
    return opened;
  });
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
  // behaviour.md §5.7: engine admin actions, published after they commit; a failure never fails the write
  const audit = bus ? (record: Parameters<NonNullable<Parameters<typeof createAuthzService>[0]['audit']>>[0]): void => {
    bus.publish(newEnvelope('audit.recorded', 'authz', record)).catch((err: unknown) => logger.warn({ err, action: record.action }, 'audit event not published'));
  } : undefined;
  const { handlers } = createAuthzService({ engine, authenticator, ...(audit ? { audit } : {}) });
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
      await userDeleted?.stop();
      await orgDeleted?.stop();
      await db?.close();
    },
  };
}
