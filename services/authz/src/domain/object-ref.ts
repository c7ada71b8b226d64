/** @module object-ref: parsing of OpenFGA object, user and userset strings (behaviour.md §7.1, §7.2). */
import { AppError } from '@gatehouse/errors';

/** A relationship tuple on the wire: `user`, `relation`, `object` (service-spec §2 Tuple). */
export interface Tuple {
  user: string;
  relation: string;
  object: string;
  /** the tuple's condition (extension, OpenFGA schema 1.1 conditions); absent or null for none */
  condition?: { name: string; context: Record<string, unknown> | null } | null;
}

/**
 * A parsed tuple user: a concrete object `type:id`, a wildcard `type:*`, or a userset
 * `type:id#relation`. `key` is the canonical string form used in indexes.
 */
export interface UserRef {
  kind: 'object' | 'wildcard' | 'userset';
  type: string;
  id: string;
  /** set for usersets only */
  relation: string;
  key: string;
}


const SPACE = /\s/;

/** True when `text[from, to)` is non-empty and free of whitespace, `#`, `*` and `:` (a char loop: this is on the check path). */
function cleanPart(text: string, from: number, to: number): boolean {
  if (to <= from) return false;
  for (let i = from; i < to; i++) {
    const c = text.charCodeAt(i);
    if (c <= 32 || c === 35 /* # */ || c === 42 /* * */ || c === 58 /* : */) return false;
    if (c >= 127 && SPACE.test(text[i] as string)) return false;
  }
  return true;
}

/** Splits `type:id` into its parts, or returns null when the text is not in that form. */
export function splitObject(text: string): { type: string; id: string } | null {
  const colon = text.indexOf(':');
  if (colon <= 0 || !cleanPart(text, 0, colon) || !cleanPart(text, colon + 1, text.length)) return null;
  return { type: text.slice(0, colon), id: text.slice(colon + 1) };
}

/** Parses a tuple user (`type:id`, `type:*`, `type:id#relation`); null when malformed. */
export function parseUser(text: string): UserRef | null {
  const hash = text.indexOf('#');
  if (hash >= 0) {
    const obj = splitObject(text.slice(0, hash));
    const relation = text.slice(hash + 1);
    if (!obj || !cleanPart(relation, 0, relation.length)) return null;
    return { kind: 'userset', type: obj.type, id: obj.id, relation, key: text };
  }
  const colon = text.indexOf(':');
  if (colon > 0 && text.slice(colon + 1) === '*') {
    if (!cleanPart(text, 0, colon)) return null;
    const type = text.slice(0, colon);
    return { kind: 'wildcard', type, id: '*', relation: '', key: text };
  }
  const obj = splitObject(text);
  if (!obj) return null;
  return { kind: 'object', type: obj.type, id: obj.id, relation: '', key: text };
}

/** The type part of a `type:id` string (everything before the first colon). */
export function typeOf(object: string): string {
  return object.slice(0, object.indexOf(':'));
}

/**
 * Parses an explicit `user` field of check_permissions / list_permissions (behaviour.md §7.2):
 * a bare id means `user:<id>`; the result must be a concrete `type:id`.
 *
 * @param raw the caller-supplied subject text
 * @returns the canonical `type:id` subject
 * @throws AppError `invalid_argument` `user must be in type:id form, got "<x>"` or
 *   `user must be a concrete subject in type:id form, not a userset, got "<x>"`
 */
export function parseSubject(raw: string): string {
  const text = raw.trim();
  if (text.includes('#') || /(^|:)\*$/.test(text) || text === '*') {
    throw new AppError('invalid_argument', `user must be a concrete subject in type:id form, not a userset, got "${raw}"`);
  }
  const candidate = text !== '' && !text.includes(':') ? `user:${text}` : text;
  if (!splitObject(candidate)) {
    throw new AppError('invalid_argument', `user must be in type:id form, got "${raw}"`);
  }
  return candidate;
}

/**
 * Parses the subject of a check or list: a concrete `type:id` (a bare id means `user:<id>`), a userset
 * `type:id#relation` or a typed wildcard `type:*` (OpenFGA semantics: is the userset included; is the
 * type's public wildcard granted). Who may name the last two is the caller's business (behaviour.md §7.2:
 * super-admins only).
 *
 * @throws AppError `invalid_argument` `user must be in type:id form, got "<x>"`
 */
export function parseCheckSubject(raw: string): UserRef {
  const text = raw.trim();
  const candidate = text !== '' && !text.includes(':') && !text.includes('#') ? `user:${text}` : text;
  const ref = parseUser(candidate);
  if (ref === null) throw new AppError('invalid_argument', `user must be in type:id form, got "${raw}"`);
  return ref;
}
