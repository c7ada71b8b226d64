/** @module reach: the reverse expansion from a subject (what its tuples can reach), for list objects and the check depth limit. */
import type { TupleSource } from './tuple-index.ts';
import type { Rewrite, TypeSystem } from './type-system.ts';
import type { UserRef } from './object-ref.ts';
import { typeOf } from './object-ref.ts';
import { ConditionError } from './condition.ts';

/**
 * Conditions for a reverse expansion that evaluates them (list objects, as OpenFGA's reverse expansion does):
 * the request context, and the first condition error met per read (filled in), keyed as {@link readKey}.
 */
export interface ReachConditions {
  context: Record<string, unknown> | null;
  errors: Map<string, ConditionError>;
  /**
   * Expand only what OpenFGA's older list objects algorithm expands (every union child, the first child of an
   * intersection, the base of `but not`; no subtracted side): OpenFGA runs it for a userset or `type:*` subject,
   * its pipeline for a concrete one (pkg/server/commands/list_objects.go, v1.22.1)
   */
  pruned?: boolean;
}

/** One `type#relation` of a reverse expansion: the objects reached with it and its edges, resolved once per call. */
interface Slot {
  relation: string;
  objects: Set<string>;
  /** relations of the same type that include this one (computed usersets), resolved on first use */
  parents: Slot[] | null;
  /** tuple-to-usersets that include this one: the tupleset relation, the parent type and its slot */
  ttus: Array<{ tupleset: string; parentType: string; slot: Slot }> | null;
  /** `object#relation` may be a tuple user (the model allows this userset in some direct type) */
  asUser: boolean;
}

/**
 * Every `object#relation` the subject may belong to, grouped as `type#relation → objects`.
 * An over-approximation: it follows `and`/`but not` through their positive branches; callers
 * verify candidates of relations whose `needsVerify` is set.
 *
 * With `stop`, the expansion ends once `stop.at` objects of `stop.type#stop.relation` are reached (the other
 * groups are then partial): for a capped list of one relation that needs no verification.
 *
 * Cost: one reverse-index lookup per reached object that can be a tuple user (a userset the model allows
 * in a direct type, or the parent of a tuple-to-userset); the edges of each `type#relation` are resolved
 * once per call, and tuple conditions are looked up only when the model declares conditions.
 */
export function reachableFrom(
  ts: TypeSystem,
  index: TupleSource,
  subject: UserRef,
  ctx: TupleSource | null = null,
  conditions: ReachConditions | null = null,
  stop: { type: string; relation: string; at: number } | null = null,
): Map<string, Set<string>> {
  const found = new Map<string, Set<string>>();
  const sources = ctx ? [index, ctx] : [index];
  // the index holds only tuples the model allows: without conditions in the model, no tuple has one
  const evaluate = conditions !== null && ts.conditions.size > 0 ? conditions : null;
  // with conditions to evaluate, subtracted sides are expanded too: OpenFGA's list objects reads their tuples
  // (and fails on their conditions); what they reach is only a candidate of relations verified by check
  const pruned = conditions?.pruned === true;
  const subtracts = evaluate !== null && !pruned;
  /**
   * Whether the tuple `object#relation@user` of `source` is followed: always without `conditions`, else when its
   * condition holds; one it cannot evaluate is not followed and its error is recorded under the read it was met
   * in, `readKey(type, relation, via)` (OpenFGA's reverse expansion fails on any condition error it meets, unlike
   * check's filtered reads, but only in the reads its expansion toward the requested relation makes).
   */
  const follows = (source: TupleSource, object: string, relation: string, user: string, viaType: string, viaRelation: string): boolean => {
    if (evaluate === null) return true;
    const c = source.node(object)?.rels.get(relation)?.conds?.get(user);
    if (c === undefined) return true;
    const compiled = ts.conditions.get(c.name);
    if (compiled === undefined) return false;
    try {
      return compiled.evaluate(`${object}#${relation}@${user}`, evaluate.context, c.context);
    } catch (err) {
      if (!(err instanceof ConditionError)) throw err;
      const key = readKey(typeOf(object), relation, viaType === '' ? '' : `${viaType}#${viaRelation}`);
      if (!evaluate.errors.has(key)) evaluate.errors.set(key, err);
      return false;
    }
  };
  /** type → relation → slot */
  const slots = new Map<string, Map<string, Slot>>();
  const slotOf = (type: string, relation: string): Slot => {
    let byRel = slots.get(type);
    if (!byRel) slots.set(type, (byRel = new Map()));
    let slot = byRel.get(relation);
    if (!slot) {
      const typeRel = `${type}#${relation}`;
      let objects = found.get(typeRel);
      if (!objects) found.set(typeRel, (objects = new Set()));
      slot = { relation, objects, parents: null, ttus: null, asUser: ts.usersetUsers.has(typeRel) };
      byRel.set(relation, slot);
    }
    return slot;
  };
  const edges = (type: string, slot: Slot): void => {
    const typeRel = `${type}#${slot.relation}`;
    const parents = (pruned ? ts.prunedComputedParents : ts.computedParents).get(typeRel) ?? [];
    const ttus = (pruned ? ts.prunedTtuParents : ts.ttuParents).get(typeRel) ?? [];
    slot.parents = (subtracts ? [...parents, ...(ts.subtractComputedParents.get(typeRel) ?? [])] : parents).map((parent) => slotOf(type, parent));
    slot.ttus = (subtracts ? [...ttus, ...(ts.subtractTtuParents.get(typeRel) ?? [])] : ttus)
      .map((t) => ({ tupleset: t.tupleset, parentType: t.parentType, slot: slotOf(t.parentType, t.parentRelation) }));
  };
  const queueObjects: string[] = [];
  const queueTypes: string[] = [];
  const queueSlots: Slot[] = [];
  const stopSlot = stop === null ? null : slotOf(stop.type, stop.relation);
  let stopped = false;
  const reach = (object: string, type: string, slot: Slot): void => {
    if (slot.objects.has(object)) return;
    slot.objects.add(object);
    if (slot === stopSlot && slot.objects.size >= stop!.at) stopped = true;
    queueObjects.push(object);
    queueTypes.push(type);
    queueSlots.push(slot);
  };
  // a stored object's type is its text up to the first colon (as its node's): no index lookup, so a
  // partial index is not asked for objects the expansion only names
  const enqueue = (object: string, relation: string): void => {
    const type = typeOf(object);
    reach(object, type, slotOf(type, relation));
  };
  /** Follows the tuples naming `user`: the subject itself (`viaType` '') or the userset of a reached `viaType#viaRelation`. */
  const fromUser = (user: string, viaType: string, viaRelation: string): void => {
    for (const source of sources) {
      for (const [relation, objects] of source.byUser(user) ?? []) for (const o of objects) if (follows(source, o, relation, user, viaType, viaRelation)) enqueue(o, relation);
    }
  };
  if (subject.kind === 'userset') enqueue(`${subject.type}:${subject.id}`, subject.relation);
  else fromUser(subject.key, '', '');
  if (subject.kind === 'object') fromUser(`${subject.type}:*`, '', '');
  for (let i = 0; i < queueObjects.length && !stopped; i++) {
    const object = queueObjects[i]!;
    const type = queueTypes[i]!;
    const slot = queueSlots[i]!;
    if (slot.parents === null) edges(type, slot);
    for (const parent of slot.parents!) reach(object, type, parent);
    if (slot.asUser) fromUser(`${object}#${slot.relation}`, type, slot.relation);
    const ttus = slot.ttus!;
    if (ttus.length === 0) continue;
    for (const source of sources) {
      const byRel = source.byUser(object);
      if (byRel === undefined) continue;
      for (const t of ttus) {
        for (const p of byRel.get(t.tupleset) ?? []) {
          if (p.length > t.parentType.length && p.charCodeAt(t.parentType.length) === 58 && p.startsWith(t.parentType) && follows(source, p, t.tupleset, object, type, slot.relation)) reach(p, t.parentType, t.slot);
        }
      }
    }
  }
  return found;
}

/**
 * The key of one read of a reverse expansion: the tuples of `type#relation` naming the subject itself (`via`
 * '', its wildcard included) or an object reached with `via` (`type#relation` of that object: the userset
 * `object#relation` as the tuple's user, or the parent of a tuple-to-userset whose computed relation it is).
 * OpenFGA's reverse expansion makes such a read (ReadStartingWithUser) only from a node its expansion toward
 * the requested relation reaches, so a condition error counts for a list only when its read does.
 */
export function readKey(type: string, relation: string, via: string): string {
  return `${type}#${relation}@${via}`;
}

/**
 * The reads ({@link readKey}) OpenFGA's list objects makes toward `type#relation`: the direct tuples of each
 * relation on the way, naming the subject or a userset its type restrictions allow, and the tupleset tuples of
 * each tuple-to-userset, naming a parent reached with the computed relation, through userset restrictions,
 * computed usersets, every child of a union or an intersection and both sides of `but not` (OpenFGA v1.22.1's
 * pipeline, for a concrete subject, fails ListObjects on a condition met under a subtracted side or any
 * intersection child). With `pruned`, only the first child of an intersection and the base of `but not`, as
 * OpenFGA's older algorithm reads them for a userset or `type:*` subject (`GetPrunedRelationshipEdges`). A
 * condition error met in one of these reads fails the call; one met in another read does not (differential
 * seed 113: `r0: (viewer from parent or owner) and inherited from parent` reads `doc#parent` only for folders
 * the subject views, so a parent tuple of a folder it only inherits is never evaluated).
 */
export function reverseReadKeys(ts: TypeSystem, type: string, relation: string, pruned = false, out = new Set<string>(), visited = new Set<string>()): Set<string> {
  const key = `${type}#${relation}`;
  if (visited.has(key)) return out;
  visited.add(key);
  const def = ts.relation(type, relation);
  if (!def) return out;
  const walk = (rw: Rewrite): void => {
    switch (rw.k) {
      case 'this':
        for (const d of def.directTypes) {
          if (d.relation === '') {
            out.add(readKey(type, relation, ''));
          } else {
            out.add(readKey(type, relation, `${d.type}#${d.relation}`));
            reverseReadKeys(ts, d.type, d.relation, pruned, out, visited);
          }
        }
        return;
      case 'computed':
        reverseReadKeys(ts, type, rw.relation, pruned, out, visited);
        return;
      case 'ttu':
        for (const d of ts.relation(type, rw.tupleset)?.directTypes ?? []) {
          if (d.relation !== '' || d.wildcard) continue;
          out.add(readKey(type, rw.tupleset, `${d.type}#${rw.computed}`));
          reverseReadKeys(ts, d.type, rw.computed, pruned, out, visited);
        }
        return;
      case 'union':
        rw.children.forEach(walk);
        return;
      case 'intersection':
        if (pruned) walk(rw.children[0] as Rewrite);
        else rw.children.forEach(walk);
        return;
      case 'difference':
        walk(rw.base);
        if (!pruned) walk(rw.subtract);
    }
  };
  walk(def.rewrite);
  return out;
}
