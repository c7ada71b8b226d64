/**
 * @module @gatehouse/db/legacy-sqlite
 * SQLite cannot drop an inline UNIQUE constraint (its `sqlite_autoindex_*` index): the table is
 * rebuilt without it, following SQLite's documented 12-step ALTER TABLE procedure
 * (https://sqlite.org/lang_altertable.html#otheralter).
 */
import { AppError } from '@gatehouse/errors';
import { execOn } from './migrate.ts';
import type { Database } from './types.ts';

const IDENT = String.raw`(?:"(?:[^"]|"")*"|\x60(?:[^\x60]|\x60\x60)*\x60|\[[^\]]*\]|[A-Za-z_][A-Za-z0-9_$]*)`;

/** Removes quoting from one SQLite identifier token. */
export function unquote(id: string): string {
  const t = id.trim();
  if (t.startsWith('"')) return t.slice(1, -1).replaceAll('""', '"');
  if (t.startsWith('`')) return t.slice(1, -1).replaceAll('``', '`');
  if (t.startsWith('[')) return t.slice(1, -1);
  return t;
}

/** Splits the body of a CREATE TABLE at top-level commas (outside parentheses and quotes). */
export function splitTopLevel(body: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let quote: string | null = null;
  let start = 0;
  for (let i = 0; i < body.length; i++) {
    const ch = body[i]!;
    if (quote) {
      if (ch === quote) quote = null;
      continue;
    }
    if (ch === "'" || ch === '"' || ch === '`') quote = ch;
    else if (ch === '[') quote = ']';
    else if (ch === '(') depth++;
    else if (ch === ')') depth--;
    else if (ch === ',' && depth === 0) {
      parts.push(body.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(body.slice(start));
  return parts;
}

/**
 * Rewrites a CREATE TABLE statement without the single-column UNIQUE constraints on `columns`
 * (inline `col TEXT UNIQUE`, `CONSTRAINT x UNIQUE`, and table-level `UNIQUE (col)`).
 */
export function stripUniqueFromCreateTable(sql: string, columns: string[]): { head: string; body: string; tail: string } {
  const open = sql.indexOf('(');
  const close = sql.lastIndexOf(')');
  if (open < 0 || close < open) throw new AppError('internal', 'unexpected CREATE TABLE statement');
  const kept: string[] = [];
  const tableUnique = new RegExp(String.raw`^\s*(?:constraint\s+${IDENT}\s+)?unique\s*\(\s*(${IDENT})\s*\)`, 'i');
  const inlineUnique = new RegExp(String.raw`\s+(?:constraint\s+${IDENT}\s+)?unique(?:\s+on\s+conflict\s+\w+)?(?=\s|$)`, 'ig');
  for (const part of splitTopLevel(sql.slice(open + 1, close))) {
    const t = tableUnique.exec(part);
    if (t && columns.includes(unquote(t[1]!))) continue;
    const first = new RegExp(String.raw`^\s*(${IDENT})`).exec(part);
    const isConstraint = /^\s*(constraint|primary|unique|check|foreign)\b/i.test(part);
    if (!isConstraint && first && columns.includes(unquote(first[1]!))) {
      kept.push(part.replace(inlineUnique, ''));
    } else kept.push(part);
  }
  return { head: sql.slice(0, open), body: kept.join(','), tail: sql.slice(close + 1) };
}

/** Rebuilds `table` without single-column UNIQUE constraints on `columns`, keeping rows, indexes and triggers. */
export async function rebuildSqliteTableWithoutUnique(db: Database, table: string, columns: string[]): Promise<void> {
  const [master] = await db.execute<{ sql: string }>(`select sql from sqlite_master where type = 'table' and name = ?`, [table]);
  if (!master) return;
  const { body, tail } = stripUniqueFromCreateTable(master.sql, columns);
  const tmp = `${table}__gatehouse_rebuild`;
  const q = (n: string): string => '"' + n.replaceAll('"', '""') + '"';
  const others = await db.execute<{ sql: string }>(
    `select sql from sqlite_master where tbl_name = ? and type in ('index', 'trigger') and sql is not null`,
    [table],
  );
  await db.execute('pragma foreign_keys = off');
  try {
    await db.transactional(async (em) => {
      const exec = execOn(em);
      await exec(`create table ${q(tmp)} (${body})${tail}`);
      await exec(`insert into ${q(tmp)} select * from ${q(table)}`);
      await exec(`drop table ${q(table)}`);
      await exec(`alter table ${q(tmp)} rename to ${q(table)}`);
      for (const o of others) await exec(o.sql);
      const bad = await exec('pragma foreign_key_check');
      if (bad.length) throw new AppError('failed_precondition', `foreign key check failed after rebuilding ${table}`);
    });
  } finally {
    await db.execute('pragma foreign_keys = on');
  }
}
