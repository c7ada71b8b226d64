/**
 * @module @gatehouse/db/prepared
 * Hot-path reads prepared once through the driver under MikroORM, instead of the ORM's per-call
 * query building (issue 22 §1): better-sqlite3 statements prepared once per SQL text (on the shared
 * connection, under its mutex); pg named prepared statements on the pool (parsed once per pooled
 * connection); mysql2 `execute` (server-side prepared, cached per pooled connection). The rows are
 * the driver's raw rows, with MikroORM's own type parsing on pg and mysql2 (the pool is the one
 * MikroORM configured), so a mapper that reads them the way it reads the ORM's rows answers the same.
 */
import { createHash } from 'node:crypto';
import type { EntitySchema, MikroORM } from '@mikro-orm/core';
import type BetterSqlite3 from 'better-sqlite3';
import type { Dialect } from 'kysely';
import { quoteIdentifier } from './ddl.ts';
import { sqliteExclusive } from './sqlite-shared.ts';
import type { DatabaseType } from './types.ts';

/** One prepared read: the `?` placeholders' values in order → the rows (column names as selected). */
export type PreparedRead = <T = Record<string, unknown>>(params: unknown[]) => Promise<T[]>;

interface PgPool {
  query(q: { name: string; text: string; values: unknown[] }): Promise<{ rows: unknown[] }>;
}
interface MysqlPool {
  execute(sql: string, values: unknown[], cb: (err: Error | null, rows: unknown) => void): void;
}

/**
 * `prepare(sql)` for an open SQL database. `sql` takes `?` placeholders (numbered `$n` for pg here).
 * Nothing touches the database until the first call; then the statement is prepared once.
 * @param sqliteDialect SQLite: the shared dialect MikroORM was given (libs/db/src/sqlite-shared.ts)
 */
export function preparedReads(type: DatabaseType, orm: MikroORM, sqliteDialect: () => Dialect | undefined): (sql: string) => PreparedRead {
  const native = (): Promise<unknown> => (orm.driver.getConnection() as unknown as { getNativeClient(): Promise<unknown> }).getNativeClient();
  return (sql) => {
    if (type === 'sqlite') {
      let stmt: BetterSqlite3.Statement | undefined;
      let on: BetterSqlite3.Database | undefined;
      return (params) => {
        const dialect = sqliteDialect();
        if (!dialect) return Promise.reject(new Error('the SQLite connection is not open'));
        return sqliteExclusive(dialect, (db) => {
          // prepared again only when the connection was reopened (a closed database's statements are dead)
          if (on !== db) [stmt, on] = [db.prepare(sql), db];
          return stmt!.all(...params) as never[];
        });
      };
    }
    if (type === 'postgres') {
      let n = 0;
      const text = sql.replace(/\?/g, () => `$${++n}`);
      // one name per text: pg refuses a name reused with another text on a connection
      const name = `gh_${createHash('sha256').update(text).digest('hex').slice(0, 24)}`;
      return async (params) => ((await ((await native()) as PgPool).query({ name, text, values: params })).rows as never[]);
    }
    if (type === 'mysql' || type === 'mariadb') {
      return async (params) => {
        const pool = (await native()) as MysqlPool;
        return new Promise((resolve, reject) => {
          pool.execute(sql, params, (err, rows) => (err ? reject(err) : resolve(rows as never[])));
        });
      };
    }
    throw new Error(`no prepared statements on ${type}`);
  };
}

/**
 * The select list of every persisted column of `entity`, each aliased to its property name
 * (`"expires_at" as "expiresAt"`), so a raw row has the keys the ORM's entities have.
 * @throws Error when `entity` is not one of the database's entities
 */
export function selectColumns(type: DatabaseType, orm: MikroORM, entity: EntitySchema<any, any>): string {
  const meta = orm.getMetadata().find(entity);
  if (!meta) throw new Error(`unknown entity ${entity.meta.className}`);
  const q = (n: string): string => quoteIdentifier(type, n);
  return meta.props
    .filter((p) => p.persist !== false && p.fieldNames?.length === 1)
    .map((p) => `${q(p.fieldNames[0]!)} as ${q(p.name)}`)
    .join(', ');
}
