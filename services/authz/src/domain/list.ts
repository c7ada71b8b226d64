/** @module list: ListObjects (reverse expansion from the subject) and ListUsers (forward expansion), verified by Check. */
import { MAX_RESOLUTION_DEPTH, Resolver, ResolutionTooComplex, tupleHolds } from './check.ts';
import { ConditionError } from './condition.ts';
import type { Bucket, TupleIndex, TupleSource } from './tuple-index.ts';
import { EMPTY_BUCKET } from './tuple-index.ts';
import type { RelationDef, Rewrite, TypeSystem } from './type-system.ts';
import { parseUser, typeOf } from './object-ref.ts';

export { reachableFrom } from './reach.ts';

/** Result cap for list operations (behaviour.md §7.3, service-spec §8). */
export const LIST_CAP = 1000;

/** Step budget of the resolver that verifies list candidates (see MAX_RESOLUTION_STEPS). */
export const LIST_RESOLUTION_STEPS = 2_000_000;

/**
 * Whether `def` is granted by plain direct tuples only (`define blocked: [user]`, wildcards allowed): no
 * userset restriction, no condition, no computed or tuple-to-userset branch. Such a relation's tuples are
 * both what the reverse expansion reaches from a subject and what check reads, so membership in it is one
 * set lookup (used for the subtracted side of `but not`; the caller makes sure the model has no conditions).
 */
export function plainDirect(def: RelationDef | undefined): boolean {
  return def !== undefined && def.rewrite.k === 'this' && def.directTypes.every((d) => d.relation === '' && d.condition === '');
}

/**
 * Sorted (unless `sort` is false: then in the order reached), verified objects of one `type#relation` from
 * {@link reachableFrom}; depth errors count as not allowed. Candidates of relations without `and`/`but not`
 * are exact already. For `base but not subtract` whose base is exact, a reached base only needs the subtract
 * checked; when the subtract is {@link plainDirect} in a model without conditions, the reverse expansion
 * already holds the objects it excludes (those the subject, or its type's wildcard, has a tuple on), so no
 * check runs. With `limit` (only in a model without conditions, where a check cannot fail the call) the
 * sorted candidates are verified until `limit` pass.
 */
export function verifiedObjects(
  ts: TypeSystem,
  resolver: Resolver,
  found: Map<string, Set<string>>,
  type: string,
  relation: string,
  sort = true,
  limit = Infinity,
): string[] {
  const candidates = found.get(`${type}#${relation}`);
  if (!candidates) return [];
  const def = ts.relation(type, relation);
  const sorted = sort ? [...candidates].sort() : [...candidates];
  if (!def?.needsVerify) return sorted.length > limit ? sorted.slice(0, limit) : sorted;
  const r = def.rewrite;
  let keep: (object: string) => boolean = (object) => safeCheck(() => resolver.check(object, relation), false);
  if (r.k === 'difference' && r.base.k === 'computed' && r.subtract.k === 'computed' && ts.relation(type, r.base.relation)?.needsVerify === false) {
    const reached = found.get(`${type}#${r.base.relation}`);
    const subtract = r.subtract.relation;
    const excluded = ts.conditions.size === 0 && plainDirect(ts.relation(type, subtract)) ? (found.get(`${type}#${subtract}`) ?? new Set<string>()) : null;
    const check = keep;
    keep = (object) => (reached?.has(object)
      ? (excluded !== null ? !excluded.has(object) : !safeCheck(() => resolver.excludedBy(object, subtract), true))
      : check(object));
  }
  if (limit === Infinity) return sorted.filter(keep);
  const out: string[] = [];
  for (const object of sorted) {
    if (out.length >= limit) break;
    if (keep(object)) out.push(object);
  }
  return out;
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
 * Whether the type graph has an edge from the filter's users to `type#relation` as OpenFGA's
 * `GetPrunedRelationshipEdges` finds one (internal/graph, `resolveAnyEdge`): a direct type restriction naming
 * the filter (its wildcard too), a computed userset or tuple-to-userset naming the filter's `type#relation`,
 * followed through userset restrictions, computed usersets, tuplesets and every union child, but only the
 * first child of an intersection and the base of `but not`; each `type#relation` is visited once.
 */
function hasPossibleEdges(ts: TypeSystem, type: string, relation: string, filter: UserFilter, visited: Set<string>): boolean {
  const key = `${type}#${relation}`;
  if (visited.has(key)) return false;
  visited.add(key);
  const def = ts.relation(type, relation);
  if (!def) return false;
  const viaRewrite = (rw: Rewrite): boolean => {
    switch (rw.k) {
      case 'this':
        return def.directTypes.some((d) => (d.type === filter.type && d.relation === filter.relation && (!d.wildcard || filter.relation === ''))
          || (d.relation !== '' && hasPossibleEdges(ts, d.type, d.relation, filter, visited)));
      case 'computed':
        return (type === filter.type && rw.relation === filter.relation) || hasPossibleEdges(ts, type, rw.relation, filter, visited);
      case 'ttu':
        return (ts.relation(type, rw.tupleset)?.directTypes ?? []).some((d) => ts.relation(d.type, rw.computed) !== undefined
          && ((d.type === filter.type && rw.computed === filter.relation) || hasPossibleEdges(ts, d.type, rw.computed, filter, visited)));
      case 'union':
        return rw.children.map(viaRewrite).some(Boolean);
      case 'intersection':
        return rw.children.length > 0 && viaRewrite(rw.children[0] as Rewrite);
      case 'difference':
        return viaRewrite(rw.base);
    }
  };
  return viaRewrite(def.rewrite);
}

/**
 * ListUsers: the users matching `filter` related to `object` by `relation`: concrete `type:id` users (and
 * `type:*` when a wildcard grants access) or, for a userset filter, `type:id#relation` usersets; sorted,
 * capped at {@link LIST_CAP}. Contextual tuples (`ctx`) count as stored ones; conditions are evaluated in
 * `context`. A userset filter naming the queried type and relation lists the object's own userset too
 * (`group:g0#member` for `group:g0 member`), as OpenFGA does.
 *
 * The expansion reads what OpenFGA's ListUsers reads (pkg/server/commands/listusers: expandDirect, expandTTU,
 * expandExclusion) and fails as it does: every tuple of a direct relation or a tupleset it visits has its
 * condition evaluated, one whose condition is false is not followed, and one whose condition cannot be
 * evaluated (a missing parameter, a wrong type) fails the whole call even when another path grants the
 * user; both sides of `but not` are expanded (the subtracted side only for this). Nothing is expanded when
 * the type graph has no edge from the filter to the relation ({@link hasPossibleEdges}, OpenFGA's
 * `doesHavePossibleEdges`).
 * @throws ResolutionTooComplex when the expansion or a candidate's check passes the depth limit (as check);
 *   ConditionError when a condition on the way cannot be evaluated
 */
export function listUsers(
  ts: TypeSystem,
  index: TupleSource,
  object: string,
  relation: string,
  filter: UserFilter,
  ctx: TupleIndex | null = null,
  context: Record<string, unknown> | null = null,
): { users: string[]; truncated: boolean } {
  const candidates = new Set<string>();
  const typeOfObject = (o: string): string => index.node(o)?.type ?? ctx?.node(o)?.type ?? typeOf(o);
  // the queried object's own userset is a user of it when the filter names it (OpenFGA's expand sends it first)
  const own = filter.relation === relation && typeOfObject(object) === filter.type;
  if (own) candidates.add(`${object}#${relation}`);
  else if (!hasPossibleEdges(ts, typeOfObject(object), relation, filter, new Set())) return { users: [], truncated: false };
  // `base but not subtract` with an exact base and a plain direct subtract, in a model without conditions and
  // no contextual tuples: the base's users are exact, and a user is excluded exactly when the object's
  // subtract bucket names it or its type's wildcard (what check reads there), so no candidate needs a check
  const def = ts.relation(typeOfObject(object), relation);
  const r = def?.rewrite;
  const exclusion = !own && filter.relation === '' && ctx === null && ts.conditions.size === 0 && r?.k === 'difference' && r.base.k === 'computed'
    && r.subtract.k === 'computed' && ts.relation(typeOfObject(object), r.base.relation)?.needsVerify === false
    && plainDirect(ts.relation(typeOfObject(object), r.subtract.relation))
    ? { base: r.base.relation, bucket: index.bucket(object, r.subtract.relation), wildcards: ts.relation(typeOfObject(object), r.subtract.relation)!.wildcardTypes }
    : null;
  const start = exclusion?.base ?? relation;
  // nodes expanded for candidates, and nodes expanded only under a subtracted side (for their conditions)
  const seen = new Set<string>([`${object}#${start}`]);
  const seenSubtracted = new Set<string>();
  // every relation expanded is a union of direct grants, computed usersets and tuple-to-usersets: the
  // candidates are exactly the users (conditions were evaluated on the way); an intersection or an
  // exclusion met anywhere makes them a superset to verify by check
  let exact = true;
  // the base is one hop below the relation, as when the difference is visited
  const queue: Array<[string, string, number, boolean]> = [[object, start, exclusion === null ? 0 : 1, false]];
  let conditionError: ConditionError | null = null;
  const holds = (b: Bucket, o: string, r: string, user: string): boolean => {
    try {
      return tupleHolds(ts, b, o, r, user, context);
    } catch (err) {
      if (!(err instanceof ConditionError)) throw err;
      conditionError ??= err;
      return false;
    }
  };
  const buckets = (o: string, r: string): Bucket[] => {
    const b = index.bucket(o, r);
    const c = ctx?.bucket(o, r) ?? EMPTY_BUCKET;
    return c === EMPTY_BUCKET ? [b] : [b, c];
  };
  const enqueue = (o: string, r: string, depth: number, subtracted: boolean): void => {
    const key = `${o}#${r}`;
    if (!subtracted && filter.relation !== '' && r === filter.relation && typeOfObject(o) === filter.type) candidates.add(key);
    if (seen.has(key) || (subtracted && seenSubtracted.has(key)) || !ts.relation(typeOfObject(o), r)) return;
    if (depth >= MAX_RESOLUTION_DEPTH) throw new ResolutionTooComplex();
    (subtracted ? seenSubtracted : seen).add(key);
    queue.push([o, r, depth, subtracted]);
  };
  const visit = (rw: Rewrite, o: string, rel: string, depth: number, subtracted: boolean): void => {
    switch (rw.k) {
      case 'this': {
        for (const b of buckets(o, rel)) {
          for (const u of b.users) {
            if (b.conds !== undefined && !holds(b, o, rel, u)) continue;
            if (!subtracted && filter.relation === '' && typeOf(u) === filter.type) candidates.add(u);
          }
          for (const [key, ref] of b.usersets) if (b.conds === undefined || holds(b, o, rel, key)) enqueue(ref.object, ref.relation, depth + 1, subtracted);
        }
        return;
      }
      case 'computed':
        enqueue(o, rw.relation, depth + 1, subtracted);
        return;
      case 'ttu':
        for (const b of buckets(o, rw.tupleset)) {
          for (const p of b.users) if (!p.endsWith(':*') && (b.conds === undefined || holds(b, o, rw.tupleset, p))) enqueue(p, rw.computed, depth + 1, subtracted);
        }
        return;
      case 'union':
        for (const c of rw.children) visit(c, o, rel, depth, subtracted);
        return;
      case 'intersection':
        exact = false;
        for (const c of rw.children) visit(c, o, rel, depth, subtracted);
        return;
      case 'difference':
        exact = false;
        visit(rw.base, o, rel, depth, subtracted);
        visit(rw.subtract, o, rel, depth, true);
    }
  };
  for (let i = 0; i < queue.length; i++) {
    const [o, rel, depth, subtracted] = queue[i] as [string, string, number, boolean];
    const def = ts.relation(typeOfObject(o), rel);
    if (def) visit(def.rewrite, o, rel, depth, subtracted);
  }
  if (conditionError) throw conditionError;
  const users: string[] = [];
  for (const candidate of [...candidates].sort()) {
    // a wildcard counts only where the model still allows it (check's rule for a `type:*` tuple); a
    // userset candidate's membership follows check's userset rules
    const verify = !exact || filter.relation !== '' || candidate.endsWith(':*');
    if (exclusion !== null && !verify) {
      const type = typeOf(candidate);
      if (exclusion.bucket.users.has(candidate) || (exclusion.wildcards.has(type) && exclusion.bucket.users.has(`${type}:*`))) continue;
    } else if (verify) {
      const ref = parseUser(candidate);
      if (!ref || !new Resolver(ts, index, ctx, ref, undefined, context).check(object, relation)) continue;
    }
    if (users.length === LIST_CAP) return { users, truncated: true };
    users.push(candidate);
  }
  return { users, truncated: false };
}
