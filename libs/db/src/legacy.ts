/**
 * @module @gatehouse/db/legacy
 * Spec §9: a database created by 1.x may carry UNIQUE constraints or unique indexes on email and
 * phone_number under arbitrary names; uniqueness now lives in the application, so current builds
 * drop them at startup under their real names, found through each database's catalog.
 */
import type { Logger } from '@gatehouse/observability';
import { AppError } from '@gatehouse/errors';
import { quoteIdentifier } from './ddl.ts';
import { rebuildSqliteTableWithoutUnique } from './legacy-sqlite.ts';
import type { Database } from './types.ts';

/**
 * Drops every UNIQUE constraint and unique index whose only column is one of `columns` on `table`
 * (never the primary key, never a multi-column one). PostgreSQL: constraints (`pg_constraint`)
 * with `ALTER TABLE … DROP CONSTRAINT`, then remaining unique indexes (`pg_index`) with
 * `DROP INDEX`. MySQL/MariaDB: `information_schema.STATISTICS` `NON_UNIQUE = 0`, `DROP INDEX`.
 * SQLite: `pragma index_list/index_info`; `CREATE UNIQUE INDEX` ones are dropped, inline UNIQUE
 * constraints (`sqlite_autoindex_*`) are removed by rebuilding the table. Logs each drop at info.
 * Returns the names dropped; a missing table is not an error (returns []).
 * @throws AppError `unimplemented` on MongoDB.
 */
export async function dropLegacyUniqueIndexes(db: Database, table: string, columns: string[], logger: Logger): Promise<string[]> {
  const dropped: string[] = [];
  const q = (n: string): string => quoteIdentifier(db.type, n);
  const log = (kind: string, name: string, column: string): void => {
    dropped.push(name);
    logger.info({ table, column, [kind]: name }, `dropped legacy unique ${kind} ${name} on ${table}.${column}`);
  };
  switch (db.type) {
    case 'postgres': {
      for (const column of columns) {
        const cons = await db.execute<{ name: string; schema: string }>(
          `select c.conname as name, n.nspname as schema from pg_constraint c
             join pg_class t on t.oid = c.conrelid join pg_namespace n on n.oid = t.relnamespace
             join pg_attribute a on a.attrelid = t.oid and a.attname = ?
           where t.relname = ? and n.nspname = current_schema() and c.contype = 'u'
             and array_length(c.conkey, 1) = 1 and c.conkey[1] = a.attnum`,
          [column, table],
        );
        for (const c of cons) {
          await db.execute(`alter table ${q(c.schema)}.${q(table)} drop constraint ${q(c.name)}`);
          log('constraint', c.name, column);
        }
        const idx = await db.execute<{ name: string; schema: string }>(
          `select i.relname as name, n.nspname as schema from pg_index x
             join pg_class i on i.oid = x.indexrelid join pg_class t on t.oid = x.indrelid
             join pg_namespace n on n.oid = t.relnamespace
             join pg_attribute a on a.attrelid = t.oid and a.attname = ?
           where t.relname = ? and n.nspname = current_schema() and x.indisunique and not x.indisprimary
             and x.indnatts = 1 and x.indkey[0] = a.attnum`,
          [column, table],
        );
        for (const i of idx) {
          await db.execute(`drop index ${q(i.schema)}.${q(i.name)}`);
          log('index', i.name, column);
        }
      }
      return dropped;
    }
    case 'mysql':
    case 'mariadb': {
      for (const column of columns) {
        const idx = await db.execute<{ name: string }>(
          `select index_name as name from information_schema.statistics
           where table_schema = database() and table_name = ? and non_unique = 0 and index_name <> 'PRIMARY'
           group by index_name having count(*) = 1 and max(column_name) = ?`,
          [table, column],
        );
        for (const i of idx) {
          await db.execute(`alter table ${q(table)} drop index ${q(i.name)}`);
          log('index', i.name, column);
        }
      }
      return dropped;
    }
    case 'sqlite': {
      const list = await db.execute<{ name: string; unique: number; origin: string }>(`select * from pragma_index_list(?)`, [table]);
      const inline: { name: string; column: string }[] = [];
      for (const ix of list) {
        if (Number(ix.unique) !== 1 || ix.origin === 'pk') continue;
        const cols = await db.execute<{ name: string | null }>(`select name from pragma_index_info(?)`, [ix.name]);
        const column = cols[0]?.name;
        if (cols.length !== 1 || !column || !columns.includes(column)) continue;
        if (ix.origin === 'c') {
          await db.execute(`drop index ${q(ix.name)}`);
          log('index', ix.name, column);
        } else {
          inline.push({ name: ix.name, column });
        }
      }
      if (inline.length) {
        await rebuildSqliteTableWithoutUnique(db, table, inline.map((i) => i.column));
        for (const i of inline) log('constraint', i.name, i.column);
      }
      return dropped;
    }
    case 'mongodb':
      throw new AppError('unimplemented', 'legacy unique index cleanup applies to SQL databases only');
  }
}
