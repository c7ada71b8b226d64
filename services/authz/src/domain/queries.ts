/** @module queries: validation of check and query inputs against the active model (behaviour.md §7.3). */
import { AppError } from '@gatehouse/errors';
import type { UserRef } from './object-ref.ts';
import { splitObject } from './object-ref.ts';
import { MAX_TUPLES_PER_CALL, parseTupleForm, tupleMismatch } from './tuple.ts';
import type { ParsedTuple, TupleInput } from './tuple.ts';
import type { TypeSystem } from './type-system.ts';
import { parseContext } from './condition.ts';

/** Checks per check_permissions call (service-spec §8). */
export const MAX_CHECKS = 100;

/**
 * One check of a batch (service-spec §2 PermissionCheckInput), as the codec hands it over: absent
 * fields are `null` (proto3 optional) and are refused like empty ones.
 */
export interface CheckInput {
  relation?: string | null;
  object?: string | null;
  contextual_tuples?: TupleInput[] | null;
  /** this check's condition context (extension, OpenFGA conditions), over the call's */
  context?: unknown;
}

/** A validated check. */
export interface ParsedCheck {
  relation: string;
  object: string;
  contextual: readonly ParsedTuple[];
  /** the check's own condition context, null when none */
  context: Record<string, unknown> | null;
}

const bad = (message: string): AppError => new AppError('invalid_argument', message);

/** @throws AppError `failed_precondition` `no authorization model is installed` */
export function requireModel(ts: TypeSystem | null): TypeSystem {
  if (!ts) throw new AppError('failed_precondition', 'no authorization model is installed');
  return ts;
}

/** @throws AppError `invalid_argument` naming the undefined type or relation */
export function requireRelation(ts: TypeSystem, type: string, relation: string): void {
  if (!ts.types.has(type)) throw bad(`type "${type}" is not defined`);
  if (!ts.relation(type, relation)) throw bad(`relation "${relation}" is not defined on type "${type}"`);
}

/**
 * The (type, relation) pairs a list_permissions filter asks for (behaviour.md §7.3), sorted by type then
 * relation: every relation of every type, narrowed to `objectType` and/or `relation` when given.
 * @throws AppError `invalid_argument` `type "…" is not defined`, `relation "…" is not defined on type "…"`
 *   (both given) or `relation "…" is not defined on any type`
 */
export function listedPairs(ts: TypeSystem, objectType: string | undefined, relation: string | undefined): Array<[string, string]> {
  if (objectType !== undefined && !ts.types.has(objectType)) throw bad(`type "${objectType}" is not defined`);
  if (objectType !== undefined && relation !== undefined) requireRelation(ts, objectType, relation);
  const pairs: Array<[string, string]> = [];
  for (const type of [...ts.types.keys()].sort()) {
    if (objectType !== undefined && type !== objectType) continue;
    for (const rel of [...(ts.types.get(type)?.keys() ?? [])].sort()) if (relation === undefined || rel === relation) pairs.push([type, rel]);
  }
  if (relation !== undefined && pairs.length === 0) throw bad(`relation "${relation}" is not defined on any type`);
  return pairs;
}

/** The subject's type (and userset relation) must exist in the model. @throws AppError `invalid_argument` */
export function requireSubject(ts: TypeSystem, subject: UserRef): void {
  if (!ts.types.has(subject.type)) throw bad(`type "${subject.type}" is not defined`);
  if (subject.kind === 'userset') requireRelation(ts, subject.type, subject.relation);
}

const NO_TUPLES: readonly TupleInput[] = Object.freeze([]);
const NO_PARSED: readonly ParsedTuple[] = Object.freeze([]);

/** Validates the 1–100 count of a check batch, before any model is loaded. @throws AppError `invalid_argument` */
export function checkBatchCount(checks: unknown): CheckInput[] {
  if (!Array.isArray(checks) || checks.length === 0) throw bad('at least one check is required');
  if (checks.length > MAX_CHECKS) throw bad(`too many checks: max ${MAX_CHECKS} per request`);
  return checks as CheckInput[];
}

/**
 * Validates one check: `relation` and a `type:id` object, both defined in the model; contextual tuples
 * at most 100 and validated like written tuples; an optional JSON-object `context`. With `tuplesOnly`, only
 * the contextual tuples are validated (a list call's; the count message then says `per request`).
 * @throws AppError `invalid_argument` with the §7.3 messages
 */
export function parseCheck(ts: TypeSystem, c: CheckInput, tuplesOnly = false): ParsedCheck {
  const relation = typeof c?.relation === 'string' ? c.relation.trim() : '';
  const object = typeof c?.object === 'string' ? c.object.trim() : '';
  const obj = splitObject(object);
  if (!tuplesOnly) {
    if (relation === '' || !obj) throw bad('each check requires relation and object');
    requireRelation(ts, obj.type, relation);
  }
  const raw = c.contextual_tuples ?? NO_TUPLES;
  if (!Array.isArray(raw)) throw bad('each tuple requires user, relation and object');
  if (raw.length > MAX_TUPLES_PER_CALL) throw bad(`too many contextual tuples: max ${MAX_TUPLES_PER_CALL} per ${tuplesOnly ? 'request' : 'check'}`);
  let context: Record<string, unknown> | null;
  try {
    context = parseContext(c.context, 'context');
  } catch (err) {
    throw bad((err as Error).message);
  }
  // most checks carry no contextual tuples: one shared empty list, no allocation per check
  const contextual = raw.length === 0 ? NO_PARSED : raw.map((t) => {
    const p = parseTupleForm(t);
    const reason = tupleMismatch(ts, p);
    if (reason !== null) throw bad(`invalid tuple "${p.tuple.user} ${p.tuple.relation} ${p.tuple.object}": ${reason}`);
    return p;
  });
  return { relation, object, contextual, context };
}
