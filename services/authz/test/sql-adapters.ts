/** @module sql-adapters: SqlPort adapters for tests and benchmarks: better-sqlite3, pg and mysql2, each on a fresh database. */
import { createRequire } from 'node:module';
import { randomBytes } from 'node:crypto';
import type { SqlPort } from '../src/storage/sql/store.ts';
import { fgaSchemaStatements, isDuplicateColumn } from '../src/storage/sql/store.ts';

const require = createRequire(import.meta.url);

interface SqliteStatement {
  reader: boolean;
  all(...params: unknown[]): Record<string, unknown>[];
  run(...params: unknown[]): unknown;
}
interface SqliteDb {
  prepare(sql: string): SqliteStatement;
  exec(sql: string): void;
  close(): void;
}

/** A test database: its port and a `close` that drops it. */
export interface TestDatabase {
  port: SqlPort;
  close(): Promise<void>;
}

/** Serialises async work on one connection (a transaction holds the lock until it ends). */
function mutex(): <T>(fn: () => Promise<T>) => Promise<T> {
  let tail: Promise<unknown> = Promise.resolve();
  return (fn) => {
    const run = tail.then(fn, fn);
    tail = run.catch(() => undefined);
    return run;
  };
}

async function applySchema(port: SqlPort): Promise<void> {
  for (const s of fgaSchemaStatements(port.dialect)) {
    await port.execute(s).catch((err: unknown) => {
      if (!isDuplicateColumn(err)) throw err;
    });
  }
}

/**
 * A SQLite database (better-sqlite3) with the schema applied: in memory by default, or in `file`
 * (a new or empty file; the scale bench keeps 10M tuples out of the process's RSS that way).
 */
export async function openSqlite(file = ':memory:'): Promise<TestDatabase> {
  const Database = require('better-sqlite3') as new (file: string) => SqliteDb;
  const db = new Database(file);
  // a throwaway file: no fsync per commit (the scale bench's 10M-tuple fill is commit-bound otherwise)
  if (file !== ':memory:') db.exec('PRAGMA journal_mode = WAL; PRAGMA synchronous = OFF');
  const cache = new Map<string, SqliteStatement>();
  const run = (sql: string, params: unknown[] = []): Record<string, unknown>[] => {
    let stmt = cache.get(sql);
    if (!stmt) cache.set(sql, (stmt = db.prepare(sql)));
    if (stmt.reader) return stmt.all(...params);
    stmt.run(...params);
    return [];
  };
  const lock = mutex();
  const inner: SqlPort = { dialect: 'sqlite', execute: async (sql, params) => run(sql, params), transaction: (fn) => fn(inner) };
  const port: SqlPort = {
    dialect: 'sqlite',
    execute: (sql, params) => lock(async () => run(sql, params)),
    transaction: (fn) =>
      lock(async () => {
        db.exec('BEGIN IMMEDIATE');
        try {
          const out = await fn(inner);
          db.exec('COMMIT');
          return out;
        } catch (err) {
          db.exec('ROLLBACK');
          throw err;
        }
      }),
  };
  await applySchema(port);
  return { port, close: async () => db.close() };
}

interface PgClient {
  query(sql: string, params?: unknown[]): Promise<{ rows: Record<string, unknown>[] }>;
  release(): void;
}
interface PgPool {
  query(sql: string, params?: unknown[]): Promise<{ rows: Record<string, unknown>[] }>;
  connect(): Promise<PgClient>;
  end(): Promise<void>;
  on(event: 'error', listener: (err: Error) => void): void;
}

/** A fresh PostgreSQL database on 127.0.0.1:5432 (user postgres, trust), dropped by `close`. */
export async function openPostgres(): Promise<TestDatabase> {
  const pg = require('pg') as { Pool: new (cfg: Record<string, unknown>) => PgPool };
  const name = `gh_authz_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Pool({ host: '127.0.0.1', port: 5432, user: 'postgres', database: 'postgres', max: 1 });
  await admin.query(`CREATE DATABASE ${name}`);
  const pool = new pg.Pool({ host: '127.0.0.1', port: 5432, user: 'postgres', database: name, max: 8 });
  // DROP DATABASE ... WITH (FORCE) ends idle backends; their pool clients report it as an error event.
  pool.on('error', () => undefined);
  const port: SqlPort = {
    dialect: 'postgres',
    execute: async (sql, params) => (await pool.query(sql, params)).rows,
    transaction: async (fn) => {
      const client = await pool.connect();
      const tx: SqlPort = { dialect: 'postgres', execute: async (sql, params) => (await client.query(sql, params)).rows, transaction: (f) => f(tx) };
      try {
        await client.query('BEGIN');
        const out = await fn(tx);
        await client.query('COMMIT');
        return out;
      } catch (err) {
        await client.query('ROLLBACK');
        throw err;
      } finally {
        client.release();
      }
    },
  };
  await applySchema(port);
  return {
    port,
    close: async () => {
      await pool.end();
      await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await admin.end();
    },
  };
}

interface MyConn {
  query(sql: string, params?: unknown[]): Promise<[unknown, unknown]>;
  beginTransaction(): Promise<void>;
  commit(): Promise<void>;
  rollback(): Promise<void>;
  release(): void;
}
interface MyPool {
  query(sql: string, params?: unknown[]): Promise<[unknown, unknown]>;
  getConnection(): Promise<MyConn>;
  end(): Promise<void>;
}

const rowsOf = (result: [unknown, unknown]): Record<string, unknown>[] =>
  Array.isArray(result[0]) ? (result[0] as Record<string, unknown>[]) : [];

/** A fresh MariaDB/MySQL database on 127.0.0.1:3306 (root, no password), dropped by `close`. */
export async function openMysql(): Promise<TestDatabase> {
  const mysql = require('mysql2/promise') as { createPool(cfg: Record<string, unknown>): MyPool };
  const name = `gh_authz_${randomBytes(6).toString('hex')}`;
  const admin = mysql.createPool({ host: '127.0.0.1', port: 3306, user: 'root', password: '', connectionLimit: 1 });
  await admin.query(`CREATE DATABASE ${name} CHARACTER SET utf8mb4 COLLATE utf8mb4_bin`);
  const pool = mysql.createPool({ host: '127.0.0.1', port: 3306, user: 'root', password: '', database: name, connectionLimit: 8 });
  const port: SqlPort = {
    dialect: 'mysql',
    execute: async (sql, params) => rowsOf(await pool.query(sql, params)),
    transaction: async (fn) => {
      const conn = await pool.getConnection();
      const tx: SqlPort = { dialect: 'mysql', execute: async (sql, params) => rowsOf(await conn.query(sql, params)), transaction: (f) => f(tx) };
      try {
        await conn.beginTransaction();
        const out = await fn(tx);
        await conn.commit();
        return out;
      } catch (err) {
        await conn.rollback();
        throw err;
      } finally {
        conn.release();
      }
    },
  };
  await applySchema(port);
  return {
    port,
    close: async () => {
      await pool.end();
      await admin.query(`DROP DATABASE IF EXISTS ${name}`);
      await admin.end();
    },
  };
}
