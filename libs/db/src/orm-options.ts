/**
 * @module @gatehouse/db/orm-options
 * Picks the MikroORM driver and its options for a `DatabaseOptions` (flags `--database-*`).
 */
import { AppError } from '@gatehouse/errors';
import type { Options } from '@mikro-orm/core';
import type { DatabaseOptions, DatabaseType } from './types.ts';
import { DATABASE_TYPES } from './types.ts';
import { sharedSqliteDialect } from './sqlite-shared.ts';
import { boundDriver } from './bound-sql.ts';

/** Which package provides the driver for a type. */
export const DRIVER_PACKAGES: Readonly<Record<DatabaseType, string>> = {
  sqlite: '@mikro-orm/sqlite',
  postgres: '@mikro-orm/postgresql',
  mysql: '@mikro-orm/mysql',
  mariadb: '@mikro-orm/mariadb',
  mongodb: '@mikro-orm/mongodb',
};

/** TLS material for pg / mysql2 (`ssl` option); undefined when no PEM was given. */
export function tlsOptions(o: DatabaseOptions): Record<string, string | boolean> | undefined {
  if (!o.cert && !o.caCert && !o.certKey) return undefined;
  const ssl: Record<string, string | boolean> = { rejectUnauthorized: o.caCert !== undefined };
  if (o.caCert) ssl.ca = o.caCert;
  if (o.cert) ssl.cert = o.cert;
  if (o.certKey) ssl.key = o.certKey;
  return ssl;
}

/**
 * Loads the driver class for `options.type` and builds the MikroORM options (without entities).
 * SQL drivers bind every value as a parameter instead of quoting it into the SQL text
 * (`boundDriver`, issue 30 §5).
 * @throws AppError `invalid_argument` for an unknown type or missing connection settings.
 */
export async function buildOrmOptions(o: DatabaseOptions): Promise<Partial<Options>> {
  if (!DATABASE_TYPES.includes(o.type)) {
    throw new AppError('invalid_argument', `unsupported database type: ${String(o.type)}`);
  }
  // MikroORM creates a missing database on connect by default: a mistyped name would silently
  // start an empty deployment, so that takes `--database-create` (issue 15 item 7)
  const common = { allowGlobalContext: false, debug: false, forceUndefined: false, ensureDatabase: o.create === true };
  if (o.type === 'sqlite') {
    const path = o.url ?? o.name;
    if (!path) throw new AppError('invalid_argument', 'sqlite needs a database url (file path or :memory:)');
    const { SqliteDriver } = await import('@mikro-orm/sqlite');
    return { ...common, driver: boundDriver(SqliteDriver, 'sqlite'), dbName: path, driverOptions: () => sharedSqliteDialect(path) };
  }
  const conn = {
    ...(o.url ? { clientUrl: o.url } : {}),
    ...(o.host ? { host: o.host } : {}),
    ...(o.port ? { port: o.port } : {}),
    ...(o.name ? { dbName: o.name } : {}),
    ...(o.username ? { user: o.username } : {}),
    ...(o.password ? { password: o.password } : {}),
  };
  if (!o.url && !o.host) throw new AppError('invalid_argument', `${o.type} needs a database url or host`);
  const ssl = tlsOptions(o);
  switch (o.type) {
    case 'postgres': {
      const { PostgreSqlDriver } = await import('@mikro-orm/postgresql');
      return { ...common, ...conn, driver: boundDriver(PostgreSqlDriver, 'postgres'), ...(ssl ? { driverOptions: { ssl } } : {}) };
    }
    case 'mysql': {
      const { MySqlDriver } = await import('@mikro-orm/mysql');
      return { ...common, ...conn, driver: boundDriver(MySqlDriver, 'mysql'), ...(ssl ? { driverOptions: { ssl } } : {}) };
    }
    case 'mariadb': {
      const { MariaDbDriver } = await import('@mikro-orm/mariadb');
      return { ...common, ...conn, driver: boundDriver(MariaDbDriver, 'mariadb'), ...(ssl ? { driverOptions: { ssl } } : {}) };
    }
    case 'mongodb': {
      const { MongoDriver } = await import('@mikro-orm/mongodb');
      const mongoTls = ssl ? { tls: true, ...(o.caCert ? { ca: o.caCert } : {}), ...(o.cert ? { cert: o.cert } : {}), ...(o.certKey ? { key: o.certKey } : {}) } : undefined;
      return { ...common, ...conn, driver: MongoDriver, ...(mongoTls ? { driverOptions: mongoTls } : {}) };
    }
  }
}
