/**
 * @module authz/storage/sql/db-port
 * Adapts a platform Database (@gatehouse/db, MikroORM) to the SqlPort the SQL tuple store needs,
 * and declares the store's tables as the authz service's migration.
 */
import type { EntityManager } from '@mikro-orm/core';
import type { Database, DatabaseType, MigrationContext, MigrationDefinition } from '@gatehouse/db';
import { fgaSchemaStatements, isDuplicateColumn, type SqlDialect, type SqlPort } from './store.ts';

/** The SQL dialect family of a database type. */
export function dialectOf(type: DatabaseType): SqlDialect {
  if (type === 'postgres') return 'postgres';
  if (type === 'mysql' || type === 'mariadb') return 'mysql';
  if (type === 'sqlite') return 'sqlite';
  throw new Error(`no SQL dialect for ${type}`);
}

const applyFgaSchema = async (ctx: MigrationContext): Promise<void> => {
  for (const sql of fgaSchemaStatements(dialectOf(ctx.type))) {
    await ctx.execute(sql).catch((err: unknown) => {
      if (!isDuplicateColumn(err)) throw err;
    });
  }
};

/**
 * The authz tables (fga_models, fga_tuples, fga_revision, fga_changes). Every statement is
 * idempotent (CREATE ... IF NOT EXISTS), so 0002 adds the change log replicas catch up from to a
 * database that ran 0001 before it existed, 0003 the tuple condition columns (OpenFGA conditions),
 * 0004 the assertions table (OpenFGA assertions, issue 36) and 0005 the write-time columns of tuples and
 * changes (OpenFGA's `timestamp` of Read and ReadChanges, issue 36), 0006 the replicas' reports that
 * compaction of the change log reads (issue 32 §3), 0007 the tables of the OpenFGA API's other stores
 * (`fga_stores`, `fga_store_*`; issue 36 §1: Gatehouse's store keeps its tables and rows).
 */
export const fgaMigrations: MigrationDefinition[] = [
  { name: '0001_fga_store', up: applyFgaSchema },
  { name: '0002_fga_changes', up: applyFgaSchema },
  { name: '0003_fga_tuple_conditions', up: applyFgaSchema },
  { name: '0004_fga_assertions', up: applyFgaSchema },
  { name: '0005_fga_write_times', up: applyFgaSchema },
  { name: '0006_fga_replicas', up: applyFgaSchema },
  { name: '0007_fga_stores', up: applyFgaSchema },
];

function portOn(em: EntityManager, dialect: SqlDialect, db: Database): SqlPort {
  const conn = em.getConnection() as unknown as { execute(sql: string, params: unknown[], method: 'all', ctx?: unknown): Promise<unknown> };
  return {
    dialect,
    async execute(sql, params = []) {
      // MikroORM takes `?` placeholders on every driver; the store numbers them for PostgreSQL.
      const text = dialect === 'postgres' ? sql.replace(/\$\d+/g, '?') : sql;
      const res = await conn.execute(text, params, 'all', em.getTransactionContext());
      return Array.isArray(res) ? (res as Record<string, unknown>[]) : [];
    },
    transaction: (fn) => db.transactional((tx) => fn(portOn(tx, dialect, db))),
  };
}

/**
 * A SqlPort over the database: each statement on a fresh fork; `transaction` on one connection;
 * `prepare` through the driver's prepared statements (`db.prepare`, the store's revision read).
 */
export function sqlPortOf(db: Database): SqlPort {
  const dialect = dialectOf(db.type);
  const prepare = db.prepare?.bind(db);
  return {
    dialect,
    ...(prepare ? { prepare: (sql: string) => prepare(sql) } : {}),
    execute: (sql, params) => portOn(db.fork(), dialect, db).execute(sql, params),
    transaction: (fn) => db.transactional((em) => fn(portOn(em, dialect, db))),
  };
}
