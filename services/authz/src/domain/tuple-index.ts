/** @module tuple-index: in-memory forward and reverse indexes over relationship tuples, the engine's fast path. */
import type { TupleCondition } from './condition.ts';

/** A userset user `type:id#relation`, split once at insert time. */
export interface UsersetRef {
  object: string;
  relation: string;
}

/** The tuples of one `object#relation`: concrete/wildcard users and userset users, kept apart. */
export interface Bucket {
  /** `type:id` and `type:*` users */
  users: Set<string>;
  /** `type:id#relation` users, keyed by that text */
  usersets: Map<string, UsersetRef>;
  /** user → the condition its tuple carries; absent while no tuple of the bucket has one (the common case) */
  conds?: Map<string, TupleCondition>;
}

/** Everything indexed about one object: its type (split once) and its relations. */
export interface ObjectNode {
  type: string;
  rels: Map<string, Bucket>;
}

const EMPTY: Bucket = Object.freeze({ users: new Set<string>(), usersets: new Map<string, UsersetRef>() }) as Bucket;

/**
 * Forward index `object → relation → users` (check, expand, list users) and reverse index
 * `user → relation → objects` (list objects). Lookups use strings already held by the index or the
 * model (their hashes are cached), so a graph hop costs two Map lookups and no allocation.
 */
export class TupleIndex {
  private readonly fwd = new Map<string, ObjectNode>();
  private readonly rev = new Map<string, Map<string, Set<string>>>();
  private count = 0;

  /** number of tuples held */
  get size(): number {
    return this.count;
  }

  /**
   * Adds a tuple; returns false when it was already present.
   * @param objectType the type part of `object`
   * @param userset the parsed user when it is a userset `type:id#relation`, else null
   * @param condition the tuple's condition, if any
   */
  add(object: string, objectType: string, relation: string, user: string, userset: UsersetRef | null, condition: TupleCondition | null = null): boolean {
    let node = this.fwd.get(object);
    if (!node) {
      node = { type: objectType, rels: new Map() };
      this.fwd.set(object, node);
    }
    let b = node.rels.get(relation);
    if (!b) {
      b = { users: new Set(), usersets: new Map() };
      node.rels.set(relation, b);
    }
    if (userset) {
      if (b.usersets.has(user)) return false;
      b.usersets.set(user, userset);
    } else {
      if (b.users.has(user)) return false;
      b.users.add(user);
    }
    if (condition !== null) (b.conds ??= new Map()).set(user, condition);
    let byRel = this.rev.get(user);
    if (!byRel) {
      byRel = new Map();
      this.rev.set(user, byRel);
    }
    let objs = byRel.get(relation);
    if (!objs) {
      objs = new Set();
      byRel.set(relation, objs);
    }
    objs.add(object);
    this.count++;
    return true;
  }

  /** Removes a tuple; returns false when it was absent. */
  remove(object: string, relation: string, user: string): boolean {
    const node = this.fwd.get(object);
    const b = node?.rels.get(relation);
    if (!node || !b || !(b.users.delete(user) || b.usersets.delete(user))) return false;
    b.conds?.delete(user);
    if (b.users.size === 0 && b.usersets.size === 0) node.rels.delete(relation);
    if (node.rels.size === 0) this.fwd.delete(object);
    const byRel = this.rev.get(user);
    const objs = byRel?.get(relation);
    objs?.delete(object);
    if (objs && objs.size === 0) byRel?.delete(relation);
    if (byRel && byRel.size === 0) this.rev.delete(user);
    this.count--;
    return true;
  }

  /** The indexed object, or undefined when no tuple names it as object. */
  node(object: string): ObjectNode | undefined {
    return this.fwd.get(object);
  }

  /** The users of `object#relation` (an empty bucket when there are none). */
  bucket(object: string, relation: string): Bucket {
    return this.fwd.get(object)?.rels.get(relation) ?? EMPTY;
  }

  /** relation → objects for tuples whose user is exactly `user`. */
  byUser(user: string): ReadonlyMap<string, Set<string>> | undefined {
    return this.rev.get(user);
  }
}

/** An empty bucket, shared. */
export const EMPTY_BUCKET = EMPTY;
