/** @module tuple: relationship tuple validation, batch limits and read continuation tokens (behaviour.md §7.1). */
import { AppError } from '@gatehouse/errors';
import type { Tuple, UserRef } from './object-ref.ts';
import { parseUser, splitObject } from './object-ref.ts';
import type { TypeSystem } from './type-system.ts';
import type { TupleFilter } from '../storage/ports.ts';
import { parseContext, type TupleCondition } from './condition.ts';

/** Tuples per write or delete call, and contextual tuples per check (behaviour.md §7.1, §7.3). */
export const MAX_TUPLES_PER_CALL = 100;
/** Longest accepted object or user id, in characters (a storage column bound). */
export const MAX_ID_LENGTH = 255;
/** Longest accepted type or relation name in a tuple, in characters (a storage column bound). */
export const MAX_NAME_LENGTH = 100;

/** Largest accepted condition context of one tuple, in bytes of JSON. */
export const MAX_CONDITION_CONTEXT_BYTES = 16 * 1024;

/** A tuple whose parts have been parsed. */
export interface ParsedTuple {
  tuple: Tuple;
  objectType: string;
  objectId: string;
  user: UserRef;
  /** the tuple's condition (OpenFGA `RelationshipCondition`), null when it has none */
  condition: TupleCondition | null;
}

/** A tuple's condition as a caller sends it. */
export interface ConditionInput {
  name?: string | null;
  context?: unknown;
}

/** A tuple as a caller sends it: any field may be missing or `null` (proto3 optional) and is refused then. */
export interface TupleInput {
  user?: string | null;
  relation?: string | null;
  object?: string | null;
  /** optional (extension, OpenFGA conditions); absent or null means none */
  condition?: ConditionInput | null;
}

/**
 * Parses a tuple's optional condition: a non-empty name and an optional JSON-object context.
 * @throws AppError `invalid_argument` `invalid tuple "...": condition requires a name` / `condition context must be a JSON object` / size
 */
function parseCondition(t: Tuple, raw: ConditionInput | null | undefined): TupleCondition | null {
  if (raw === undefined || raw === null) return null;
  const name = typeof raw.name === 'string' ? raw.name.trim() : '';
  if (name === '') throw invalid(t, 'condition requires a name');
  let context: Record<string, unknown> | null;
  try {
    context = parseContext(raw.context, 'condition context');
  } catch (err) {
    throw invalid(t, (err as Error).message);
  }
  if (context !== null && Buffer.byteLength(JSON.stringify(context), 'utf8') > MAX_CONDITION_CONTEXT_BYTES) {
    throw invalid(t, `condition context is limited to ${MAX_CONDITION_CONTEXT_BYTES} bytes`);
  }
  return { name, context };
}

const invalid = (t: Tuple, reason: string): AppError =>
  new AppError('invalid_argument', `invalid tuple "${t.user} ${t.relation} ${t.object}": ${reason}`);

/**
 * Checks the `type:id` form of each field.
 * @throws AppError `invalid_argument` `each tuple requires user, relation and object`, or `invalid tuple ...` for a wildcard object
 */
export function parseTupleForm(raw: TupleInput | null | undefined): ParsedTuple {
  const user = typeof raw?.user === 'string' ? raw.user.trim() : '';
  const relation = typeof raw?.relation === 'string' ? raw.relation.trim() : '';
  const object = typeof raw?.object === 'string' ? raw.object.trim() : '';
  const obj = splitObject(object);
  const ref = parseUser(user);
  if (!obj || !ref || relation === '' || /[\s:#*]/.test(relation)) {
    throw new AppError('invalid_argument', 'each tuple requires user, relation and object');
  }
  const tuple = { user, relation, object };
  if (obj.id.length > MAX_ID_LENGTH || ref.id.length > MAX_ID_LENGTH) {
    throw invalid(tuple, `ids are limited to ${MAX_ID_LENGTH} characters`);
  }
  if (Math.max(obj.type.length, relation.length, ref.type.length, ref.relation.length) > MAX_NAME_LENGTH) {
    throw invalid(tuple, `type and relation names are limited to ${MAX_NAME_LENGTH} characters`);
  }
  const condition = parseCondition(tuple, raw?.condition);
  return { tuple: condition === null ? tuple : { ...tuple, condition }, objectType: obj.type, objectId: obj.id, user: ref, condition };
}

/**
 * Null when the tuple fits the model, else the reason it does not (the words of behaviour.md §7.1); a
 * condition's own context must name declared parameters with values of their types, as OpenFGA requires of
 * written and contextual tuples (CompiledCondition.validateTupleContext).
 */
export function tupleMismatch(ts: TypeSystem, p: ParsedTuple): string | null {
  const rels = ts.types.get(p.objectType);
  if (!rels) return `type "${p.objectType}" is not defined`;
  const def = rels.get(p.tuple.relation);
  if (!def) return `relation "${p.tuple.relation}" is not defined on type "${p.objectType}"`;
  if (!ts.types.has(p.user.type)) return `type "${p.user.type}" is not defined`;
  if (p.user.kind === 'userset' && !ts.relation(p.user.type, p.user.relation)) {
    return `relation "${p.user.relation}" is not defined on type "${p.user.type}"`;
  }
  const condition = p.condition?.name ?? '';
  if (condition !== '' && !ts.conditions.has(condition)) return `condition "${condition}" is not defined`;
  if (!ts.allowsUser(def, p.user, condition)) {
    const shown = p.user.kind === 'userset' ? `${p.user.type}#${p.user.relation}` : p.user.kind === 'wildcard' ? `${p.user.type}:*` : p.user.type;
    const withCondition = condition === '' ? shown : `${shown} with ${condition}`;
    return `type "${withCondition}" is not allowed on relation "${p.tuple.relation}" of type "${p.objectType}"`;
  }
  if (p.condition !== null) {
    try {
      ts.conditions.get(condition)?.validateTupleContext(p.condition.context);
    } catch (err) {
      return (err as Error).message;
    }
  }
  return null;
}

/**
 * Validates a write batch: 1–100 tuples, `type:id` form, and each allowed by the active model.
 * @throws AppError `invalid_argument` with the §7.1 messages
 */
export function validateWriteBatch(ts: TypeSystem, tuples: unknown): ParsedTuple[] {
  return checkCount(tuples).map((raw) => {
    const p = parseTupleForm(raw as TupleInput);
    const reason = tupleMismatch(ts, p);
    if (reason !== null) throw invalid(p.tuple, reason);
    return p;
  });
}

/** Validates a delete batch: 1–100 tuples in `type:id` form (no model check, so stale tuples stay deletable). */
export function validateDeleteBatch(tuples: unknown): ParsedTuple[] {
  return checkCount(tuples).map((raw) => parseTupleForm(raw as TupleInput));
}

function checkCount(tuples: unknown): unknown[] {
  if (!Array.isArray(tuples) || tuples.length === 0) throw new AppError('invalid_argument', 'at least one tuple is required');
  if (tuples.length > MAX_TUPLES_PER_CALL) {
    throw new AppError('invalid_argument', `too many tuples: max ${MAX_TUPLES_PER_CALL} per request`);
  }
  return tuples;
}

/** Query of a tuple read (behaviour.md §7.1 Read). */
export interface ReadQuery {
  user?: string | null;
  relation?: string | null;
  object?: string | null;
  page_size?: number | string | null;
  continuation_token?: string | null;
}

/**
 * Normalises read filters and page size.
 * @throws AppError `invalid_argument` `page_size must be between 1 and 100`, `invalid continuation token`
 */
export function parseReadQuery(q: ReadQuery): { filter: TupleFilter; pageSize: number; afterSeq: number; binding: string } {
  const raw = q.page_size === undefined || q.page_size === null || q.page_size === '' ? 0 : Number(q.page_size);
  if (!Number.isInteger(raw) || raw < 0 || raw > 100) throw new AppError('invalid_argument', 'page_size must be between 1 and 100');
  const pageSize = raw === 0 ? 50 : raw;
  const filter: TupleFilter = {};
  const user = q.user?.trim();
  const relation = q.relation?.trim();
  const object = q.object?.trim();
  if (user) filter.user = user;
  if (relation) filter.relation = relation;
  if (object) {
    const colon = object.indexOf(':');
    if (colon < 0) filter.objectType = object;
    else {
      filter.objectType = object.slice(0, colon);
      if (colon < object.length - 1) filter.objectId = object.slice(colon + 1);
    }
  }
  const binding = JSON.stringify([filter.user ?? '', filter.relation ?? '', filter.objectType ?? '', filter.objectId ?? null]);
  let afterSeq = 0;
  if (q.continuation_token) afterSeq = decodeToken(q.continuation_token, binding);
  return { filter, pageSize, afterSeq, binding };
}

/** Opaque token: base64url of `{b: filter binding, s: last seq}`. */
export function encodeToken(binding: string, seq: number): string {
  return Buffer.from(JSON.stringify({ b: binding, s: seq }), 'utf8').toString('base64url');
}

function decodeToken(token: string, binding: string): number {
  try {
    const parsed = JSON.parse(Buffer.from(token, 'base64url').toString('utf8')) as { b?: unknown; s?: unknown };
    if (parsed.b === binding && typeof parsed.s === 'number' && Number.isInteger(parsed.s) && parsed.s >= 0) return parsed.s;
  } catch {
    // fall through: any undecodable token is refused the same way
  }
  throw new AppError('invalid_argument', 'invalid continuation token');
}
