/** @module reach: the reverse expansion from a subject (what its tuples can reach), for list objects and the check depth limit. */
import type { TupleSource } from './tuple-index.ts';
import type { TypeSystem } from './type-system.ts';
import type { UserRef } from './object-ref.ts';
import { typeOf } from './object-ref.ts';

/**
 * Every `object#relation` the subject may belong to, grouped as `type#relation → objects`.
 * An over-approximation: it follows `and`/`but not` through their positive branches; callers
 * verify candidates of relations whose `needsVerify` is set.
 */
export function reachableFrom(ts: TypeSystem, index: TupleSource, subject: UserRef, ctx: TupleSource | null = null): Map<string, Set<string>> {
  const found = new Map<string, Set<string>>();
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
    for (const [relation, objects] of index.byUser(user) ?? []) for (const o of objects) enqueue(o, relation);
    if (ctx) for (const [relation, objects] of ctx.byUser(user) ?? []) for (const o of objects) enqueue(o, relation);
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
          for (const p of byRel?.get(t.tupleset) ?? []) if (typeOf(p) === t.parentType) enqueue(p, t.parentRelation);
        }
      }
    }
  }
  return found;
}
