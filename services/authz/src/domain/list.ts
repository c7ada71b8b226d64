/** @module list: ListObjects (reverse expansion from the subject) and ListUsers (forward expansion), verified by Check. */
import { Resolver, ResolutionTooComplex } from './check.ts';
import type { TupleIndex } from './tuple-index.ts';
import type { Rewrite, TypeSystem } from './type-system.ts';
import type { UserRef } from './object-ref.ts';
import { parseUser, typeOf } from './object-ref.ts';

/** Result cap for list operations (behaviour.md §7.3, service-spec §8). */
export const LIST_CAP = 1000;

/** Step budget of the resolver that verifies list candidates (see MAX_RESOLUTION_STEPS). */
export const LIST_RESOLUTION_STEPS = 2_000_000;

/**
 * Every `object#relation` the subject may belong to, grouped as `type#relation → objects`.
 * An over-approximation: it follows `and`/`but not` through their positive branches; callers
 * verify candidates of relations whose `needsVerify` is set.
 */
export function reachableFrom(ts: TypeSystem, index: TupleIndex, subject: UserRef): Map<string, Set<string>> {
  const found = new Map<string, Set<string>>();
  const queue: Array<[string, string]> = [];
  const enqueue = (object: string, relation: string): void => {
    const type = index.node(object)?.type ?? typeOf(object);
    const typeRel = `${type}#${relation}`;
    let bucket = found.get(typeRel);
    if (!bucket) found.set(typeRel, (bucket = new Set()));
    if (bucket.has(object)) return;
    bucket.add(object);
    queue.push([object, typeRel]);
  };
  const fromUser = (user: string): void => {
    for (const [relation, objects] of index.byUser(user) ?? []) for (const o of objects) enqueue(o, relation);
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
      const byRel = index.byUser(object);
      for (const t of ttus) {
        for (const p of byRel?.get(t.tupleset) ?? []) if ((index.node(p)?.type ?? typeOf(p)) === t.parentType) enqueue(p, t.parentRelation);
      }
    }
  }
  return found;
}

/**
 * Sorted, verified objects of one `type#relation` from {@link reachableFrom}; depth errors count as not allowed.
 * Candidates of relations without `and`/`but not` are exact already. For `base but not subtract` whose base
 * is exact, a reached base only needs the subtract checked.
 */
export function verifiedObjects(
  ts: TypeSystem,
  resolver: Resolver,
  found: Map<string, Set<string>>,
  type: string,
  relation: string,
): string[] {
  const candidates = found.get(`${type}#${relation}`);
  if (!candidates) return [];
  const def = ts.relation(type, relation);
  const sorted = [...candidates].sort();
  if (!def?.needsVerify) return sorted;
  const r = def.rewrite;
  if (r.k === 'difference' && r.base.k === 'computed' && r.subtract.k === 'computed' && ts.relation(type, r.base.relation)?.needsVerify === false) {
    const reached = found.get(`${type}#${r.base.relation}`);
    const subtract = r.subtract.relation;
    return sorted.filter((object) => (reached?.has(object) ? !safeCheck(resolver, object, subtract, false) : safeCheck(resolver, object, relation, false)));
  }
  return sorted.filter((object) => safeCheck(resolver, object, relation, false));
}

function safeCheck(resolver: Resolver, object: string, relation: string, onError: boolean): boolean {
  try {
    return resolver.check(object, relation);
  } catch (err) {
    if (err instanceof ResolutionTooComplex) return onError;
    throw err;
  }
}

/**
 * ListUsers: concrete `type:id` users of `userType` (and `userType:*` when a wildcard grants access)
 * related to `object` by `relation`, sorted, capped at {@link LIST_CAP}.
 */
export function listUsers(
  ts: TypeSystem,
  index: TupleIndex,
  object: string,
  relation: string,
  userType: string,
): { users: string[]; truncated: boolean } {
  const candidates = new Set<string>();
  const seen = new Set<string>([`${object}#${relation}`]);
  const queue: Array<[string, string]> = [[object, relation]];
  const enqueue = (o: string, r: string): void => {
    const key = `${o}#${r}`;
    if (!seen.has(key) && ts.relation(index.node(o)?.type ?? typeOf(o), r)) {
      seen.add(key);
      queue.push([o, r]);
    }
  };
  const visit = (rw: Rewrite, o: string, rel: string): void => {
    switch (rw.k) {
      case 'this': {
        const b = index.bucket(o, rel);
        for (const u of b.users) if (typeOf(u) === userType) candidates.add(u);
        for (const ref of b.usersets.values()) enqueue(ref.object, ref.relation);
        return;
      }
      case 'computed':
        enqueue(o, rw.relation);
        return;
      case 'ttu':
        for (const p of index.bucket(o, rw.tupleset).users) if (!p.endsWith(':*')) enqueue(p, rw.computed);
        return;
      case 'union':
      case 'intersection':
        for (const c of rw.children) visit(c, o, rel);
        return;
      case 'difference':
        visit(rw.base, o, rel);
    }
  };
  for (let i = 0; i < queue.length; i++) {
    const [o, rel] = queue[i] as [string, string];
    const def = ts.relation(index.node(o)?.type ?? typeOf(o), rel);
    if (def) visit(def.rewrite, o, rel);
  }
  const users: string[] = [];
  for (const candidate of [...candidates].sort()) {
    const ref = parseUser(candidate);
    if (!ref || !safeCheck(new Resolver(ts, index, null, ref), object, relation, false)) continue;
    if (users.length === LIST_CAP) return { users, truncated: true };
    users.push(candidate);
  }
  return { users, truncated: false };
}
