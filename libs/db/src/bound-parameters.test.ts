/**
 * No value is placed into SQL text (issue 30 §5): every storage call passes its values as bound
 * parameters (`?` / `$n`), and SQL text is built only from identifiers, placeholders and integers
 * computed in code. This test parses every non-test source file of the services, libs and gateway
 * with the TypeScript compiler and fails on
 * - a template literal that reads as SQL and interpolates anything outside {@link REVIEWED} (an
 *   expression that yields an identifier, a placeholder list or a code-side integer);
 * - a string concatenation (`+`) of a SQL-looking string literal with a non-literal operand;
 * - MikroORM's `raw(...)` / `sql\`...\`` given an interpolated template (values belong in its params).
 * A new interpolation is refused until it is shown to be an identifier and added here with its reason.
 */
import { describe, expect, it } from '@jest/globals';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

/** Statement keywords at the start of SQL text. */
const SQL = /^\s*(select|insert|update|delete|alter|create|drop|with|pragma|listen|notify|truncate|replace)\s/i;
/** Calls whose first argument is SQL text (drivers, MikroORM's connection, the stores' own helpers). */
const SQL_CALL = /(^|\.)(execute|query|prepare|exec|run|raw|adminExec|q)$/;

/**
 * Interpolations reviewed as not carrying a request value, with why. Matched against the whole
 * expression text (whitespace collapsed).
 */
const REVIEWED: ReadonlyArray<[RegExp, string]> = [
  [/^q\([^)]*\)$/, 'a quoted identifier (the dialect quoting helper)'],
  [/^(table|tmp|column|key|cols|COLS|PAGE_COLS|cond|where|name|schemaExpr|tableOptions|opts|ifNot|text|body|tail|values)$/, 'an identifier, a column list, a condition of placeholders or a DDL fragment built in code from constants'],
  [/^where\.join\('(?: AND |, )'\)$/, 'conditions of `column = ?` placeholders'],
  [/^defs\.join\(', '\)$/, 'column definitions from the entity metadata'],
  [/^[a-z]+\.map\(\(\) => '[?(), ]+'\)\.join\(', '\)$/, 'a list of placeholders'],
  [/^selectColumns\(.*\)$/, 'the entity column list from the ORM metadata'],
  [/^columnSql\(.*\)$/, 'a column definition from the entity metadata'],
  [/^channelOf\(t\)$/, 'a NOTIFY channel name built from a constant topic'],
  [/^db\.outbox\.table$/, 'the outbox table name'],
  [/^[\w.]+ === '\w+' \? '[^']*' : '[^']*'$/, 'one of two SQL fragments chosen by a flag of the code'],
  [/^(seq|unique)$/, 'a DDL keyword chosen in code (a column type, UNIQUE or nothing)'],
  [/^(limit|limit \+ 1|batchSize)$/, 'an integer computed and clamped in code'],
  [/^Math\.floor\(page\.(limit|offset)\)$/, 'a page size or offset, integers clamped by the SCIM request parser'],
  [/^BATCH$/, 'a constant batch size'],
  [/^cols\.map\(q\)\.join\(', '\)$/, 'a list of quoted identifiers'],
  [/^options\.outboxTable!?$/, "the outbox table name given by the service's wiring"],
  [/^base$/, 'a FROM/WHERE fragment built in code whose filter values are placeholders (the SCIM filter compiler)'],
  [/^S\.(tuples|models|changes|assertions|w|c|v|conflict)$/, "a table name or `store_id` fragment of the authz SQL store's scope (constants; the store id itself is a parameter)"],
  [/^S\.w \? ' WHERE store_id = \?' : ''$/, 'a constant condition of one placeholder, or nothing'],
  [/^all$/, 'a constant condition of one placeholder, or nothing'],
  [/^serial\('\w+'\)$/, 'the auto-increment primary key column definition of the dialect'],
  [/^inline\(\w+Idx\)$/, 'index definitions built in code from constants (inline KEYs on MySQL)'],
  [/^(bump|sid|outbox)$/, "the authz PostgreSQL write-only statement's parts (writeOnlySql): one of two constant revision UPDATEs, a `$9, ` store-id placeholder or nothing, the outbox CTE of the wiring's table name and placeholder numbers"],
  [/^ddl\.id\('\w+'\)$/, 'a constant identifier quoted by the dialect helper'],
];

/** Every `.ts` source file under `dir` that is not a test, a suite or generated code. */
function sources(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir)) {
    const p = path.join(dir, entry);
    if (entry === 'node_modules' || entry === 'gen' || entry === 'dist') continue;
    if (statSync(p).isDirectory()) out.push(...sources(p));
    else if (entry.endsWith('.ts') && !/\.(test|suite|d)\.ts$|suite\.ts$/.test(entry)) out.push(p);
  }
  return out;
}

const roots = (): string[] => [
  ...readdirSync(path.join(ROOT, 'services')).map((s) => path.join(ROOT, 'services', s, 'src')),
  ...readdirSync(path.join(ROOT, 'libs')).map((l) => path.join(ROOT, 'libs', l, 'src')),
  path.join(ROOT, 'gateway', 'src'),
].filter((d) => { try { return statSync(d).isDirectory(); } catch { return false; } });

const squash = (s: string): string => s.replace(/\s+/g, ' ').trim();
const isLiteral = (n: ts.Node): boolean => ts.isStringLiteral(n) || ts.isNoSubstitutionTemplateLiteral(n) || ts.isNumericLiteral(n);

/** What this test refuses in one file: `file:line: reason`. */
function sqlFromValues(file: string, source: string): string[] {
  const sf = ts.createSourceFile(file, source, ts.ScriptTarget.ES2022, true, ts.ScriptKind.TS);
  const found: string[] = [];
  const at = (n: ts.Node): string => `${path.relative(ROOT, file)}:${sf.getLineAndCharacterOfPosition(n.getStart(sf)).line + 1}`;
  const visit = (n: ts.Node): void => {
    if (ts.isTemplateExpression(n)) {
      const text = [n.head.text, ...n.templateSpans.map((s) => s.literal.text)].join(' ');
      const tagged = ts.isTaggedTemplateExpression(n.parent) && /^(sql|raw)$/.test(n.parent.tag.getText(sf));
      const rawCall = ts.isCallExpression(n.parent) && /(^|\.)raw$/.test(n.parent.expression.getText(sf)) && n.parent.arguments[0] === n;
      if (tagged || rawCall) found.push(`${at(n)}: an interpolated template given to ${tagged ? 'a sql tag' : 'raw()'}`);
      else if (SQL.test(n.head.text) || (ts.isCallExpression(n.parent) && n.parent.arguments[0] === n && SQL_CALL.test(n.parent.expression.getText(sf)) && SQL.test(text))) {
        for (const span of n.templateSpans) {
          const expr = squash(span.expression.getText(sf));
          if (!REVIEWED.some(([re]) => re.test(expr))) found.push(`${at(span)}: \${${expr}} in SQL text`);
        }
      }
    }
    if (ts.isBinaryExpression(n) && n.operatorToken.kind === ts.SyntaxKind.PlusToken) {
      const sides = [n.left, n.right];
      const sqlLiteral = sides.some((s) => (ts.isStringLiteral(s) || ts.isNoSubstitutionTemplateLiteral(s)) && /^\s*(select|insert|update|delete)\b|\b(where|values)\b/i.test(s.text));
      if (sqlLiteral && sides.some((s) => !isLiteral(s) && !ts.isTemplateExpression(s) && !ts.isBinaryExpression(s))) {
        found.push(`${at(n)}: SQL concatenated with ${squash(sides.find((s) => !isLiteral(s))!.getText(sf))}`);
      }
    }
    ts.forEachChild(n, visit);
  };
  visit(sf);
  return found;
}

describe('no value is placed into SQL text (issue 30 §5)', () => {
  it('finds string-built SQL: an interpolated value, a concatenation, raw() with a template', () => {
    const bad = [
      'await db.execute(`select * from users where id = \'${req.id}\'`);',
      "await db.execute('select * from users where email = ' + email);",
      'await em.execute(raw(`delete from t where id = ${id}`));',
    ].join('\n');
    expect(sqlFromValues(path.join(ROOT, 'x.ts'), bad)).toEqual([
      "x.ts:1: ${req.id} in SQL text",
      'x.ts:2: SQL concatenated with email',
      'x.ts:3: an interpolated template given to raw()',
    ]);
    // identifiers and placeholders pass
    const good = 'await db.execute(`delete from ${q(table)} where ${key} in (${keys.map(() => \'?\').join(\', \')})`, keys);';
    expect(sqlFromValues(path.join(ROOT, 'y.ts'), good)).toEqual([]);
  });

  it('finds none in the services, libs and gateway', () => {
    const files = roots().flatMap(sources);
    expect(files.length).toBeGreaterThan(200);
    const found = files.flatMap((f) => sqlFromValues(f, readFileSync(f, 'utf8')));
    expect(found).toEqual([]);
  });
});
