/**
 * @module orgs/scim/filter
 * The SCIM list filter of behaviour.md §6.4: exactly **one** attribute expression `<attr> <op> <value>`
 * (RFC 7644 §3.4.2.2). The text is parsed by `scim2-parse-filter` (a full RFC 7644 filter grammar);
 * anything but a single comparison or presence test of an allowed attribute, and any grouping
 * (parentheses, brackets) or logical operator, is refused with 400 `invalidFilter`.
 */
import scimFilter from 'scim2-parse-filter';
import { badRequest } from './errors.ts';

/** The operators behaviour.md §6.4 allows. */
export type FilterOp = 'eq' | 'ne' | 'co' | 'sw' | 'pr';

/** One parsed term; `attr` is the canonical (lower-cased) attribute name. */
export interface FilterTerm {
  attr: string;
  op: FilterOp;
  value: string | boolean | null;
}

const OPS: ReadonlySet<string> = new Set(['eq', 'ne', 'co', 'sw', 'pr']);

/** True when `text` holds `(`, `)`, `[` or `]` outside a quoted string (grouping is refused, §6.4). */
function hasGrouping(text: string): boolean {
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (quoted) {
      if (ch === '\\') i++;
      else if (ch === '"') quoted = false;
    } else if (ch === '"') quoted = true;
    else if ('()[]'.includes(ch)) return true;
  }
  return false;
}

/**
 * Parses a one-term filter over `attrs` (lower-case names); `booleanAttrs` take `eq`, `ne` and `pr` only.
 * @throws ScimError 400 `invalidFilter`
 */
export function parseFilter(text: string, attrs: readonly string[], booleanAttrs: readonly string[] = []): FilterTerm {
  const invalid = (why: string) => badRequest('invalidFilter', `invalid filter: ${why}`);
  if (text.length > 1024) throw invalid('too long');
  if (hasGrouping(text)) throw invalid('grouping with parentheses or brackets is not supported');
  let ast: scimFilter.Filter;
  try {
    ast = scimFilter.parse(text);
  } catch (err) {
    throw invalid((err as Error).message.split('\n')[0] ?? 'syntax error');
  }
  if (ast.op === 'and' || ast.op === 'or' || ast.op === 'not') throw invalid(`the logical operator "${ast.op}" is not supported; use one term`);
  if (!OPS.has(ast.op) || !('attrPath' in ast)) throw invalid(`the operator "${ast.op}" is not supported`);
  const attr = ast.attrPath.toLowerCase().replace(/^urn:ietf:params:scim:schemas:core:2\.0:(user|group):/, '');
  if (!attrs.includes(attr)) throw invalid(`filtering on "${ast.attrPath}" is not supported`);
  const isBool = booleanAttrs.includes(attr);
  if (ast.op === 'pr') return { attr, op: 'pr', value: null };
  const value = (ast as scimFilter.Compare).compValue;
  if (isBool) {
    if (ast.op === 'co' || ast.op === 'sw') throw invalid(`"${ast.op}" does not apply to "${ast.attrPath}"`);
    if (typeof value !== 'boolean') throw invalid(`"${ast.attrPath}" takes true or false`);
  } else if (typeof value !== 'string') {
    throw invalid(`"${ast.attrPath}" takes a quoted string`);
  }
  return { attr, op: ast.op as FilterOp, value };
}

/**
 * Whether an attribute's value matches a term: strings case-insensitively (behaviour.md §6.4),
 * `pr` when the value is present and non-empty.
 */
export function matches(term: FilterTerm, actual: string | boolean | null | undefined): boolean {
  if (term.op === 'pr') return actual !== null && actual !== undefined && actual !== '';
  if (typeof term.value === 'boolean') return term.op === 'eq' ? actual === term.value : actual !== term.value;
  const want = String(term.value).toLowerCase();
  const have = typeof actual === 'string' ? actual.toLowerCase() : null;
  switch (term.op) {
    case 'eq': return have === want;
    case 'ne': return have !== want;
    case 'co': return have !== null && have.includes(want);
    case 'sw': return have !== null && have.startsWith(want);
  }
}
