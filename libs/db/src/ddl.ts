/**
 * @module @gatehouse/db/ddl
 * A tiny DDL builder so a service writes each migration once and it runs on SQLite, PostgreSQL,
 * MySQL and MariaDB. Only the column types Gatehouse uses exist; anything else goes through
 * `ctx.execute` with a per-dialect branch on `ctx.type`.
 */
import type { DatabaseType } from './types.ts';

/** Column types and what they become per dialect (see README "Column types"). */
export type ColumnType =
  | 'serial' // auto-increment bigint primary key
  | 'uuid'
  | 'string' // varchar(length ?? 255)
  | 'text' // unbounded text (MySQL longtext)
  | 'json' // JSON document stored as text on SQLite, jsonb/json elsewhere
  | 'int'
  | 'bigint'
  | 'boolean'
  | 'datetime'; // timestamp with time zone (PostgreSQL), datetime(3) (MySQL), ISO text (SQLite)

export interface Column {
  name: string;
  type: ColumnType;
  /** varchar length for `string` (default 255) */
  length?: number;
  /** default false: columns are NOT NULL unless said otherwise */
  nullable?: boolean;
  /** single-column primary key (`serial` is always the primary key) */
  primary?: boolean;
  /** literal default */
  default?: string | number | boolean;
}

export interface IndexOptions {
  unique?: boolean;
}

/** Dialect-correct DDL statements. Every statement is idempotent (IF NOT EXISTS or a catalog check). */
export interface Ddl {
  /** quotes an identifier for this dialect */
  id(name: string): string;
  /** `CREATE TABLE IF NOT EXISTS`; `primaryKey` for composite keys */
  createTable(table: string, columns: Column[], options?: { primaryKey?: string[] }): Promise<void>;
  createIndex(table: string, name: string, columns: string[], options?: IndexOptions): Promise<void>;
  /** adds a column unless it exists */
  addColumn(table: string, column: Column): Promise<void>;
  dropTable(table: string): Promise<void>;
  /** the SQL type for a column type, for hand-written statements */
  sqlType(column: Pick<Column, 'type' | 'length'>): string;
}

type Exec = (sql: string, params?: unknown[]) => Promise<Record<string, unknown>[]>;
type SqlType = Exclude<DatabaseType, 'mongodb'>;

/** Quotes an identifier: "x" (PostgreSQL, SQLite) or `x` (MySQL/MariaDB); embedded quotes are doubled. */
export function quoteIdentifier(type: DatabaseType, name: string): string {
  if (type === 'mysql' || type === 'mariadb') return '`' + name.replaceAll('`', '``') + '`';
  return '"' + name.replaceAll('"', '""') + '"';
}

function sqlType(type: SqlType, c: Pick<Column, 'type' | 'length'>): string {
  const my = type === 'mysql' || type === 'mariadb';
  switch (c.type) {
    case 'serial':
      return type === 'postgres' ? 'bigserial' : my ? 'bigint unsigned' : 'integer';
    case 'uuid':
      return type === 'postgres' ? 'uuid' : my ? 'char(36)' : 'text';
    case 'string':
      return type === 'sqlite' ? 'text' : `varchar(${c.length ?? 255})`;
    case 'text':
      return my ? 'longtext' : 'text';
    case 'json':
      return type === 'postgres' ? 'jsonb' : my ? 'json' : 'text';
    case 'int':
      return type === 'sqlite' ? 'integer' : 'int';
    case 'bigint':
      return type === 'sqlite' ? 'integer' : 'bigint';
    case 'boolean':
      return type === 'postgres' ? 'boolean' : my ? 'tinyint(1)' : 'integer';
    case 'datetime':
      return type === 'postgres' ? 'timestamptz' : my ? 'datetime(3)' : 'datetime';
  }
}

function literal(type: SqlType, v: string | number | boolean): string {
  if (typeof v === 'boolean') return type === 'postgres' ? String(v) : v ? '1' : '0';
  if (typeof v === 'number') return String(v);
  return `'${v.replaceAll("'", "''")}'`;
}

function columnSql(type: SqlType, c: Column, q: (s: string) => string): string {
  const parts = [q(c.name), sqlType(type, c)];
  if (c.type === 'serial') {
    if (type === 'sqlite') parts.push('primary key autoincrement');
    else if (type === 'postgres') parts.push('primary key');
    else parts.push('not null auto_increment primary key');
    return parts.join(' ');
  }
  parts.push(c.nullable ? 'null' : 'not null');
  if (c.default !== undefined) parts.push('default ' + literal(type, c.default));
  if (c.primary) parts.push('primary key');
  return parts.join(' ');
}

/** Builds the DDL helper for one dialect over an executor (the migration's connection). */
export function createDdl(type: DatabaseType, exec: Exec): Ddl {
  if (type === 'mongodb') {
    const no = (): never => {
      throw new Error('SQL DDL is not available on MongoDB');
    };
    return { id: (n) => n, createTable: no, createIndex: no, addColumn: no, dropTable: no, sqlType: no };
  }
  const t: SqlType = type;
  const q = (n: string): string => quoteIdentifier(t, n);
  const my = t === 'mysql' || t === 'mariadb';
  const tableOptions = my ? ' engine=InnoDB default charset=utf8mb4 collate=utf8mb4_bin' : '';

  async function indexExists(table: string, name: string): Promise<boolean> {
    const rows = await exec(
      'select 1 as x from information_schema.statistics where table_schema = database() and table_name = ? and index_name = ?',
      [table, name],
    );
    return rows.length > 0;
  }
  async function columnExists(table: string, column: string): Promise<boolean> {
    if (t === 'sqlite') {
      const rows = await exec(`select name from pragma_table_info(?) where name = ?`, [table, column]);
      return rows.length > 0;
    }
    const schemaExpr = t === 'postgres' ? 'current_schema()' : 'database()';
    const rows = await exec(
      `select 1 as x from information_schema.columns where table_schema = ${schemaExpr} and table_name = ? and column_name = ?`,
      [table, column],
    );
    return rows.length > 0;
  }

  return {
    id: q,
    sqlType: (c) => sqlType(t, c),
    async createTable(table, columns, options = {}) {
      const defs = columns.map((c) => columnSql(t, c, q));
      if (options.primaryKey?.length) defs.push(`primary key (${options.primaryKey.map(q).join(', ')})`);
      await exec(`create table if not exists ${q(table)} (${defs.join(', ')})${tableOptions}`);
    },
    async createIndex(table, name, columns, options = {}) {
      const unique = options.unique ? 'unique ' : '';
      const cols = columns.map(q).join(', ');
      if (my) {
        if (await indexExists(table, name)) return;
        await exec(`create ${unique}index ${q(name)} on ${q(table)} (${cols})`);
        return;
      }
      await exec(`create ${unique}index if not exists ${q(name)} on ${q(table)} (${cols})`);
    },
    async addColumn(table, column) {
      if (await columnExists(table, column.name)) return;
      await exec(`alter table ${q(table)} add column ${columnSql(t, column, q)}`);
    },
    async dropTable(table) {
      await exec(`drop table if exists ${q(table)}`);
    },
  };
}
