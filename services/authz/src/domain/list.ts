/** @module list: ListObjects (reverse expansion from the subject) and ListUsers (forward expansion), verified by Check. */
import { MAX_RESOLUTION_DEPTH, Resolver, ResolutionTooComplex } from './check.ts';
import type { Bucket, TupleIndex } from './tuple-index.ts';
import { EMPTY_BUCKET } from './tuple-index.ts';
import type { Rewrite, TypeSystem } from './type-system.ts';
import { parseUser, typeOf } from './object-ref.ts';

export { reachableFrom } from './reach.ts';

/** Result cap for list operations (behaviour.md §7.3, service-spec §8). */
export const LIST_CAP = 1000;

/** Step budget of the resolver that verifies list candidates (see MAX_RESOLUTION_STEPS). */
export const LIST_RESOLUTION_STEPS = 2_000_000;

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
    return sorted.filter((object) => (reached?.has(object) ? !safeCheck(() => resolver.excludedBy(object, subtract), true) : safeCheck(() => resolver.check(object, relation), false)));
  }
  return sorted.filter((object) => safeCheck(() => resolver.check(object, relation), false));
}

/**
 * A list candidate's check: a depth or step overflow answers `onError` (the object is left out); a condition
 * that cannot be evaluated fails the call, as OpenFGA's list APIs answer it with an error.
 * @throws ConditionError
 */
function safeCheck(check: () => boolean, onError: boolean): boolean {
  try {
    return check();
  } catch (err) {
    if (err instanceof ResolutionTooComplex) return onError;
    throw err;
  }
}

/** What list_users asks for: `type` users, or usersets `type#relation` when `relation` is set (OpenFGA user filter). */
export interface UserFilter {
  type: string;
  relation: string;
}

/**
 * ListUsers: the users matching `filter` related to `object` by `relation`: concrete `type:id` users (and
 * `type:*` when a wildcard grants access) or, for a userset filter, `type:id#relation` usersets; sorted,
 * capped at {@link LIST_CAP}. Contextual tuples (`ctx`) count as stored ones; conditions are evaluated in
 * `context`. A userset filter naming the queried type and relation lists the object's own userset too
 * (`group:g0#member` for `group:g0 member`), as OpenFGA does.
 * @throws ResolutionTooComplex when the expansion or a candidate's check passes the depth limit (as check);
 *   ConditionError when a condition on the way cannot be evaluated
 */
export function listUsers(
  ts: TypeSystem,
  index: TupleIndex,
  object: string,
  relation: string,
  filter: UserFilter,
  ctx: TupleIndex | null = null,
  context: Record<string, unknown> | null = null,
): { users: string[]; truncated: boolean } {
  const candidates = new Set<string>();
  const seen = new Set<string>([`${object}#${relation}`]);
  const queue: Array<[string, string, number]> = [[object, relation, 0]];
  const typeOfObject = (o: string): string => index.node(o)?.type ?? ctx?.node(o)?.type ?? typeOf(o);
  // the queried object's own userset is a user of it when the filter names it (OpenFGA's expand sends it first)
  if (filter.relation === relation && typeOfObject(object) === filter.type) candidates.add(`${object}#${relation}`);
  const buckets = (o: string, r: string): Bucket[] => {
    const b = index.bucket(o, r);
    const c = ctx?.bucket(o, r) ?? EMPTY_BUCKET;
    return c === EMPTY_BUCKET ? [b] : [b, c];
  };
  const enqueue = (o: string, r: string, depth: number): void => {
    const key = `${o}#${r}`;
    if (filter.relation !== '' && r === filter.relation && typeOfObject(o) === filter.type) candidates.add(key);
    if (!seen.has(key) && ts.relation(typeOfObject(o), r)) {
      if (depth >= MAX_RESOLUTION_DEPTH) throw new ResolutionTooComplex();
      seen.add(key);
      queue.push([o, r, depth]);
    }
  };
  const visit = (rw: Rewrite, o: string, rel: string, depth: number): void => {
    switch (rw.k) {
      case 'this': {
        for (const b of buckets(o, rel)) {
          if (filter.relation === '') for (const u of b.users) if (typeOf(u) === filter.type) candidates.add(u);
          for (const ref of b.usersets.values()) enqueue(ref.object, ref.relation, depth + 1);
        }
        return;
      }
      case 'computed':
        enqueue(o, rw.relation, depth + 1);
        return;
      case 'ttu':
        for (const b of buckets(o, rw.tupleset)) for (const p of b.users) if (!p.endsWith(':*')) enqueue(p, rw.computed, depth + 1);
        return;
      case 'union':
      case 'intersection':
        for (const c of rw.children) visit(c, o, rel, depth);
        return;
      case 'difference':
        visit(rw.base, o, rel, depth);
    }
  };
  for (let i = 0; i < queue.length; i++) {
    const [o, rel, depth] = queue[i] as [string, string, number];
    const def = ts.relation(typeOfObject(o), rel);
    if (def) visit(def.rewrite, o, rel, depth);
  }
  const users: string[] = [];
  for (const candidate of [...candidates].sort()) {
    const ref = parseUser(candidate);
    if (!ref || !new Resolver(ts, index, ctx, ref, undefined, context).check(object, relation)) continue;
    if (users.length === LIST_CAP) return { users, truncated: true };
    users.push(candidate);
  }
  return { users, truncated: false };
}
