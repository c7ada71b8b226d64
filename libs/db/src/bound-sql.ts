/**
 * @module @gatehouse/db/bound-sql
 * Values reach the database as bound parameters, never inside SQL text (issue 30 §5).
 *
 * Why: MikroORM 7's `AbstractSqlConnection.execute` replaces every `?` with the value quoted by the
 * platform (`Platform.formatQuery`) and hands the driver one SQL string without parameters, so a
 * user's email, a tuple's object or a NUL byte became part of the statement text. And mysql2's
 * `query(sql, values)`, which Kysely's MySQL dialect calls, quotes the values into the text on the
 * client as well; only `execute` sends them apart (COM_STMT_PREPARE / COM_STMT_EXECUTE, MySQL
 * client/server protocol "Prepared Statements"). The drivers built here keep MikroORM's statement
 * building and give each driver the statement with placeholders and the values beside it:
 * better-sqlite3 binds `?`, pg sends `$n` with the values in a Bind message (PostgreSQL protocol
 * §55.2.3 "Extended Query"), mysql2 runs statements with values through `execute`.
 */
import { CompiledQuery, MysqlDialect } from 'kysely';
import type { Dialect } from 'kysely';
import { isRaw, JsonProperty, Utils } from '@mikro-orm/core';
import type { Configuration } from '@mikro-orm/core';
import { createRequire } from 'node:module';
import type { DatabaseType } from './types.ts';
import type * as Mysql2 from 'mysql2';

/**
 * mysql2, loaded on the first MySQL/MariaDB connection: a process on PostgreSQL or SQLite never needs it,
 * and loading it cost ≈ 2% of the CPU before `/healthz` (issue 38 §5). Synchronous (CommonJS) because
 * MikroORM asks for the Kysely dialect synchronously.
 */
const mysql2 = (): typeof Mysql2 => createRequire(import.meta.url)('mysql2') as typeof Mysql2;

/** Prepared statements mysql2 keeps per pooled connection (LRU, closed on eviction); the server's `max_prepared_stmt_count` (16382 by default) is shared by every connection. */
export const MYSQL_PREPARED_PER_CONNECTION = 128;

/** A statement as a driver takes it: the text with placeholders, and the values in placeholder order. */
export interface BoundStatement {
  sql: string;
  parameters: unknown[];
}

/** What {@link bindStatement} needs of a MikroORM platform. */
interface PlatformQuoting {
  quoteIdentifier(id: string): string;
  escape(value: unknown): string;
  formatDate?(date: Date): string;
}

/**
 * MikroORM's `?`-placeholder statement (`??` an identifier, `\?` a literal `?`, as
 * `Platform.formatQuery` reads it) as text with driver placeholders (`$n` on PostgreSQL, `?`
 * otherwise) and the values bound to them, converted as `formatQuery` would have quoted them: an
 * array is a list of placeholders, a plain object or a JSON property is its JSON text, a `raw()`
 * fragment is SQL (its own values bound in turn), a Date is epoch ms on SQLite and the platform's
 * date text elsewhere, booleans are 1/0 on SQLite, bigints text on PostgreSQL and MySQL.
 * Identifiers (`??`) are the only thing quoted into the text.
 */
export function bindStatement(type: DatabaseType, platform: PlatformQuoting, sql: string, params: readonly unknown[]): BoundStatement {
  const parameters: unknown[] = [];
  const placeholder = (): string => (type === 'postgres' ? `$${parameters.length}` : '?');
  const value = (v: unknown): string => {
    if (isRaw(v)) return expand(v.sql, v.params);
    if (Utils.isPlainObject(v) || (v !== null && typeof v === 'object' && (v as Record<symbol, unknown>)[JsonProperty] === true)) {
      parameters.push(JSON.stringify(v));
      return placeholder();
    }
    if (Array.isArray(v)) return v.map((e) => (Array.isArray(e) && (type === 'mysql' || type === 'mariadb') ? `(${value(e)})` : value(e))).join(', ');
    parameters.push(bindable(type, platform, v));
    return placeholder();
  };
  const expand = (text: string, values: readonly unknown[]): string => {
    let out = '';
    let j = 0;
    for (let i = 0; i < text.length; i++) {
      const c = text[i];
      if (c === '\\' && text[i + 1] === '?') {
        out += '?';
        i++;
      } else if (c === '?' && text[i + 1] === '?') {
        out += platform.quoteIdentifier(String(values[j++]));
        i++;
      } else if (c === '?') {
        out += value(values[j++]);
      } else {
        out += c;
      }
    }
    return out;
  };
  return { sql: expand(sql, params), parameters };
}

/** One scalar as the driver of `type` binds it. */
function bindable(type: DatabaseType, platform: PlatformQuoting, v: unknown): unknown {
  if (v === null || v === undefined) return null;
  if (typeof v === 'string' || typeof v === 'number') return v;
  if (typeof v === 'boolean') return type === 'sqlite' ? (v ? 1 : 0) : v;
  if (typeof v === 'bigint') return type === 'sqlite' ? v : v.toString();
  if (v instanceof Date) {
    if (type === 'sqlite') return v.getTime();
    if (type === 'postgres' && platform.formatDate) return platform.formatDate(v);
    // mysql: the platform's `'YYYY-MM-DD HH:MM:SS.mmm'` in its timezone, without the quotes
    return platform.escape(v).slice(1, -1);
  }
  if (Buffer.isBuffer(v)) return v;
  if (ArrayBuffer.isView(v)) return Buffer.from(v.buffer, v.byteOffset, v.byteLength);
  return String(v as string);
}

/** The MikroORM SQL connection members the bound `execute` uses (protected or untyped in its typings). */
interface SqlConnection {
  execute(query: unknown, params?: unknown[], method?: 'all' | 'get' | 'run', ctx?: unknown, loggerContext?: unknown): Promise<unknown>;
  stream(query: unknown, params?: unknown[], ctx?: unknown, loggerContext?: unknown, chunkSize?: number): AsyncIterableIterator<unknown>;
  logQuery(sql: string, context?: unknown): void;
  ensureConnection(): Promise<void>;
  prepareQuery(query: unknown, params?: unknown[]): { query: string; params: unknown[]; formatted: string };
  getSql(query: string, formatted: string, loggerContext?: unknown): string;
  executeQuery<T>(sql: string, cb: () => Promise<T>, context?: unknown): Promise<T>;
  transformRawResult(res: unknown, method: 'all' | 'get' | 'run'): unknown;
  getClient(): { executeQuery(q: CompiledQuery, abort?: unknown): Promise<unknown> };
  createKyselyDialect(overrides: unknown): Dialect | Promise<Dialect>;
  mapOptions(overrides: unknown): Record<string, unknown>;
  getNativeClient(): Promise<unknown>;
  options: { onCreateConnection?: unknown; onReserveConnection?: unknown };
  config: Configuration;
  platform: PlatformQuoting;
}

/** MikroORM carries a query's abort options in its logger context (AbstractSqlConnection): they are taken out of what is logged. */
function splitAbort(loggerContext: unknown): { abort?: { signal?: AbortSignal; inflightQueryAbortStrategy?: unknown }; logged: Record<string, unknown> } {
  const { signal, inflightQueryAbortStrategy, ...logged } = (loggerContext ?? {}) as { signal?: AbortSignal; inflightQueryAbortStrategy?: unknown };
  return signal == null && inflightQueryAbortStrategy == null ? { logged } : { abort: { signal, inflightQueryAbortStrategy }, logged };
}

/**
 * Makes `conn.execute` and `conn.stream` bind their values (see the module comment); on MySQL/MariaDB
 * its pool also runs every statement that has values through mysql2's `execute`. The pool is made as
 * MikroORM's MySqlConnection makes it (its options, control connection and hooks), for a fixed
 * password (Gatehouse passes no password function).
 */
function bindConnection(conn: SqlConnection, type: DatabaseType): void {
  conn.execute = async function execute(this: SqlConnection, query, params = [], method = 'all', ctx, loggerContext) {
    await this.ensureConnection();
    const q = this.prepareQuery(query, params);
    const sql = this.getSql(q.query, q.formatted, loggerContext);
    const { abort, logged } = splitAbort(loggerContext);
    return this.executeQuery(sql, async () => {
      const bound = bindStatement(type, this.platform, q.query, q.params);
      const on = (ctx ?? this.getClient()) as ReturnType<SqlConnection['getClient']>;
      return this.transformRawResult(await on.executeQuery(CompiledQuery.raw(bound.sql, bound.parameters), abort), method);
    }, { ...q, ...logged });
  };
  conn.stream = async function* stream(this: SqlConnection, query, params = [], ctx, loggerContext, chunkSize) {
    await this.ensureConnection();
    const q = this.prepareQuery(query, params);
    const sql = this.getSql(q.query, q.formatted, loggerContext);
    const { abort, logged } = splitAbort(loggerContext);
    const bound = bindStatement(type, this.platform, q.query, q.params);
    // a select node, as MikroORM builds it, so Kysely's SQLite driver streams any statement
    const compiled = { query: { kind: 'SelectQueryNode' }, sql: bound.sql, parameters: bound.parameters } as unknown as CompiledQuery;
    const on = (ctx ?? this.getClient()) as { getExecutor(): { stream(q: CompiledQuery, chunk: number, o?: { signal: AbortSignal }): AsyncIterable<{ rows: unknown[] }> } };
    try {
      const res = on.getExecutor().stream(compiled, chunkSize ?? 100, abort?.signal ? { signal: abort.signal } : undefined);
      this.logQuery(sql, { sql, params: q.params, ...logged });
      for await (const items of res) yield* this.transformRawResult(items, 'all') as unknown[];
    } catch (e) {
      this.logQuery(sql, { sql, params: q.params, ...logged, level: 'error' });
      throw e;
    }
  };
  if (type !== 'mysql' && type !== 'mariadb') return;
  let native: unknown;
  conn.createKyselyDialect = function createKyselyDialect(this: SqlConnection, overrides) {
    const { createPool, createConnection } = mysql2();
    const pool = createPool({ maxPreparedStatements: MYSQL_PREPARED_PER_CONNECTION, ...this.mapOptions(overrides) } as never);
    native = pool;
    return new MysqlDialect({
      pool: {
        getConnection(cb) {
          pool.getConnection((err, c) => {
            if (c) executeWithValues(c as unknown as MysqlRawConnection);
            cb(err, c as never);
          });
        },
        end(cb) {
          pool.end(cb);
        },
      },
      controlConnection: createConnection as never,
      onCreateConnection: (this.options.onCreateConnection ?? this.config.get('onCreateConnection')) as never,
      onReserveConnection: (this.options.onReserveConnection ?? this.config.get('onReserveConnection')) as never,
    });
  };
  conn.getNativeClient = async function getNativeClient(this: SqlConnection) {
    await this.ensureConnection();
    return native;
  };
}

type Callback = (err: Error | null, result?: unknown, fields?: unknown) => void;
const BOUND = Symbol('gatehouse.bound');
interface MysqlRawConnection {
  query(sql: string, values: unknown, cb: Callback): unknown;
  execute(sql: string, values: unknown, cb: Callback): unknown;
  [BOUND]?: true;
}

/** Routes `query(sql, values, cb)` with values to `execute` (values sent apart from the text), once per connection. */
function executeWithValues(c: MysqlRawConnection): void {
  if (c[BOUND]) return;
  c[BOUND] = true;
  const query = c.query.bind(c);
  c.query = (sql, values, cb) => (Array.isArray(values) && values.length > 0 ? c.execute(sql, values, cb) : query(sql, values, cb));
}

/** A MikroORM driver class, as `Options.driver` takes it. */
type DriverClass = new (config: Configuration) => object;

/**
 * `Driver` whose connections (the primary and any read replica) bind values instead of quoting them
 * into the SQL text (issue 30 §5). Statement building, result mapping and logging are MikroORM's.
 */
export function boundDriver<T extends DriverClass>(Driver: T, type: Exclude<DatabaseType, 'mongodb'>): T {
  const known = bound.get(Driver);
  if (known) return known as T;
  const Base: DriverClass = Driver;
  const made = class extends Base {
    constructor(config: Configuration) {
      super(config);
      const self = this as unknown as { connection: SqlConnection; replicas: SqlConnection[] };
      for (const c of [self.connection, ...self.replicas]) bindConnection(c, type);
    }
  };
  bound.set(Driver, made);
  return made as unknown as T;
}
const bound = new WeakMap<DriverClass, DriverClass>();
