/** @module reach: the reverse expansion from a subject (what its tuples can reach), for list objects and the check depth limit. */
import type { TupleSource } from './tuple-index.ts';
import type { Rewrite, TypeSystem } from './type-system.ts';
import type { UserRef } from './object-ref.ts';
import { typeOf } from './object-ref.ts';
import { ConditionError } from './condition.ts';

/**
 * Conditions for a reverse expansion that evaluates them (list objects, as OpenFGA's reverse expansion does):
 * the request context, and the first condition error met per tuple `type#relation` (filled in).
 */
export interface ReachConditions {
  context: Record<string, unknown> | null;
  errors: Map<string, ConditionError>;
}

/**
 * Every `object#relation` the subject may belong to, grouped as `type#relation → objects`.
 * An over-approximation: it follows `and`/`but not` through their positive branches; callers
 * verify candidates of relations whose `needsVerify` is set.
 */
export function reachableFrom(
  ts: TypeSystem,
  index: TupleSource,
  subject: UserRef,
  ctx: TupleSource | null = null,
  conditions: ReachConditions | null = null,
): Map<string, Set<string>> {
  const found = new Map<string, Set<string>>();
  /** Whether the tuple `object#relation@user` of `source` is followed: always without `conditions`, else when its condition holds. */
  const follows = (source: TupleSource, object: string, relation: string, user: string): boolean => {
    if (conditions === null) return true;
    const c = source.node(object)?.rels.get(relation)?.conds?.get(user);
    if (c === undefined) return true;
    const compiled = ts.conditions.get(c.name);
    if (compiled === undefined) return false;
    try {
      return compiled.evaluate(`${object}#${relation}@${user}`, conditions.context, c.context);
    } catch (err) {
      if (!(err instanceof ConditionError)) throw err;
      const key = `${typeOf(object)}#${relation}`;
      if (!conditions.errors.has(key)) conditions.errors.set(key, err);
      return false;
    }
  };
  const queue: Array<[string, string]> = [];
  const enqueue = (object: string, relation: string): void => {
    // a stored object's type is its text up to the first colon (as its node's): no index lookup, so a
    // partial index is not asked for objects the expansion only names
    const type = typeOf(object);
    const typeRel = `${type}#${relation}`;
    let bucket = found.get(typeRel);
    if (!bucket) found.set(typeRel, (bucket = new Set()));
    if (bucket.has(object)) return;
    bucket.add(object);
    queue.push([object, typeRel]);
  };
  const fromUser = (user: string): void => {
    for (const source of ctx ? [index, ctx] : [index]) {
      for (const [relation, objects] of source.byUser(user) ?? []) for (const o of objects) if (follows(source, o, relation, user)) enqueue(o, relation);
    }
  };
  if (subject.kind === 'userset') enqueue(`${subject.type}:${subject.id}`, subject.relation);
  else fromUser(subject.key);
  if (subject.kind === 'object') fromUser(`${subject.type}:*`);
  for (let i = 0; i < queue.length; i++) {
    const [object, typeRel] = queue[i] as [string, string];
    const relation = typeRel.slice(typeRel.indexOf('#') + 1);
    for (const parent of ts.computedParents.get(typeRel) ?? []) enqueue(object, parent);
    fromUser(`${object}#${relation}`);
    const ttus = ts.ttuParents.get(typeRel);
    if (ttus) {
      for (const source of ctx ? [index, ctx] : [index]) {
        const byRel = source.byUser(object);
        for (const t of ttus) {
          for (const p of byRel?.get(t.tupleset) ?? []) if (typeOf(p) === t.parentType && follows(source, p, t.tupleset, object)) enqueue(p, t.parentRelation);
        }
      }
    }
  }
  return found;
}

/**
 * The tuple relations (`type#relation`) OpenFGA's reverse expansion toward `type#relation` reads, along the
 * edges GetPrunedRelationshipEdges finds (internal/graph, `resolveAnyEdge`): the direct tuples of each relation
 * on the way and the tupleset tuples of each tuple-to-userset, through userset restrictions, computed usersets,
 * every union child, the first child of an intersection and the base of `but not`. A condition error on a
 * tuple of these relations fails OpenFGA's ListObjects.
 */
export function reverseReadKeys(ts: TypeSystem, type: string, relation: string, out = new Set<string>(), visited = new Set<string>()): Set<string> {
  const key = `${type}#${relation}`;
  if (visited.has(key)) return out;
  visited.add(key);
  const def = ts.relation(type, relation);
  if (!def) return out;
  const walk = (rw: Rewrite): void => {
    switch (rw.k) {
      case 'this':
        out.add(key);
        for (const d of def.directTypes) if (d.relation !== '') reverseReadKeys(ts, d.type, d.relation, out, visited);
        return;
      case 'computed':
        reverseReadKeys(ts, type, rw.relation, out, visited);
        return;
      case 'ttu':
        out.add(`${type}#${rw.tupleset}`);
        for (const d of ts.relation(type, rw.tupleset)?.directTypes ?? []) if (d.relation === '' && !d.wildcard) reverseReadKeys(ts, d.type, rw.computed, out, visited);
        return;
      case 'union':
        rw.children.forEach(walk);
        return;
      case 'intersection':
        if (rw.children[0]) walk(rw.children[0]);
        return;
      case 'difference':
        walk(rw.base);
    }
  };
  walk(def.rewrite);
  return out;
}
