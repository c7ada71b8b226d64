/**
 * @module authn/main
 * The only file that wires authn: flags → database (migrations, legacy index cleanup) → session
 * store (Redis, else the database) → signer and authenticator → handlers, plus the outbox relay that
 * moves authn's events to the bus. `buildAuthn` is the module's build (src/index.ts), the same in
 * all-in-one and split mode.
 */
import { VERSION, type Config } from '@gatehouse/config';
import { databaseOptionsOf, databaseReadiness, deliveryJobFields, dropLegacyUniqueIndexes, openDatabase, resealColumns, sqliteDataVersion, startOutboxRelay, startResealer, startSweeper, type Database, type ResealCount } from '@gatehouse/db';
import { jobSealKey } from '@gatehouse/crypto';
import type { Logger } from '@gatehouse/observability';
import { combineVersions, countAttempts, createPlatformAuth, createRedisSessionStore, type SessionStore } from '@gatehouse/auth';
import { orFatal, serviceDescriptor } from '@gatehouse/rpc';
import type { ServiceRuntime, ServiceShared } from '@gatehouse/service';
import { createAuthnService, createUserActivityCheck } from './service.ts';
import { createAfterAnswerQueue } from './domain/deps.ts';
import { authnSchema, createMikroAuthnStorage } from './storage/mikro/index.ts';
import { createCachedAuthnStorage } from './storage/cached.ts';
import { AUTHN_RETENTION } from './storage/mikro/retention.ts';
import { createAuthnSubgraph } from './graphql/resolvers.ts';
import type { AuthnOptions } from './domain/options.ts';

/** The flags authn reads, as its options. */
function authnOptions(config: Config): AuthnOptions {
  return { ...(config as unknown as AuthnOptions), version: VERSION };
}

/**
 * Builds authn in this process. `shared.bus` receives authn's events through the outbox relay;
 * without a bus (split mode with no --nats-url) events stay in the outbox until one is configured.
 * The session and user-activity reads are cached in process, kept correct by `shared.invalidation`
 * (issue 22; libs/auth README "Credential caches").
 * `shared.peer('mfa.internal')`: the mfa service's internal API (in process in all-in-one, gRPC to
 * --mfa-address in split mode). Its runtime's `authenticator` is the deployment's credential
 * resolution, which all-in-one shares with the services built after it.
 */
export async function buildAuthn(config: Config, shared: ServiceShared): Promise<ServiceRuntime & { sessions: SessionStore; db: Database }> {
  const logger = shared.logger.child({ service: 'authn' });
  const dbOptions = databaseOptionsOf(config);
  const db = await orFatal('database', () => openDatabase(dbOptions, authnSchema, { logger }));
  if (db.type !== 'mongodb') {
    // spec §9: a 1.x database may carry unique constraints on these columns; uniqueness is the application's.
    await dropLegacyUniqueIndexes(db, 'authn_users', ['email', 'phone_number'], logger);
  }
  const redisSessions = config.redisUrl ? createRedisSessionStore({ url: config.redisUrl, keyPrefix: 'gatehouse:', logger }) : null;
  const mikro = createMikroAuthnStorage(db);
  // Credential caches (libs/auth README): every process watches the notification channel (issue 22), and
  // a second process on the same SQLite file is noticed through PRAGMA data_version; without a channel
  // (unit fixtures) only all-in-one SQLite without Redis, the sole writer, caches.
  const channel = shared.invalidation ?? null;
  const dataVersion = db.type === 'sqlite' ? sqliteDataVersion(dbOptions.url ?? dbOptions.name ?? ':memory:') : null;
  const cacheable = channel !== null || (shared.soleWriter === true && db.type === 'sqlite' && !redisSessions);
  const cached = cacheable
    ? createCachedAuthnStorage({ users: mikro.users, sessions: redisSessions ?? mikro.sessions }, {
      externalVersion: combineVersions(dataVersion, channel ? () => channel.version('credentials') : null),
      ...(channel ? { publish: () => channel.publish('credentials') } : {}),
    })
    : null;
  if (cached) logger.debug({ channel: channel?.kind ?? 'none' }, 'credential caches on');
  const storage = { ...mikro, ...(cached ? { users: cached.users } : {}) };
  const sessions = cached?.sessions ?? redisSessions ?? mikro.sessions;
  // behaviour.md §2.1: a revoked or deleted user's tokens stop validating at once
  const activity = cached?.activity ?? createUserActivityCheck(storage.users);
  const { jwt, authenticator } = createPlatformAuth(config, sessions, { users: activity });
  const mfa = shared.peer('mfa.internal');
  if (!mfa) logger.warn('no --mfa-address: a login with an unverified email is refused instead of sent a code (behaviour.md §3.3 step 8)');
  // what an answer promised and is written after it (issue 30 §6) is finished before the database closes
  const afterAnswer = createAfterAnswerQueue(logger);
  const { handlers, internalHandlers } = createAuthnService({
    afterAnswer: afterAnswer.afterAnswer,
    ...(mfa ? { mfa } : {}),
    activity,
    options: authnOptions(config),
    users: storage.users,
    sessions,
    lockout: countAttempts(storage.lockout, shared.registry),
    oauth: storage.oauth,
    jwt,
    authenticator,
    logger,
  });
  const relay = shared.bus ? startOutboxRelay({ db, bus: shared.bus, logger }) : null;
  if (!shared.bus) logger.warn('no --nats-url: events stay in the outbox until a bus is configured');
  // issue 23: expired rows go on a period; every replica sweeps (each row is deleted once)
  const sweeper = startSweeper({ db, rules: AUTHN_RETENTION, logger, registry: shared.registry });
  // issue 32 §2: the email jobs waiting in the outbox, sealed under an older --encryption-key, are sealed again under the first
  const resealer = startResealer({ db, columns: [], outbox: deliveryJobFields(jobSealKey(config.encryptionKey, config.clientSecret ?? '')), logger });
  return {
    public: { desc: serviceDescriptor('authn'), handlers },
    internal: { desc: serviceDescriptor('authn.internal'), handlers: internalHandlers },
    schema: () => createAuthnSubgraph(handlers, internalHandlers),
    authenticator,
    sessions,
    db,
    readiness: [databaseReadiness(db, dbOptions), ...(redisSessions ? [redisSessions.readiness] : [])],
    async close() {
      await afterAnswer.drain();
      await relay?.stop();
      await sweeper.stop();
      await resealer.stop();
      await redisSessions?.close();
      await db.close();
    },
  };
}

/**
 * `gatehouse reseal` for authn (issue 32 §2): one pass over the `email.send` jobs waiting in authn's outbox
 * (their sealed links), on the database of `config`, then closes it. authn seals no column of its own at
 * rest (client secrets are MACed, re-MACed on use).
 * @returns `{"authn_outbox.data": {resealed, unreadable}}`
 */
export async function resealAuthn(config: Config, logger: Logger): Promise<Record<string, ResealCount>> {
  const db = await openDatabase(databaseOptionsOf(config), authnSchema, { logger });
  try {
    return await resealColumns(db, [], deliveryJobFields(jobSealKey(config.encryptionKey, config.clientSecret ?? '')));
  } finally {
    await db.close();
  }
}
