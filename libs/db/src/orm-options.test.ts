/** @module @gatehouse/db/orm-options.test — driver selection per --database-type, TLS pass-through, bad input. */
import { describe, it, expect } from '@jest/globals';
import { MongoDriver } from '@mikro-orm/mongodb';
import { PostgreSqlDriver } from '@mikro-orm/postgresql';
import { MySqlDriver } from '@mikro-orm/mysql';
import { MariaDbDriver } from '@mikro-orm/mariadb';
import { SqliteDriver } from '@mikro-orm/sqlite';
import { AppError } from '@gatehouse/errors';
import { buildOrmOptions } from './index.ts';
import type { DatabaseType } from './index.ts';

describe('buildOrmOptions', () => {
  it.each([
    ['postgres', PostgreSqlDriver],
    ['mysql', MySqlDriver],
    ['mariadb', MariaDbDriver],
    ['mongodb', MongoDriver],
  ] as const)('%s selects its MikroORM driver and passes the url', async (type, driver) => {
    const o = await buildOrmOptions({ type, url: 'scheme://u@127.0.0.1:1/db' });
    // the SQL drivers are subclassed to bind every value (bound-sql.ts); MongoDB's is the driver itself
    expect(type === 'mongodb' ? o.driver : Object.getPrototypeOf(o.driver)).toBe(driver);
    expect(o.clientUrl).toBe('scheme://u@127.0.0.1:1/db');
  });

  it('sqlite selects the better-sqlite3 driver with the file as dbName', async () => {
    const o = await buildOrmOptions({ type: 'sqlite', url: ':memory:' });
    expect(Object.getPrototypeOf(o.driver)).toBe(SqliteDriver);
    expect(o.dbName).toBe(':memory:');
  });

  it('host/port/name/username/password are mapped when no url is given', async () => {
    const o = await buildOrmOptions({ type: 'postgres', host: 'db', port: 6543, name: 'gh', username: 'u', password: 'p' });
    expect(o).toMatchObject({ host: 'db', port: 6543, dbName: 'gh', user: 'u', password: 'p' });
  });

  it('TLS PEMs go to the driver ssl options (pg, mysql) and tls options (mongodb)', async () => {
    const tls = { cert: 'CERT', caCert: 'CA', certKey: 'KEY' };
    const pg = await buildOrmOptions({ type: 'postgres', url: 'postgres://x/y', ...tls });
    expect(pg.driverOptions).toEqual({ ssl: { rejectUnauthorized: true, ca: 'CA', cert: 'CERT', key: 'KEY' } });
    const my = await buildOrmOptions({ type: 'mysql', url: 'mysql://x/y', ...tls });
    expect(my.driverOptions).toEqual({ ssl: { rejectUnauthorized: true, ca: 'CA', cert: 'CERT', key: 'KEY' } });
    const mongo = await buildOrmOptions({ type: 'mongodb', url: 'mongodb://x/y', ...tls });
    expect(mongo.driverOptions).toEqual({ tls: true, ca: 'CA', cert: 'CERT', key: 'KEY' });
  });

  it('rejects an unknown type and missing connection settings with invalid_argument', async () => {
    await expect(buildOrmOptions({ type: 'oracle' as DatabaseType })).rejects.toMatchObject({ code: 'invalid_argument' });
    await expect(buildOrmOptions({ type: 'postgres' })).rejects.toBeInstanceOf(AppError);
    await expect(buildOrmOptions({ type: 'sqlite' })).rejects.toMatchObject({ code: 'invalid_argument' });
  });
});

describe('openDatabase failures', () => {
  it('an unreachable server is unavailable, a bad service name invalid_argument', async () => {
    const { openDatabase } = await import('./index.ts');
    const { createLogger } = await import('@gatehouse/observability');
    const logger = createLogger('silent');
    const schema = { service: 'dbtest', entities: [], migrations: [] };
    await expect(openDatabase({ type: 'postgres', url: 'postgres://postgres@127.0.0.1:1/none' }, schema, { logger })).rejects.toMatchObject({ code: 'unavailable' });
    await expect(openDatabase({ type: 'mongodb', url: 'mongodb://127.0.0.1:1/none?serverSelectionTimeoutMS=300' }, schema, { logger })).rejects.toMatchObject({ code: 'unavailable' });
    await expect(openDatabase({ type: 'sqlite', url: ':memory:' }, { ...schema, service: 'Bad-Name' }, { logger })).rejects.toMatchObject({ code: 'invalid_argument' });
  });
});
