/**
 * @module @gatehouse/db/open
 * `openDatabase`: connect with the right MikroORM driver, run the service's migrations (its own
 * outbox table first), and hand back the Database handle.
 */
import { FlushMode, MikroORM } from '@mikro-orm/core';
import type { EntitySchema } from '@mikro-orm/core';
import type { EntityManager, IsolationLevel } from '@mikro-orm/core';
import type { Dialect } from 'kysely';
import type { Logger } from '@gatehouse/observability';
import { AppError } from '@gatehouse/errors';
import { buildOrmOptions } from './orm-options.ts';
import { databaseTarget } from './readiness.ts';
import { runMigrations, execOn } from './migrate.ts';
import { preparedReads } from './prepared.ts';
import { attachMongoOutbox, createMongoOutbox, nextMongoSeq, createOutbox, mongoOutboxEntity, outboxEntity, outboxMigration, outboxTraceMigration } from './outbox.ts';
import type { Database, DatabaseOptions, MongoAtomicity, Outbox, ServiceSchema } from './types.ts';
import { convertInt64Strings, int64AsNumbers } from './mongo-int64.ts';

const SERVICE_NAME = /^[a-z][a-z0-9_]{0,40}$/;

/** `cannot connect to <type> at <host:port/name>: <driver's reason>`, with the way out for a missing database. */
function connectFailure(options: DatabaseOptions, err: unknown): string {
  const reason = (err instanceof AggregateError && err.errors[0] instanceof Error ? err.errors[0].message : err instanceof Error ? err.message : String(err)) || 'no reason given';
  const missing = /database "[^"]*" does not exist|Unknown database/i.test(reason);
  return `cannot connect to ${options.type} at ${databaseTarget(options)}: ${reason}${missing ? ' (check the name, or pass --database-create to create it)' : ''}`;
}

/** How often `openDatabase` connects when another process's CREATE DATABASE won the race. */
const CREATE_RACE_ATTEMPTS = 3;

/**
 * Whether `err` (from connecting with `ensureDatabase`) says the database was created meanwhile by
 * someone else: PostgreSQL `42P04` duplicate_database or `23505` unique_violation (on
 * pg_database's name index, when two CREATE DATABASE commit together), MySQL/MariaDB errno 1007
 * ER_DB_CREATE_EXISTS. Follows `cause` links.
 */
function lostCreateRace(err: unknown): boolean {
  for (let e: unknown = err, depth = 0; e !== null && typeof e === 'object' && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    const { code, errno } = e as { code?: unknown; errno?: unknown };
    if (code === '42P04' || code === '23505' || code === 'ER_DB_CREATE_EXISTS' || errno === 1007) return true;
  }
  return false;
}

/**
 * Connects, applies `schema.migrations` not yet recorded in `<service>_migrations` (after the
 * built-in `<service>_outbox` migration) and returns the handle. On MongoDB there are no SQL
 * migrations: indexes declared on the entities are ensured instead, and the outbox is the
 * `<service>_outbox` collection (issue 23; the relay reads it through the driver).
 * @throws AppError `invalid_argument` for bad options or service name; `unavailable` when the
 *   database cannot be reached; `internal` when a migration fails.
 */
export async function openDatabase(options: DatabaseOptions, schema: ServiceSchema, deps: { logger: Logger }): Promise<Database> {
  if (!SERVICE_NAME.test(schema.service)) {
    throw new AppError('invalid_argument', `invalid service name for table prefixes: ${schema.service}`);
  }
  // one `service` key per line: the caller's logger usually carries it already
  const logger = deps.logger.child({ component: 'db', ...('service' in deps.logger.bindings() ? {} : { service: schema.service }) });
  const base = await buildOrmOptions(options);
  // SQLite: keep the shared dialect MikroORM builds (each connect), for the prepared reads below
  let sqliteDialect: Dialect | undefined;
  if (options.type === 'sqlite') {
    const make = base.driverOptions as () => Dialect;
    base.driverOptions = (() => (sqliteDialect = make())) as never;
  }
  const isMongo = options.type === 'mongodb';
  const outboxSchema = isMongo ? mongoOutboxEntity(schema.service) : outboxEntity(schema.service);
  // MongoDB: collection → its int64 fields, stored as numbers (issue 32 §4)
  const int64Fields = new Map<string, string[]>();
  const entities = [...(isMongo ? schema.entities.map((e) => forMongo(e, int64Fields)) : schema.entities), outboxSchema];
  const connectOrm = async (): Promise<MikroORM> => {
    let created: MikroORM;
    try {
      created = (await MikroORM.init({ ...base, entities, discovery: { warnWhenNoEntities: false } })) as unknown as MikroORM;
    } catch (cause) {
      throw new AppError('invalid_argument', `invalid ${options.type} configuration or entity metadata for ${schema.service}`, { cause });
    }
    try {
      await created.connect();
      const check = await created.checkConnection();
      if (!check.ok) throw new AppError('unavailable', connectFailure(options, check.error ?? new Error(check.reason)), { cause: check.error });
    } catch (err) {
      await created.close(true).catch(() => undefined);
      if (err instanceof AppError) throw err;
      throw new AppError('unavailable', connectFailure(options, err), { cause: err });
    }
    return created;
  };
  let orm: MikroORM;
  for (let attempt = 1; ; attempt++) {
    try {
      orm = await connectOrm();
      break;
    } catch (err) {
      // --database-create from several processes at once (the split services started together):
      // each saw the database missing, one CREATE DATABASE won and the others lost to it. The
      // database exists now, so connecting again finds it (issue 37 §5).
      if (!(options.create === true && attempt < CREATE_RACE_ATTEMPTS && lostCreateRace(err))) throw err;
      logger.info({ attempt }, 'another process created the database first; connecting to it');
    }
  }

  let outbox: Outbox;
  let mongo: MongoAtomicity | undefined;
  if (isMongo) {
    await orm.schema.ensureIndexes();
    await convertInt64Strings(orm, schema.service, int64Fields, logger);
    outbox = createMongoOutbox(schema.service);
    orm.em.getEventManager().registerSubscriber({ onFlush: attachMongoOutbox(outboxSchema) });
    mongo = (await mongoHasTransactions(orm)) ? 'transaction' : 'single-document';
    logger.debug({ atomicity: mongo }, 'mongodb: how a unit of work and its events are written');
  } else {
    try {
      await runMigrations(orm.em.fork(), options.type as 'sqlite', schema.service, [outboxMigration(schema.service), outboxTraceMigration(schema.service), ...schema.migrations], logger);
    } catch (err) {
      await orm.close(true).catch(() => undefined);
      throw err;
    }
    outbox = createOutbox(schema.service, outboxSchema);
  }

  return {
    type: options.type,
    service: schema.service,
    orm,
    outbox,
    ...(mongo ? { mongoAtomicity: mongo } : {}),
    fork: () => orm.em.fork() as EntityManager,
    transactional: <T>(fn: (em: EntityManager) => Promise<T>, txOptions: { isolationLevel?: IsolationLevel } = {}) =>
      mongo === 'single-document'
        ? unitOfWork(orm, fn)
        : orm.em.fork().transactional((em) => fn(em as EntityManager), txOptions.isolationLevel ? { isolationLevel: txOptions.isolationLevel } : {}),
    async execute<T = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<T[]> {
      if (isMongo) throw new AppError('unimplemented', 'raw SQL is not available on MongoDB');
      return (await execOn(orm.em.fork())(sql, params)) as T[];
    },
    ...(isMongo ? {} : { prepare: preparedReads(options.type, orm, () => sqliteDialect) }),
    close: () => orm.close(),
  };
}

/**
 * Whether the MongoDB server runs multi-document transactions: a replica set member (`hello` names
 * its `setName`) or a mongos router (`msg: "isdbgrid"`). A standalone server, and FerretDB v1,
 * have none (MongoDB manual, "Transactions": "require a replica set or sharded cluster").
 */
async function mongoHasTransactions(orm: MikroORM): Promise<boolean> {
  const conn = (orm.em.fork() as unknown as { getConnection(): { getClient(): { db(name: string): { command(c: object): Promise<Record<string, unknown>> } } } }).getConnection();
  const hello = await conn.getClient().db('admin').command({ hello: 1 });
  return typeof hello.setName === 'string' || hello.msg === 'isdbgrid';
}

/**
 * `db.transactional` on a MongoDB server without transactions: `fn` runs on an EntityManager whose
 * flushes are held back (and that never flushes on its own before a query), so every document it
 * inserts or changes through the unit of work, and the events it enqueues, are written by one flush
 * when `fn` resolves; the outbox puts the events in the first of those documents (single-document
 * pattern, `attachMongoOutbox`), so that document's change and the events are atomic. When `fn`
 * throws, nothing held back is written. Writes that bypass the unit of work (`nativeUpdate`,
 * `nativeDelete`, `upsert`) run at once and are not undone; documents of one unit of work are
 * written one after the other (MongoDB, like any store without transactions, has no atomicity
 * across documents). A `nativeDelete` first writes what the unit of work holds so far, events
 * included: an event enqueued before a delete is durable before the delete runs (issue 32 §4,
 * `user.deleted`), so a crash between them leaves the event and the documents, never the deletion
 * without its event; what `fn` does after the delete is still held until it resolves.
 */
async function unitOfWork<T>(orm: MikroORM, fn: (em: EntityManager) => Promise<T>): Promise<T> {
  const em = orm.em.fork({ flushMode: FlushMode.COMMIT }) as EntityManager;
  const flush = em.flush.bind(em);
  em.flush = async () => {};
  const nativeDelete = em.nativeDelete.bind(em);
  em.nativeDelete = (async (...args: Parameters<typeof nativeDelete>) => {
    await flush();
    return nativeDelete(...args);
  }) as typeof em.nativeDelete;
  const result = await fn(em);
  await flush();
  return result;
}

/**
 * An entity as MongoDB stores it: the primary key is the document's `_id` whatever column name it has
 * on SQL (the driver requires it), and an auto-increment key, which MongoDB cannot generate, is given
 * a number that grows within the process (µs of the wall clock) when the entity is created. The
 * property names, which the storage code uses, are unchanged. The definition is changed in place
 * (the storage code queries through these very objects), so a process opens one service's entities
 * on MongoDB or on SQL, not both. A `bigint` property is stored as a BSON number (`int64AsNumbers`);
 * its field name is added to `int64Fields` under the entity's collection.
 */
function forMongo(schema: EntitySchema<any, any>, int64Fields: Map<string, string[]>): EntitySchema<any, any> {
  const fields = int64AsNumbers(schema);
  if (fields.length > 0) int64Fields.set(String(schema.meta.tableName ?? schema.meta.collection ?? schema.meta.className), fields);
  for (const prop of Object.values(schema.meta.properties as unknown as Record<string, Record<string, unknown>>)) {
    if (prop.primary !== true) continue;
    prop.fieldName = '_id';
    if (prop.autoincrement === true) {
      prop.autoincrement = false;
      prop.onCreate = () => nextMongoSeq();
    }
  }
  return schema;
}
