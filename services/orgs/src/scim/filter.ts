/**
 * @module orgs/scim/filter
 * The SCIM list filter (RFC 7644 §3.4.2.2; behaviour.md §6.4 "List users"): the whole grammar —
 * `eq ne co sw ew gt ge lt le pr`, `and` / `or` / `not`, parentheses and value paths such as
 * `emails[type eq "work" and value co "@x"]` — parsed by `scim2-parse-filter` and compiled to one
 * parameterised SQL condition, so the filter runs in the database, never over the org's rows in memory.
 *
 * What a filter may name is declared by a {@link FilterSchema}: single-valued attributes map to columns
 * of the resource's table, multi-valued complex attributes (`emails`, `phoneNumbers`) to rows of a
 * child table reached with `EXISTS`. Strings compare case-insensitively unless the attribute is
 * `caseExact` (RFC 7643 §2.2: `externalId`, `id`), through lower-cased key columns or `LOWER()`;
 * `co`/`sw`/`ew` are `LIKE` with `!` as the escape character. `meta.created` / `meta.lastModified`
 * compare as instants (the value is an RFC 3339 date-time). Booleans take `eq`, `ne` and `pr` only.
 * An unknown attribute, an operator that does not apply, a value of the wrong type or a bad expression →
 * 400 `invalidFilter`.
 */
import scimFilter from 'scim2-parse-filter';
import { badRequest, type ScimError } from './errors.ts';

/** One filterable attribute: its SQL expression (a column of the alias) and how values compare. */
export interface FilterColumn {
  /** SQL of the value, e.g. `u.user_name_key` */
  sql: string;
  kind: 'string' | 'boolean' | 'instant';
  /** true: compare as sent (RFC 7643 §2.2 caseExact); false: `sql` already holds lower-case values or is wrapped in LOWER() */
  caseExact?: boolean;
  /** the column holds lower-cased text already (no LOWER() needed) */
  lowered?: boolean;
  /** instants are stored as Unix seconds */
}

/** A multi-valued complex attribute kept as child rows. */
export interface FilterMulti {
  /** `EXISTS (select 1 from <from> where <join> and …)`: the child table with its alias, and the join condition */
  from: string;
  join: string;
  /** sub-attribute (lower case) → column; `value` is the default of `emails eq "x"` (RFC 7644 §3.4.2.2) */
  subs: Record<string, FilterColumn>;
  /** extra parameters of `join`, if any */
  joinParams?: unknown[];
}

/** The attributes a resource's filter may name (lower-case paths without the core schema URN). */
export interface FilterSchema {
  attrs: Record<string, FilterColumn>;
  multi: Record<string, FilterMulti>;
}

/** A parameterised SQL condition (`?` placeholders in order). */
export interface SqlCondition {
  sql: string;
  params: unknown[];
}

const MAX_FILTER = 2048;
const MAX_DEPTH = 32;
const URN = /^urn:ietf:params:scim:schemas:core:2\.0:(user|group):/i;

const invalid = (why: string): ScimError => badRequest('invalidFilter', `invalid filter: ${why}`);
const escapeLike = (s: string): string => s.replace(/[!%_]/g, (c) => `!${c}`);

/**
 * Parses `text` and compiles it against `schema`.
 * @throws ScimError 400 `invalidFilter` for a syntax error, an unknown attribute or an operator/value that does not apply
 */
export function compileFilter(text: string, schema: FilterSchema): SqlCondition {
  if (text.length > MAX_FILTER) throw invalid('too long');
  let ast: scimFilter.Filter;
  try {
    ast = scimFilter.parse(text);
  } catch (err) {
    throw invalid((err as Error).message.split('\n')[0] ?? 'syntax error');
  }
  const params: unknown[] = [];
  const sql = node(ast, schema, params, null, 0);
  return { sql, params };
}

/** `multi`: inside a value path, sub-attributes resolve against that attribute's child columns. */
function node(f: scimFilter.Filter, schema: FilterSchema, params: unknown[], multi: { name: string; m: FilterMulti } | null, depth: number): string {
  if (depth > MAX_DEPTH) throw invalid('nested too deeply');
  switch (f.op) {
    case 'and':
    case 'or': {
      const parts = (f as scimFilter.LogExp).filters.map((x) => node(x, schema, params, multi, depth + 1));
      return `(${parts.join(f.op === 'and' ? ' and ' : ' or ')})`;
    }
    case 'not':
      return `(not ${node((f as scimFilter.NotFilter).filter, schema, params, multi, depth + 1)})`;
    case '[]': {
      if (multi) throw invalid('a value path cannot be nested');
      const vp = f as scimFilter.ValuePath;
      const name = vp.attrPath.replace(URN, '').toLowerCase();
      const m = schema.multi[name];
      if (!m) throw invalid(`"${vp.attrPath}" is not a multi-valued attribute this server filters on`);
      if (m.joinParams) params.push(...m.joinParams);
      const inner = node(vp.valFilter, schema, params, { name, m }, depth + 1);
      return `exists (select 1 from ${m.from} where ${m.join} and ${inner})`;
    }
    case 'pr': case 'eq': case 'ne': case 'co': case 'sw': case 'ew': case 'gt': case 'ge': case 'lt': case 'le':
      return term(f as scimFilter.Compare | scimFilter.Suffix, schema, params, multi);
  }
}

/** One `attr op value` or `attr pr`. */
function term(f: scimFilter.Compare | scimFilter.Suffix, schema: FilterSchema, params: unknown[], multi: { name: string; m: FilterMulti } | null): string {
  const path = f.attrPath.replace(URN, '').toLowerCase();
  if (multi) {
    const col = multi.m.subs[path.startsWith(`${multi.name}.`) ? path.slice(multi.name.length + 1) : path];
    if (!col) throw invalid(`"${f.attrPath}" is not a sub-attribute of "${multi.name}"`);
    return compare(f, col, params);
  }
  const direct = schema.attrs[path];
  if (direct) return compare(f, direct, params);
  // `emails.value eq "x"` and `emails eq "x"` (the default sub-attribute `value`): any of the child rows
  const dot = path.indexOf('.');
  const name = dot === -1 ? path : path.slice(0, dot);
  const m = schema.multi[name];
  const col = m?.subs[dot === -1 ? 'value' : path.slice(dot + 1)];
  if (!m || !col) throw invalid(`filtering on "${f.attrPath}" is not supported`);
  if (m.joinParams) params.push(...m.joinParams);
  return `exists (select 1 from ${m.from} where ${m.join} and ${compare(f, col, params)})`;
}

/** The SQL of one comparison on a column. */
function compare(f: scimFilter.Compare | scimFilter.Suffix, col: FilterColumn, params: unknown[]): string {
  const name = f.attrPath;
  if (f.op === 'pr') return col.kind === 'string' ? `(${col.sql} is not null and ${col.sql} <> '')` : `${col.sql} is not null`;
  const value = (f as scimFilter.Compare).compValue;
  const op = f.op;
  if (col.kind === 'boolean') {
    if (op !== 'eq' && op !== 'ne') throw invalid(`"${op}" does not apply to the boolean "${name}"`);
    if (typeof value !== 'boolean') throw invalid(`"${name}" takes true or false`);
    // a literal, not a parameter: better-sqlite3 binds no booleans, and TRUE/FALSE mean the same in SQLite, PostgreSQL and MySQL
    const lit = value ? 'true' : 'false';
    return op === 'eq' ? `${col.sql} = ${lit}` : `(${col.sql} is null or ${col.sql} <> ${lit})`;
  }
  if (col.kind === 'instant') {
    if (op === 'co' || op === 'sw' || op === 'ew') throw invalid(`"${op}" does not apply to the date-time "${name}"`);
    const ms = typeof value === 'string' ? Date.parse(value) : NaN;
    if (!/^\d{4}-\d{2}-\d{2}T/.test(String(value)) || !Number.isFinite(ms)) throw invalid(`"${name}" takes an RFC 3339 date-time`);
    // stored as whole seconds: compare against the second the instant falls in
    const s = Math.floor(ms / 1000);
    params.push(s);
    return `${col.sql} ${SQL_OP[op]} ?`;
  }
  if (typeof value !== 'string') throw invalid(`"${name}" takes a quoted string`);
  const v = col.caseExact ? value : value.toLowerCase();
  const lhs = col.caseExact || col.lowered ? col.sql : `lower(${col.sql})`;
  switch (op) {
    case 'co': params.push(`%${escapeLike(v)}%`); return `${lhs} like ? escape '!'`;
    case 'sw': params.push(`${escapeLike(v)}%`); return `${lhs} like ? escape '!'`;
    case 'ew': params.push(`%${escapeLike(v)}`); return `${lhs} like ? escape '!'`;
    case 'ne': params.push(v); return `(${lhs} is null or ${lhs} <> ?)`;
    case 'eq': case 'gt': case 'ge': case 'lt': case 'le': params.push(v); return `${lhs} ${SQL_OP[op]} ?`;
  }
}

const SQL_OP: Record<string, string> = { eq: '=', gt: '>', ge: '>=', lt: '<', le: '<=' };
