/** @module check: synchronous graph resolution of Check against the in-memory tuple index (OpenFGA Check semantics). */
import type { Bucket, ObjectNode, TupleIndex, TupleSource, UsersetRef } from './tuple-index.ts';
import { EMPTY_BUCKET } from './tuple-index.ts';
import type { RelationDef, Rewrite, TypeSystem } from './type-system.ts';
import type { UserRef } from './object-ref.ts';
import { typeOf } from './object-ref.ts';
import { ConditionError, type TupleCondition } from './condition.ts';
import { reachableFrom } from './reach.ts';

/** Resolution depth limit (behaviour.md §7.3; OpenFGA's resolve node limit): the 25th nested hop fails the call. */
export const MAX_RESOLUTION_DEPTH = 25;

/**
 * Node resolutions one resolver may perform (memo hits excluded) before it gives up with `resolution too complex`.
 * Resolution is synchronous, so this bounds how long one call can hold the event loop (about 100 ms).
 */
export const MAX_RESOLUTION_STEPS = 250_000;

/** Thrown inside resolution when the depth limit is exceeded; the engine maps it to `resolution too complex`. */
export class ResolutionTooComplex extends Error {
  constructor() {
    super('resolution too complex');
    this.name = 'ResolutionTooComplex';
  }
}

/**
 * Whether the tuple `object#relation@user` of bucket `b` holds in the request `context`: true without a
 * condition, false when its condition is not in the model, else the condition evaluated over the request
 * context and the tuple's own (OpenFGA EvaluateTupleCondition).
 * @throws ConditionError when the condition cannot be evaluated (a missing parameter, a wrong type, the cost limit)
 */
export function tupleHolds(ts: TypeSystem, b: Bucket, object: string, relation: string, user: string, context: Record<string, unknown> | null): boolean {
  const c: TupleCondition | undefined = b.conds?.get(user);
  if (c === undefined) return true;
  const compiled = ts.conditions.get(c.name);
  if (compiled === undefined) return false;
  return compiled.evaluate(`${object}#${relation}@${user}`, context, c.context);
}

/** An error that fails a resolution branch: the depth or step limit, or a condition that cannot be evaluated. */
export type ResolutionError = ResolutionTooComplex | ConditionError;

/** True for a {@link ResolutionError} (any other error is a bug and propagates at once). */
export function isResolutionError(err: unknown): err is ResolutionError {
  return err instanceof ResolutionTooComplex || err instanceof ConditionError;
}

/** Memo entry bits: bit 0 the answer, bit 1 "a cycle was cut below" (OpenFGA's CycleDetected), the rest the height. */
const ANSWER = 1;
const CYCLE = 2;
const HEIGHT_SHIFT = 2;

/**
 * Per-resolver state of one visited object: its index nodes, its type's relations and memoised results.
 * A visited object is a valid `type:id` (it came from a validated check or a stored tuple).
 */
export interface Visited {
  object: string;
  node: ObjectNode | undefined;
  ctxNode: ObjectNode | undefined;
  rels: Map<string, RelationDef> | undefined;
  /**
   * relation → `(height << 2) | cycle << 1 | answer`: the answer, whether a cycle was cut below it, and how
   * many hops below this node its resolution went (a reuse at depth d stands in for a fresh resolution only
   * when d + height stays under the limit)
   */
  memo: Map<string, number>;
  /** results that assumed an ancestor on the path is false (a cycle); valid while that ancestor's frame is open */
  prov?: Map<string, Provisional>;
}

interface Provisional {
  value: boolean;
  lowDepth: number;
  frame: number;
  /** whether its resolution cut a cycle that counts for `but not` (see {@link Resolver.selfRecursive}) */
  cycle: boolean;
}

const recursiveCache = new WeakMap<RelationDef, boolean>();

/** Whether `r` on `type` reaches its users in one hop: direct assignments of plain users or wildcards, through computed relations and unions only. */
function directOnly(ts: TypeSystem, type: string, r: Rewrite, depth: number): boolean {
  if (depth > 8) return false;
  switch (r.k) {
    case 'computed': {
      const target = ts.relation(type, r.relation);
      return target !== undefined && target.directTypes.every((d) => d.relation === '') && directOnly(ts, type, target.rewrite, depth + 1);
    }
    case 'union':
      return r.children.every((c) => directOnly(ts, type, c, depth + 1));
    case 'this':
      return true;
    case 'ttu':
    case 'intersection':
    case 'difference':
      return false;
  }
}

/**
 * Whether OpenFGA (v1.22) resolves `def` with its recursive check strategy: the relation names itself,
 * through its own userset (`define member: [user, group#member]`) or a tuple-to-userset over objects of
 * its own type (`define viewer: [user] or viewer from parent`, `parent: [folder]`), and every other operand
 * of its union reaches users in one hop (direct plain users or wildcards, also through computed relations:
 * `define inherited: viewer or inherited from parent` with `define viewer: [user]`). A relation whose other
 * operands reach usersets (`viewer: [user, group#member]`) is resolved by the default strategy, whose
 * cycle detection reports the cycle. Memoised per relation definition.
 */
export function recursiveStrategy(ts: TypeSystem, def: RelationDef): boolean {
  let known = recursiveCache.get(def);
  if (known !== undefined) return known;
  const operands = def.rewrite.k === 'union' ? def.rewrite.children : [def.rewrite];
  let recursive = false;
  let simple = true;
  for (const op of operands) {
    if (op.k === 'this') {
      for (const d of def.directTypes) {
        if (d.relation === '') continue;
        if (d.type === def.type && d.relation === def.name) recursive = true;
        else simple = false;
      }
    } else if (op.k === 'ttu' && op.computed === def.name && (ts.relation(def.type, op.tupleset)?.directTypes ?? []).every((d) => d.type === def.type && d.relation === '')) {
      recursive = true;
    } else if (!directOnly(ts, def.type, op, 0)) {
      simple = false;
    }
  }
  known = recursive && simple;
  recursiveCache.set(def, known);
  return known;
}

/**
 * Resolves checks for one subject against one index snapshot (plus optional contextual tuples).
 * Results are memoised per object and relation, so a batch of checks for one subject shares work.
 * A cycle on the current path evaluates to false; results that depended on a cut cycle are not memoised.
 * Everything is synchronous: no Promise per hop.
 */
export class Resolver {
  private readonly ts: TypeSystem;
  private readonly base: TupleSource;
  private readonly ctx: TupleIndex | null;
  private readonly subject: UserRef;
  /** the key of the subject this resolver answers for (`type:id` or `type:id#relation`) */
  readonly subjectKey: string;
  private readonly subjectObject: string;
  private readonly subjectTypeKey: string;
  private readonly wildcardKey: string;
  private readonly objects = new Map<string, Visited>();
  /**
   * The answers of top-level checks, relation → object → memo entry (as in {@link Visited.memo}), for
   * {@link answered}: a repeated check costs one lookup by object string instead of three (its node, the
   * node's memo, the relation), which matters because a warm batch is bound by memory latency. Resolution
   * itself keeps using the per-object memo, whose small maps sit next to their node.
   */
  private readonly answers = new Map<string, Map<string, number>>();
  private readonly pathObjects: string[] = [];
  private readonly pathRelations: string[] = [];
  private readonly pathFrames: number[] = [];
  private frames = 0;
  /** shallowest path depth a cycle cut reached in the current subtree (Tarjan's lowlink) */
  private low = Infinity;
  /** deepest path depth the current subtree reached */
  private reach = 0;
  /** whether the current subtree hit the depth limit (a caught overflow: its answer is not memoised) */
  private overflow = false;
  /** whether the current subtree cut a cycle (OpenFGA's CycleDetected: it makes a `but not` false) */
  private cycle = false;
  private steps = 0;
  private readonly maxSteps: number;
  /** the subject's reverse expansion (`type#relation` → objects), made at the first depth-limit hit */
  private reverse: Map<string, Set<string>> | undefined;
  /** the request's condition context (null: none was sent) */
  private readonly context: Record<string, unknown> | null;
  /**
   * When true, a condition that cannot be evaluated is read as false instead of failing the check: for list
   * objects of a concrete subject, whose reverse expansion has already failed the call on every condition
   * error on the subject's own paths (as OpenFGA's pipeline, which runs no check, does); an error the check of
   * a candidate then meets is on a tuple no path of the subject uses, which OpenFGA never reads.
   */
  conditionErrorsAsFalse = false;

  /**
   * @param context the request's condition context, merged under each conditioned tuple's own context
   */
  constructor(ts: TypeSystem, base: TupleSource, ctx: TupleIndex | null, subject: UserRef, maxSteps = MAX_RESOLUTION_STEPS, context: Record<string, unknown> | null = null) {
    this.maxSteps = maxSteps;
    this.context = context;
    this.ts = ts;
    this.base = base;
    this.ctx = ctx;
    this.subject = subject;
    this.subjectKey = subject.key;
    this.subjectObject = `${subject.type}:${subject.id}`;
    this.subjectTypeKey = subject.kind === 'userset' ? `${subject.type}#${subject.relation}` : subject.type;
    this.wildcardKey = subject.kind === 'object' ? `${subject.type}:*` : '';
  }

  /**
   * Whether the tuple `object#relation@user` of bucket `b` holds: true without a condition, else its
   * condition evaluated in this request's context.
   * @throws ConditionError
   */
  private holds(b: Bucket, object: string, relation: string, user: string): boolean {
    if (!this.conditionErrorsAsFalse) return tupleHolds(this.ts, b, object, relation, user, this.context);
    try {
      return tupleHolds(this.ts, b, object, relation, user, this.context);
    } catch (err) {
      if (err instanceof ConditionError) return false;
      throw err;
    }
  }

  /**
   * The node of `object` when this resolver has visited it, else undefined. A visited object is a
   * valid `type:id` (it came from a validated check or a stored tuple), and `rels` holds its type's
   * relations under this resolver's model (undefined when the model does not define the type).
   */
  visited(object: string): Visited | undefined {
    return this.objects.get(object);
  }

  /**
   * The remembered answer to a top-level check of `object#relation`, or undefined when there is none.
   * Only checks on visited objects with a relation their type defines are remembered, so an answer here
   * is that of a valid check. The strings are compared exactly: a padded one finds nothing. A memo entry
   * always stands in at depth 0: its height is below the depth limit, since a resolution that reached
   * the limit threw and was not memoised.
   */
  answered(object: string, relation: string): boolean | undefined {
    const e = this.answers.get(relation)?.get(object);
    return e === undefined ? undefined : (e & ANSWER) === 1;
  }

  /** {@link answer} for a node from {@link visited}, without looking the object up again. @throws ResolutionTooComplex */
  checkVisited(v: Visited, relation: string): boolean {
    const result = this.resolve(v, relation, 0);
    this.remember(v, relation);
    return result;
  }

  /** Copies the memo entry of a top-level check, when there is one, to {@link answers}. */
  private remember(v: Visited, relation: string): void {
    const e = v.memo.get(relation);
    if (e === undefined || v.rels?.get(relation) === undefined) return;
    let byObject = this.answers.get(relation);
    if (byObject === undefined) this.answers.set(relation, (byObject = new Map()));
    byObject.set(v.object, e);
  }

  /** Objects this resolver has visited (its memory footprint: one memo per object). */
  get visitedObjects(): number {
    return this.objects.size;
  }

  /** Starts one engine call on a reused resolver: a fresh step budget; memoised results stay. */
  beginCall(): void {
    this.steps = 0;
    this.low = Infinity;
    this.reach = 0;
    this.overflow = false;
    this.cycle = false;
  }

  /**
   * Is the subject related to `object` by `relation`?
   * @throws ResolutionTooComplex at {@link MAX_RESOLUTION_DEPTH} nested hops
   */
  check(object: string, relation: string, depth = 0): boolean {
    return this.resolve(this.visit(object), relation, depth);
  }

  /**
   * {@link check} of a top-level check_permissions check, whose answer {@link answered} then gives:
   * `relation` must be one the object's type defines (the caller validated the check).
   * @throws ResolutionTooComplex
   */
  answer(object: string, relation: string): boolean {
    return this.checkVisited(this.visit(object), relation);
  }

  /** The visited node of `object`, made on first use. */
  private visit(object: string): Visited {
    let v = this.objects.get(object);
    if (!v) {
      const node = this.base.node(object);
      const ctxNode = this.ctx?.node(object);
      const type = node ? node.type : ctxNode ? ctxNode.type : typeOf(object);
      v = { object, node, ctxNode, rels: this.ts.types.get(type), memo: new Map() };
      this.objects.set(object, v);
    }
    return v;
  }

  /** One `object#relation` node; computed usersets re-enter here with the same visited object. */
  private resolve(v: Visited, relation: string, depth: number): boolean {
    if (this.subject.kind === 'userset' && relation === this.subject.relation && v.object === this.subjectObject) return true;
    const known = v.memo.get(relation);
    if (known !== undefined && this.reusable(known, depth)) {
      if ((known & CYCLE) !== 0) this.cycle = true;
      return (known & ANSWER) === 1;
    }
    const def = v.rels?.get(relation);
    if (def === undefined || !def.terminals.has(this.subjectTypeKey)) {
      v.memo.set(relation, 0);
      return false;
    }
    // A result computed under a cycle cut stays valid while the ancestor it assumed false is still open.
    const p = v.prov?.get(relation);
    if (p !== undefined && p.lowDepth < depth && this.pathFrames[p.lowDepth] === p.frame) {
      if (p.lowDepth < this.low) this.low = p.lowDepth;
      if (p.cycle) this.cycle = true;
      return p.value;
    }
    for (let i = 0; i < depth; i++) {
      if (this.pathRelations[i] === relation && this.pathObjects[i] === v.object) {
        if (i < this.low) this.low = i;
        if (!this.selfRecursive(i, depth, relation, v)) this.cycle = true;
        return false;
      }
    }
    if (depth >= MAX_RESOLUTION_DEPTH) {
      if (!this.entersAny(def)) {
        v.memo.set(relation, 0);
        return false;
      }
      this.overflow = true;
      throw new ResolutionTooComplex();
    }
    if (++this.steps > this.maxSteps) {
      this.overflow = true;
      throw new ResolutionTooComplex();
    }
    const outerLow = this.low;
    const outerReach = this.reach;
    const outerOverflow = this.overflow;
    const outerCycle = this.cycle;
    this.low = Infinity;
    this.reach = depth;
    this.overflow = false;
    this.cycle = false;
    const frame = ++this.frames;
    this.pathObjects[depth] = v.object;
    this.pathRelations[depth] = relation;
    this.pathFrames[depth] = frame;
    let result: boolean;
    try {
      result = this.evaluate(def.rewrite, v, def, depth);
    } catch (err) {
      this.low = Math.min(outerLow, this.low);
      this.reach = Math.max(outerReach, this.reach);
      this.overflow = true;
      // a failed resolution answers no CycleDetected (OpenFGA returns an error, not a response)
      this.cycle = outerCycle;
      throw err;
    }
    const myLow = this.low;
    const myReach = this.reach;
    const myOverflow = this.overflow;
    const myCycle = this.cycle;
    if (myLow >= depth) {
      if (!myOverflow) v.memo.set(relation, ((myReach - depth) << HEIGHT_SHIFT) | (myCycle ? CYCLE : 0) | (result ? ANSWER : 0));
    } else {
      (v.prov ??= new Map()).set(relation, { value: result, lowDepth: myLow, frame: this.pathFrames[myLow] as number, cycle: myCycle });
    }
    this.low = Math.min(outerLow, myLow);
    this.reach = Math.max(outerReach, myReach);
    this.overflow = outerOverflow || myOverflow;
    this.cycle = outerCycle || myCycle;
    return result;
  }

  /**
   * Whether the cycle closed at path depth `from` (the node `object#relation` entered again at `to`) runs
   * through one relation resolved by OpenFGA's recursive check strategy ({@link recursiveStrategy}): every
   * node on it is `type#relation` of that one type and relation (g0 in g1 in g0; folders that are each
   * other's parent). That strategy walks the objects breadth-first with a visited set and reports no
   * CycleDetected, so the cut is a plain `false` and does not make an enclosing `but not` exclude; a cycle
   * through other relations, or through a relation OpenFGA resolves with its default strategy, still does.
   */
  private selfRecursive(from: number, to: number, relation: string, v: Visited): boolean {
    const def = v.rels?.get(relation);
    if (def === undefined || !recursiveStrategy(this.ts, def)) return false;
    for (let j = from + 1; j < to; j++) {
      if (this.pathRelations[j] !== relation || typeOf(this.pathObjects[j] as string) !== def.type) return false;
    }
    return true;
  }

  /**
   * Whether the subject's tuples reach any object's `def` relation at all (its reverse expansion, a superset
   * of its memberships, computed once per resolver and only at the depth limit). When they reach none, the
   * subject is in no object's `def` relation, so a node of it at the depth limit is exactly false and no
   * error: this is OpenFGA's recursive check resolver, which answers false at once when the subject enters
   * none of the objects it would walk (a user in no group of a 30-hop group chain), and fails with
   * `resolution too complex` only when the walk could still grant.
   */
  private entersAny(def: RelationDef): boolean {
    this.reverse ??= reachableFrom(this.ts, this.base, this.subject, this.ctx);
    return (this.reverse.get(`${def.type}#${def.name}`)?.size ?? 0) > 0;
  }

  /**
   * A memo entry stands in for resolving its node again at `depth` when that resolution would stay under
   * the depth limit (so it would have given the same answer without an error); it then counts as reaching
   * `depth + height`.
   */
  private reusable(entry: number, depth: number): boolean {
    const bottom = depth + (entry >> HEIGHT_SHIFT);
    if (bottom >= MAX_RESOLUTION_DEPTH) return false;
    if (bottom > this.reach) this.reach = bottom;
    return true;
  }

  /**
   * One rewrite of a node. A granting rewrite carries no cycle flag: OpenFGA's union returns its granting
   * branch's answer as it stands and only a `false` reports the cycles cut under it (CycleDetected), so a cycle
   * cut in a sibling that did not decide the answer must not make an enclosing `but not` exclude. Nor does a
   * failing rewrite: OpenFGA's reducers see its error and no metadata, so in `x but not (a and b)` where `a`
   * fails after cutting a cycle and `b` is false, the intersection is a plain false and `x` is granted.
   */
  private evaluate(r: Rewrite, v: Visited, def: RelationDef, depth: number): boolean {
    const before = this.cycle;
    let granted: boolean;
    try {
      granted = this.rewrite(r, v, def, depth);
    } catch (err) {
      // an operand that fails reports no cycle either: OpenFGA's reducers get an error, not a response, from
      // it, so the cycles cut inside it do not reach an enclosing `but not` (differential seed 120)
      this.cycle = before;
      throw err;
    }
    if (granted) {
      this.cycle = before;
      return true;
    }
    return false;
  }

  private rewrite(r: Rewrite, v: Visited, def: RelationDef, depth: number): boolean {
    switch (r.k) {
      case 'this':
        return this.direct(v.node?.rels.get(def.name) ?? EMPTY_BUCKET, v.ctxNode?.rels.get(def.name), def, v, depth);
      case 'computed':
        return this.resolve(v, r.relation, depth + 1);
      case 'ttu':
        return this.tupleToUserset(v.node?.rels.get(r.tupleset), v.ctxNode?.rels.get(r.tupleset), v, r.tupleset, r.computed, depth);
      case 'union': {
        if (this.knownTrue(r.children, v, depth)) return true;
        let error: ResolutionError | null = null;
        for (const child of r.children) {
          try {
            if (this.evaluate(child, v, def, depth)) return true;
          } catch (err) {
            if (!isResolutionError(err)) throw err;
            error = err;
          }
        }
        if (error) throw error;
        return false;
      }
      case 'intersection': {
        let error: ResolutionError | null = null;
        for (const child of r.children) {
          try {
            if (!this.evaluate(child, v, def, depth)) return false;
          } catch (err) {
            if (!isResolutionError(err)) throw err;
            error = err;
          }
        }
        if (error) throw error;
        return true;
      }
      case 'difference': {
        let base: boolean;
        try {
          base = this.evaluate(r.base, v, def, depth);
        } catch (err) {
          if (isResolutionError(err) && this.excludes(r.subtract, v, def, depth)) return false;
          throw err;
        }
        return base && !this.excludes(r.subtract, v, def, depth);
      }
    }
  }

  /**
   * Whether the subtracted side of a `but not` excludes the subject: it grants, or it is false because a
   * cycle was cut below it (OpenFGA's exclusion answers false when its subtract detected a cycle).
   */
  private excludes(subtract: Rewrite, v: Visited, def: RelationDef, depth: number): boolean {
    const outer = this.cycle;
    this.cycle = false;
    try {
      return this.evaluate(subtract, v, def, depth) || this.cycle;
    } finally {
      this.cycle = outer || this.cycle;
    }
  }

  /**
   * Whether the subject holds `relation` on `object` once the `but not` rule for cycles is applied: a
   * false answer that cut a cycle counts as an exclusion (list_objects' shortcut for `base but not
   * subtract` checks only the subtract).
   * @throws ResolutionError
   */
  excludedBy(object: string, relation: string): boolean {
    const outer = this.cycle;
    this.cycle = false;
    try {
      return this.check(object, relation) || this.cycle;
    } finally {
      this.cycle = outer;
    }
  }

  /**
   * Memo-first pass over a union: a computed or tuple-to-userset branch already resolved true in this
   * request (common in a batch: the organization membership behind many repositories) answers at once.
   * A tupleset tuple with a condition is left to {@link tupleToUserset}, which evaluates it.
   */
  private knownTrue(children: Rewrite[], v: Visited, depth: number): boolean {
    for (const child of children) {
      if (child.k === 'computed') {
        const e = v.memo.get(child.relation);
        if (e !== undefined && (e & ANSWER) === 1 && this.reusable(e, depth + 1)) return true;
      } else if (child.k === 'ttu') {
        const b = v.node?.rels.get(child.tupleset);
        if (!b) continue;
        for (const parent of b.users) {
          if (b.conds?.has(parent)) continue; // a conditioned parent is followed only once its condition is evaluated
          const e = this.objects.get(parent)?.memo.get(child.computed);
          if (e !== undefined && (e & ANSWER) === 1 && this.reusable(e, depth + 1)) return true;
        }
      }
    }
    return false;
  }

  private direct(b: Bucket, c: Bucket | undefined, def: RelationDef, v: Visited, depth: number): boolean {
    // conditioned tuples take their own path, so the common case pays one property test for them
    if (b.conds !== undefined || c?.conds !== undefined) return this.directConditioned(b, c, def, v, depth);
    const s = this.subject;
    if (s.kind === 'userset') {
      if (b.usersets.has(s.key) || c?.usersets.has(s.key)) return true;
    } else if (b.users.has(s.key) || c?.users.has(s.key)) {
      return true;
    } else if (this.wildcardKey !== '' && def.wildcardTypes.has(s.type) && (b.users.has(this.wildcardKey) || c?.users.has(this.wildcardKey))) {
      return true;
    }
    let r: ResolutionError | null | true = b.usersets.size === 0 ? null : this.viaUsersets(b.usersets.values(), depth, null);
    if (r !== true && c !== undefined && c.usersets.size > 0) r = this.viaUsersets(c.usersets.values(), depth, r);
    if (r === true) return true;
    if (r !== null) throw r;
    return false;
  }

  /**
   * Resolves each userset of `refs` one hop down: true at the first that grants, else the first
   * resolution error met (or `prior`), else null.
   */
  private viaUsersets(refs: Iterable<UsersetRef>, depth: number, prior: ResolutionError | null): ResolutionError | null | true {
    let error = prior;
    for (const ref of refs) {
      try {
        if (this.check(ref.object, ref.relation, depth + 1)) return true;
      } catch (err) {
        if (!isResolutionError(err)) throw err;
        error ??= err;
      }
    }
    return error;
  }

  /**
   * {@link direct} when a bucket holds conditioned tuples: such a tuple grants only when its condition
   * holds in this request's context. As OpenFGA's checkDirect, three reads are made, each failing on its own
   * terms: the subject's own tuple and the wildcard tuple fail when their condition cannot be evaluated; the
   * userset tuples are one read whose condition errors count only when none of its tuples is valid
   * (storage.ConditionsFilteredTupleKeyIterator: a read that yields a valid tuple drops them). An error is
   * thrown only when nothing grants.
   */
  private directConditioned(b: Bucket, c: Bucket | undefined, def: RelationDef, v: Visited, depth: number): boolean {
    const s = this.subject;
    const buckets = c === undefined ? [b] : [b, c];
    let error: ResolutionError | null = null;
    const direct = this.wildcardKey !== '' && def.wildcardTypes.has(s.type) ? [s.key, this.wildcardKey] : [s.key];
    for (const key of direct) {
      for (const bucket of buckets) {
        if (!(s.kind === 'userset' && key === s.key ? bucket.usersets.has(key) : bucket.users.has(key))) continue;
        try {
          if (this.holds(bucket, v.object, def.name, key)) return true;
        } catch (err) {
          if (!isResolutionError(err)) throw err;
          error ??= err;
        }
      }
    }
    const admitted: UsersetRef[] = [];
    let conditionError: ResolutionError | null = null;
    for (const set of buckets) {
      for (const [key, ref] of set.usersets) {
        try {
          if (this.holds(set, v.object, def.name, key)) admitted.push(ref);
        } catch (err) {
          if (!isResolutionError(err)) throw err;
          conditionError ??= err;
        }
      }
    }
    if (admitted.length === 0) error ??= conditionError;
    const r = this.viaUsersets(admitted, depth, error);
    if (r === true) return true;
    if (r !== null) throw r;
    return false;
  }

  /**
   * A tuple-to-userset: the subject's `computed` relation on each parent of the tupleset. The tupleset is one
   * read, as in OpenFGA's checkTTU: a parent whose condition is false or cannot be evaluated is not followed,
   * and the condition errors count only when no parent's tuple is valid (storage.ConditionsFilteredTupleKeyIterator);
   * an error resolving a followed parent counts unless another parent grants.
   */
  private tupleToUserset(b: Bucket | undefined, c: Bucket | undefined, v: Visited, tupleset: string, computed: string, depth: number): boolean {
    let error: ResolutionError | null = null;
    let conditionError: ResolutionError | null = null;
    let valid = false;
    for (let pass = 0; pass < 2; pass++) {
      const set = pass === 0 ? b : c;
      if (!set) continue;
      for (const parent of set.users) {
        if (parent.endsWith(':*')) continue;
        try {
          if (set.conds !== undefined && !this.holds(set, v.object, tupleset, parent)) continue;
        } catch (err) {
          if (!isResolutionError(err)) throw err;
          conditionError ??= err;
          continue;
        }
        valid = true;
        try {
          if (this.check(parent, computed, depth + 1)) return true;
        } catch (err) {
          if (!isResolutionError(err)) throw err;
          error = err;
        }
      }
    }
    if (error) throw error;
    if (!valid && conditionError) throw conditionError;
    return false;
  }
}

/**
 * Resolvers reused across calls, one per subject, for as long as the snapshot they read is unchanged.
 * A resolver's memo holds `object#relation` answers for its subject; they stay exact until the tuples or
 * the model change, which replaces the snapshot or moves its revision, and then every resolver is
 * dropped. So the second time a subject asks about an object, the answer is a Map lookup: the engine
 * "caches what it can and stays correct" (issue 3; OpenFGA keeps a check cache for the same reason,
 * ours is keyed on the snapshot revision instead of a TTL). A memoised answer carries the height of its
 * resolution and is reused only where resolving afresh would stay under the depth limit, so an answer, or
 * a `resolution too complex` error, does not depend on what was asked before.
 *
 * Subjects that no tuple names share one resolver per type. Resolution tells an object subject apart
 * from another only where a bucket holds its `type:id` exactly (a wildcard `type:*` serves every subject
 * of the type alike), so for a subject in no tuple every answer, error and resolution height is that of
 * any other such subject of its type: a new user's first checks are answered from what earlier such
 * users asked. Userset subjects are never shared (a userset always includes itself).
 * Bounded: `maxSubjects` resolvers (least recently used dropped), each dropped once it has visited
 * `maxObjects` objects; a shared one, which serves every new subject, once it has visited `maxSharedObjects`.
 */
export class ResolverCache {
  private snapshot: object | null = null;
  private revision = -1;
  private readonly bySubject = new Map<string, Resolver>();
  /** subject type → the resolver its subjects in no tuple share */
  private readonly shared = new Map<string, Resolver>();
  private readonly maxSubjects: number;
  private readonly maxObjects: number;
  private readonly maxSharedObjects: number;

  constructor(options: { maxSubjects?: number; maxObjects?: number; maxSharedObjects?: number } = {}) {
    this.maxSubjects = options.maxSubjects ?? 1024;
    this.maxObjects = options.maxObjects ?? 20_000;
    this.maxSharedObjects = options.maxSharedObjects ?? 200_000;
  }

  /**
   * The resolver of `subject` over `snapshot` at `revision` (no contextual tuples), ready for one call.
   * For an object subject that no tuple of `index` names, it is the resolver its type's such subjects share.
   * @param snapshot identity of the snapshot object: a reload replaces it, a patch moves `revision`
   */
  get(snapshot: object, revision: number, ts: TypeSystem, index: TupleIndex, subject: UserRef): Resolver {
    if (snapshot !== this.snapshot || revision !== this.revision) {
      this.bySubject.clear();
      this.shared.clear();
      this.snapshot = snapshot;
      this.revision = revision;
    }
    let r: Resolver | undefined;
    if (subject.kind === 'object' && index.byUser(subject.key) === undefined) {
      r = this.shared.get(subject.type);
      if (r === undefined || r.visitedObjects > this.maxSharedObjects) {
        // the stand-in subject's id (a NUL) is one no tuple can hold: ids refuse control characters (object-ref)
        r = new Resolver(ts, index, null, Object.freeze({ kind: 'object', type: subject.type, id: '\u0000', relation: '', key: `${subject.type}:\u0000` }));
        this.shared.set(subject.type, r);
      }
    } else {
      r = this.bySubject.get(subject.key);
      if (r !== undefined) this.bySubject.delete(subject.key);
      if (r === undefined || r.visitedObjects > this.maxObjects) r = new Resolver(ts, index, null, subject);
      this.bySubject.set(subject.key, r);
      if (this.bySubject.size > this.maxSubjects) this.bySubject.delete(this.bySubject.keys().next().value!);
    }
    r.beginCall();
    return r;
  }

  /** Drops `resolver` (after a call that failed midway). */
  drop(resolver: Resolver): void {
    if (this.bySubject.get(resolver.subjectKey) === resolver) this.bySubject.delete(resolver.subjectKey);
    for (const [type, r] of this.shared) if (r === resolver) this.shared.delete(type);
  }
}
