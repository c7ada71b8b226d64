/**
 * @module @gatehouse/db/types
 * The public shapes of @gatehouse/db: connection options, a service's schema and the Database handle.
 */
import type { EntityManager, IsolationLevel, MikroORM } from '@mikro-orm/core';
import type { EntitySchema } from '@mikro-orm/core';
import type { Migration } from '@mikro-orm/migrations';
import type { Envelope } from '@gatehouse/bus';
import type { Ddl } from './ddl.ts';
import type { PreparedRead } from './prepared.ts';

/** Supported stores (spec flag `--database-type`). */
export type DatabaseType = 'sqlite' | 'postgres' | 'mysql' | 'mariadb' | 'mongodb';

export const DATABASE_TYPES: readonly DatabaseType[] = ['sqlite', 'postgres', 'mysql', 'mariadb', 'mongodb'];

/** Connection settings, straight from the `--database-*` flags. */
export interface DatabaseOptions {
  type: DatabaseType;
  /** sqlite: file path or `:memory:`; others: a connection URL (`postgres://user@host:5432/db`) */
  url?: string;
  host?: string;
  port?: number;
  /** database name */
  name?: string;
  username?: string;
  password?: string;
  /** PEM client certificate (TLS), passed to the pg/mysql driver */
  cert?: string;
  /** PEM CA certificate (TLS) */
  caCert?: string;
  /** PEM client key (TLS) */
  certKey?: string;
  /** PostgreSQL/MySQL: create the database when it does not exist (`--database-create`); default: refuse */
  create?: boolean;
}

/** What a migration's `up` receives: it runs inside the service's migration lock. */
export interface MigrationContext {
  readonly type: DatabaseType;
  /** runs one statement (`?` placeholders) on the migration's connection */
  execute<T = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<T[]>;
  /** dialect-correct DDL for the current database */
  readonly ddl: Ddl;
}

/** One migration: a stable name (recorded in `<service>_migrations`) and its `up`. */
export interface FunctionMigration {
  readonly name: string;
  up(ctx: MigrationContext): Promise<void>;
}

/**
 * A MikroORM `Migration` subclass (`this.addSql(...)` in `up()`), run inside the same lock and
 * transaction; its SQL is whatever it adds, so it must branch per dialect itself.
 */
export interface ClassMigration {
  readonly name: string;
  readonly migration: new (...args: ConstructorParameters<typeof Migration>) => Migration;
}

/** Either form; the array order of `ServiceSchema.migrations` is the order they run. */
export type MigrationDefinition = FunctionMigration | ClassMigration;

/** What a service declares: its name (table prefix owner), its entities and ordered migrations. */
export interface ServiceSchema {
  /** `authn`, `authz`, `notifications`, ...; owns `<service>_migrations` and `<service>_outbox` */
  service: string;
  /** MikroORM `defineEntity(...)` results */
  entities: EntitySchema<any, any>[];
  /** applied in array order, each at most once */
  migrations: MigrationDefinition[];
}

/** The transactional outbox of one service (ARCHITECTURE §4). */
export interface Outbox {
  /** Adds the envelope to `<service>_outbox` through `em`; it commits (or rolls back) with the caller's transaction. */
  enqueue(em: EntityManager, envelope: Envelope): void;
  /** table name, `<service>_outbox` */
  readonly table: string;
}

/** How a unit of work and its events are written on MongoDB (issue 23). */
export type MongoAtomicity = 'transaction' | 'single-document';

/** An open database for one service. */
export interface Database {
  readonly type: DatabaseType;
  readonly service: string;
  readonly orm: MikroORM;
  readonly outbox: Outbox;
  /** a fresh EntityManager; one per request/RPC */
  fork(): EntityManager;
  /**
   * Runs `fn` in one transaction on a fresh EntityManager; flushes and commits when it resolves,
   * rolls back when it throws. On MongoDB without transactions (`mongoAtomicity` `single-document`)
   * it is one unit of work written by a single flush, the events inside a changed document.
   * @param options.isolationLevel SQL isolation level (ignored on SQLite and MongoDB)
   */
  transactional<T>(fn: (em: EntityManager) => Promise<T>, options?: { isolationLevel?: IsolationLevel }): Promise<T>;
  /**
   * MongoDB only: `transaction` when the server runs multi-document transactions (replica set, mongos),
   * else `single-document` (see `transactional`; README "MongoDB").
   */
  readonly mongoAtomicity?: MongoAtomicity;
  /** raw SQL for hot paths (parameterised, `?` placeholders); not available on MongoDB */
  execute<T = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<T[]>;
  /**
   * SQL databases only (absent on MongoDB): a read prepared once through the driver (`?`
   * placeholders), for hot paths that must hit the database (issue 22 §1; `prepared.ts`). Runs
   * outside any transaction; the rows are the driver's (column names as selected, see `selectColumns`).
   */
  prepare?(sql: string): PreparedRead;
  close(): Promise<void>;
}
