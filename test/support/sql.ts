/**
 * @module test/support/sql
 * Plain SQL access to a scratch PostgreSQL or MariaDB database (the `pg` and `mysql2` drivers that
 * MikroORM already brings), for tests that inspect or plant schema objects behind the server's back.
 */
import mysql from 'mysql2/promise';

export interface SqlClient {
  query<T = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<T[]>;
  close(): Promise<void>;
}

interface PgClient {
  connect(): Promise<void>;
  query(sql: string, params?: unknown[]): Promise<{ rows: Record<string, unknown>[] }>;
  end(): Promise<void>;
}

/** Opens `url` (`postgres://…` or `mysql://…`). Parameters are `$1` on PostgreSQL, `?` on MariaDB. */
export async function openSql(url: string): Promise<SqlClient> {
  if (url.startsWith('postgres')) {
    // `pg` ships no types here; the module name is not a literal so tsc does not look for them
    const pgName = 'pg';
    const pg = (await import(pgName)) as { default: { Client: new (cfg: { connectionString: string }) => PgClient } };
    const client = new pg.default.Client({ connectionString: url });
    await client.connect();
    return {
      query: async <T>(sql: string, params: unknown[] = []) => (await client.query(sql, params)).rows as T[],
      close: () => client.end(),
    };
  }
  const conn = await mysql.createConnection(url);
  return {
    query: async <T>(sql: string, params: unknown[] = []) => (await conn.query(sql, params))[0] as T[],
    close: () => conn.end(),
  };
}
