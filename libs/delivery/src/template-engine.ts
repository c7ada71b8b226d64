/**
 * @module @gatehouse/delivery/template-engine
 * The placeholder-only template language of email templates (behaviour.md §5.5): `{{.a.b}}`,
 * spaces allowed inside the braces; nothing else between `{{` and `}}`.
 */
import { AppError } from '@gatehouse/errors';

/** One piece of a parsed template: literal text or a placeholder path (`['user', 'email']`). */
export type TemplatePart = string | { readonly path: readonly string[] };

const PLACEHOLDER = /^\s*\.([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)\s*$/;
const SNIPPET_MAX = 60;

function snippet(text: string): string {
  return text.length > SNIPPET_MAX ? `${text.slice(0, SNIPPET_MAX)}…` : text;
}

/**
 * Splits a template into literal text and placeholders.
 *
 * @throws AppError `invalid_argument` `unsupported template syntax: <snippet>` for any `{{ … }}`
 *   that is not a placeholder (conditionals, pipes, functions, comments, trim markers) and for an
 *   unclosed `{{`; the snippet is the construct itself, cut at 60 characters
 */
export function parseTemplate(template: string): TemplatePart[] {
  const parts: TemplatePart[] = [];
  let pos = 0;
  while (pos < template.length) {
    const open = template.indexOf('{{', pos);
    if (open === -1) {
      parts.push(template.slice(pos));
      break;
    }
    if (open > pos) parts.push(template.slice(pos, open));
    const close = template.indexOf('}}', open + 2);
    if (close === -1) {
      throw new AppError('invalid_argument', `unsupported template syntax: ${snippet(template.slice(open))}`);
    }
    const match = PLACEHOLDER.exec(template.slice(open + 2, close));
    if (!match?.[1]) {
      throw new AppError('invalid_argument', `unsupported template syntax: ${snippet(template.slice(open, close + 2))}`);
    }
    parts.push({ path: match[1].split('.') });
    pos = close + 2;
  }
  return parts;
}

/**
 * Checks that a template (subject or HTML body) uses placeholders only, as `add_email_template`
 * and `update_email_template` must before storing it (behaviour.md §5.5).
 *
 * @throws AppError `invalid_argument` `unsupported template syntax: <snippet>`
 */
export function validateTemplateSyntax(template: string): void {
  parseTemplate(template);
}

const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** Looks a path up through own properties only, so `{{.user.constructor}}` is an unknown path. */
function lookup(data: Record<string, unknown>, path: readonly string[]): unknown {
  let current: unknown = data;
  for (const key of path) {
    if (!isRecord(current) || !Object.hasOwn(current, key)) return undefined;
    current = current[key];
  }
  return current;
}

/** A value as template text: missing and null → empty, arrays comma-joined, objects as JSON. */
function stringify(value: unknown): string {
  if (value === undefined || value === null) return '';
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return String(value);
  if (Array.isArray(value)) return value.map(stringify).join(',');
  if (isRecord(value)) return JSON.stringify(value);
  return '';
}

const HTML_ESCAPES: Readonly<Record<string, string>> = {
  '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;',
};

/** Escapes text for HTML element content and quoted attribute values. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => HTML_ESCAPES[c] ?? c);
}

/**
 * Renders a template against `data`. Unknown paths render as empty; `escape` is applied to every
 * inserted value (HTML-escape for bodies, identity for subjects and plain text).
 *
 * @throws AppError `invalid_argument` `unsupported template syntax: <snippet>`
 */
export function renderTemplate(
  template: string,
  data: Record<string, unknown>,
  escape: (value: string) => string,
): string {
  return parseTemplate(template)
    .map((part) => (typeof part === 'string' ? part : escape(stringify(lookup(data, part.path)))))
    .join('');
}
