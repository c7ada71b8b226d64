/**
 * @module tuple-index: in-memory forward and reverse indexes over relationship tuples, the engine's fast path.
 *
 * Compact representation (issue 22 §3): every object and user string is interned once and named by a small
 * integer id; relation names and object types by a second, small table. A bucket (`object#relation`) and a
 * reverse entry (`user#relation`) hold ids, not strings: one id inline while there is one, then a packed
 * integer array, then a `Set` of ids past {@link SET_FROM} entries (so adding stays O(1) on wide buckets).
 * An id is released when no tuple names its string any longer. The read API hands out read-only views
 * over that storage (`Bucket`, `ObjectNode`, `byUser`), the same shapes the Map/Set index had.
 */
import type { TupleCondition } from './condition.ts';

/** A userset user `type:id#relation`, split once at insert time. */
export interface UsersetRef {
  object: string;
  relation: string;
}

/** The tuples of one `object#relation`: concrete/wildcard users and userset users, kept apart. Read-only. */
export interface Bucket {
  /** `type:id` and `type:*` users, in insertion order */
  readonly users: ReadonlySet<string>;
  /** `type:id#relation` users, keyed by that text, in insertion order */
  readonly usersets: ReadonlyMap<string, UsersetRef>;
  /** user → the condition its tuple carries; absent while no tuple of the bucket has one (the common case) */
  readonly conds?: ReadonlyMap<string, TupleCondition>;
}

/** Everything indexed about one object: its type and its relations' buckets. */
export interface ObjectNode {
  readonly type: string;
  readonly rels: { get(relation: string): Bucket | undefined };
}

/** relation → objects, for the tuples whose user is one given string. */
export interface UserRelations extends Iterable<[string, Iterable<string>]> {
  get(relation: string): Iterable<string> | undefined;
}

/**
 * What check resolution and the reverse expansion read from an index: an object's node and a user's
 * reverse relations. A {@link TupleIndex} is one; the engine's partial index (filled on demand while a
 * full load runs, see partial.ts) is another.
 */
export interface TupleSource {
  /** The indexed object, or undefined when no tuple names it as object. */
  node(object: string): ObjectNode | undefined;
  /** relation → objects for tuples whose user is exactly `user`, or undefined when it is in none. */
  byUser(user: string): UserRelations | undefined;
  /** The users of `object#relation` (the shared {@link EMPTY_BUCKET} when there are none). */
  bucket(object: string, relation: string): Bucket;
}

/** A list of ids: absent, one id inline, a packed array, or a Set once it grows past {@link SET_FROM}. */
type IdList = number | number[] | Set<number> | undefined;

/** Entries from which a list turns into a Set (linear scans below, hashing above). */
const SET_FROM = 16;

function listSize(l: IdList): number {
  return l === undefined ? 0 : typeof l === 'number' ? 1 : Array.isArray(l) ? l.length : l.size;
}

function listHas(l: IdList, id: number): boolean {
  if (l === undefined) return false;
  if (typeof l === 'number') return l === id;
  return Array.isArray(l) ? l.includes(id) : l.has(id);
}

/** The list with `id` appended (the caller checked it is absent). */
function listAdd(l: IdList, id: number): IdList {
  if (l === undefined) return id;
  if (typeof l === 'number') return [l, id];
  if (Array.isArray(l)) {
    // a copy of the exact length (concat): push() or a spread leave room for about 1.5× as many plus 16
    if (l.length < SET_FROM) return l.concat(id);
    const set = new Set(l);
    set.add(id);
    return set;
  }
  l.add(id);
  return l;
}

/** The list without `id` (order of the others kept), or undefined when it is left empty. */
function listRemove(l: IdList, id: number): IdList {
  if (l === undefined || typeof l === 'number') return l === id ? undefined : l;
  if (Array.isArray(l)) {
    const at = l.indexOf(id);
    if (at >= 0) l.splice(at, 1);
    return l.length === 0 ? undefined : l.length === 1 ? l[0] : l;
  }
  l.delete(id);
  return l.size === 0 ? undefined : l;
}

function* listIds(l: IdList): Generator<number> {
  if (l === undefined) return;
  if (typeof l === 'number') yield l;
  else yield* l;
}

/** Object/user strings ↔ ids, with a count of the tuples naming each, so unused ids are recycled. */
class StringTable {
  private readonly ids = new Map<string, number>();
  readonly strs: Array<string | undefined> = [];
  private readonly refs: number[] = [];
  private readonly free: number[] = [];

  /** The id of `s`, or -1 when no tuple names it. */
  find(s: string): number {
    return this.ids.get(s) ?? -1;
  }

  /**
   * The id of `s` with one more reference, allocating it on first use.
   * @param known `find(s)` when the caller has just looked it up (−1 for absent): saves a second hash lookup
   */
  acquire(s: string, known: number = this.find(s)): number {
    let id = known;
    if (id < 0) {
      id = this.free.pop() ?? this.strs.length;
      this.ids.set(s, id);
      this.strs[id] = s;
      this.refs[id] = 0;
    }
    this.refs[id]!++;
    return id;
  }

  /** Drops one reference to `id`; at none the id is released for reuse. */
  release(id: number): void {
    if (--this.refs[id]! > 0) return;
    this.ids.delete(this.strs[id]!);
    this.strs[id] = undefined;
    this.free.push(id);
  }

  str(id: number): string {
    return this.strs[id]!;
  }
}

/** Small, never-released table of relation names and object types (bounded by the models seen). */
class NameTable {
  private readonly ids = new Map<string, number>();
  readonly names: string[] = [];

  find(s: string): number {
    return this.ids.get(s) ?? -1;
  }

  /** The id of `s`; the stored string is the table's own copy, shared by every node. */
  id(s: string): number {
    let id = this.ids.get(s);
    if (id === undefined) {
      id = this.names.length;
      this.ids.set(s, id);
      this.names.push(s);
    }
    return id;
  }
}

/** One `object#relation` bucket's storage: user ids, userset-user ids and (rarely) conditions by user id. */
class BucketData implements Bucket {
  u: IdList = undefined;
  s: IdList = undefined;
  c: Map<number, TupleCondition> | undefined = undefined;
  private readonly index: TupleIndex;
  constructor(index: TupleIndex) {
    this.index = index;
  }

  get users(): ReadonlySet<string> {
    return new IdSetView(this.index, this.u);
  }

  get usersets(): ReadonlyMap<string, UsersetRef> {
    return new UsersetView(this.index, this.s);
  }

  get conds(): ReadonlyMap<string, TupleCondition> | undefined {
    return this.c === undefined ? undefined : new CondView(this.index, this.c);
  }
}

/**
 * The relations of one object (forward) or one user (reverse): parallel arrays of relation ids and their
 * entries, which are few per node (a type's relations), so a lookup is a short scan.
 */
class RelNode<T> {
  relIds: number[] = [];
  entries: T[] = [];

  at(rel: number): T | undefined {
    const i = this.relIds.indexOf(rel);
    return i < 0 ? undefined : this.entries[i];
  }

  put(rel: number, entry: T): void {
    this.relIds = this.relIds.concat(rel);
    this.entries = this.entries.concat([entry]);
  }

  drop(rel: number): void {
    const i = this.relIds.indexOf(rel);
    if (i < 0) return;
    this.relIds.splice(i, 1);
    this.entries.splice(i, 1);
  }
}

/** An object's forward node: its type id and a bucket per relation. */
class ForwardNode extends RelNode<BucketData> implements ObjectNode {
  private readonly index: TupleIndex;
  readonly typeId: number;
  constructor(index: TupleIndex, typeId: number) {
    super();
    this.index = index;
    this.typeId = typeId;
  }

  get type(): string {
    return this.index.names.names[this.typeId]!;
  }

  get rels(): { get(relation: string): Bucket | undefined } {
    return this;
  }

  get(relation: string): Bucket | undefined {
    const rel = this.index.names.find(relation);
    return rel < 0 ? undefined : this.at(rel);
  }
}

/** A user's reverse node: the objects it is related to, per relation. */
class ReverseNode extends RelNode<IdList> {}

/** The id list `l` as a read-only Set of strings. */
class IdSetView implements ReadonlySet<string> {
  private readonly index: TupleIndex;
  private readonly l: IdList;
  constructor(index: TupleIndex, l: IdList) {
    this.index = index;
    this.l = l;
  }

  get size(): number {
    return listSize(this.l);
  }

  has(value: string): boolean {
    const id = this.index.strings.find(value);
    return id >= 0 && listHas(this.l, id);
  }

  *values(): SetIterator<string> {
    for (const id of listIds(this.l)) yield this.index.strings.str(id);
  }

  keys(): SetIterator<string> {
    return this.values();
  }

  *entries(): SetIterator<[string, string]> {
    for (const v of this.values()) yield [v, v];
  }

  forEach(fn: (value: string, key: string, set: ReadonlySet<string>) => void): void {
    for (const v of this.values()) fn(v, v, this);
  }

  [Symbol.iterator](): SetIterator<string> {
    return this.values();
  }
}

/** Shared read-only Map behaviour over ids: subclasses say how an id maps to its value. */
abstract class IdMapView<V> implements ReadonlyMap<string, V> {
  protected readonly index: TupleIndex;
  constructor(index: TupleIndex) {
    this.index = index;
  }
  abstract get size(): number;
  protected abstract ids(): Iterable<number>;
  protected abstract valueOf(id: number): V | undefined;

  has(key: string): boolean {
    return this.get(key) !== undefined;
  }

  get(key: string): V | undefined {
    const id = this.index.strings.find(key);
    return id < 0 ? undefined : this.valueOf(id);
  }

  *entries(): MapIterator<[string, V]> {
    for (const id of this.ids()) yield [this.index.strings.str(id), this.valueOf(id)!];
  }

  *keys(): MapIterator<string> {
    for (const id of this.ids()) yield this.index.strings.str(id);
  }

  *values(): MapIterator<V> {
    for (const id of this.ids()) yield this.valueOf(id)!;
  }

  forEach(fn: (value: V, key: string, map: ReadonlyMap<string, V>) => void): void {
    for (const [k, v] of this.entries()) fn(v, k, this);
  }

  [Symbol.iterator](): MapIterator<[string, V]> {
    return this.entries();
  }
}

/** A bucket's userset users as `text → {object, relation}`. */
class UsersetView extends IdMapView<UsersetRef> {
  private readonly l: IdList;
  constructor(index: TupleIndex, l: IdList) {
    super(index);
    this.l = l;
  }

  get size(): number {
    return listSize(this.l);
  }

  protected ids(): Iterable<number> {
    return listIds(this.l);
  }

  protected valueOf(id: number): UsersetRef | undefined {
    return listHas(this.l, id) ? this.index.usersetRef(id) : undefined;
  }
}

/** A bucket's conditions by user text. */
class CondView extends IdMapView<TupleCondition> {
  private readonly c: Map<number, TupleCondition>;
  constructor(index: TupleIndex, c: Map<number, TupleCondition>) {
    super(index);
    this.c = c;
  }

  get size(): number {
    return this.c.size;
  }

  protected ids(): Iterable<number> {
    return this.c.keys();
  }

  protected valueOf(id: number): TupleCondition | undefined {
    return this.c.get(id);
  }
}

/** A user's reverse node as `relation → objects`. */
class UserRelationsView implements UserRelations {
  private readonly index: TupleIndex;
  private readonly node: ReverseNode;
  constructor(index: TupleIndex, node: ReverseNode) {
    this.index = index;
    this.node = node;
  }

  get(relation: string): Iterable<string> | undefined {
    const rel = this.index.names.find(relation);
    const l = rel < 0 ? undefined : this.node.at(rel);
    return l === undefined ? undefined : new IdSetView(this.index, l);
  }

  *[Symbol.iterator](): Iterator<[string, Iterable<string>]> {
    const { relIds, entries } = this.node;
    for (let i = 0; i < relIds.length; i++) yield [this.index.names.names[relIds[i]!]!, new IdSetView(this.index, entries[i])];
  }
}

const EMPTY: Bucket = Object.freeze({ users: new Set<string>(), usersets: new Map<string, UsersetRef>() });

/**
 * Forward index `object → relation → users` (check, expand, list users) and reverse index
 * `user → relation → objects` (list objects), over interned ids. A lookup by string costs one Map lookup
 * for its id (the string's hash is cached) and a short scan; iteration allocates no strings.
 */
export class TupleIndex implements TupleSource {
  /** @internal object and user strings */
  readonly strings = new StringTable();
  /** @internal relation names and object types */
  readonly names = new NameTable();
  private readonly fwd: Array<ForwardNode | undefined> = [];
  private readonly rev: Array<ReverseNode | undefined> = [];
  /** user id → its split form, for userset users */
  private readonly usersets: Array<UsersetRef | undefined> = [];
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
    const rel = this.names.id(relation);
    const oid = this.strings.find(object);
    const uid = this.strings.find(user);
    let b = oid < 0 ? undefined : this.fwd[oid]?.at(rel);
    if (b !== undefined && uid >= 0 && listHas(userset ? b.s : b.u, uid)) return false;
    const o = this.strings.acquire(object, oid);
    const u = this.strings.acquire(user, object === user ? o : uid);
    let node = this.fwd[o];
    if (node === undefined) this.fwd[o] = node = new ForwardNode(this, this.names.id(objectType));
    if (b === undefined) node.put(rel, (b = new BucketData(this)));
    if (userset) {
      b.s = listAdd(b.s, u);
      if (this.usersets[u] === undefined) this.usersets[u] = { object: userset.object, relation: this.names.names[this.names.id(userset.relation)]! };
    } else {
      b.u = listAdd(b.u, u);
    }
    if (condition !== null) (b.c ??= new Map()).set(u, condition);
    let r = this.rev[u];
    if (r === undefined) this.rev[u] = r = new ReverseNode();
    const objs = r.at(rel);
    if (objs === undefined) r.put(rel, o);
    else r.entries[r.relIds.indexOf(rel)] = listAdd(objs, o);
    this.count++;
    return true;
  }

  /** Removes a tuple; returns false when it was absent. */
  remove(object: string, relation: string, user: string): boolean {
    const o = this.strings.find(object);
    const u = this.strings.find(user);
    const rel = this.names.find(relation);
    if (o < 0 || u < 0 || rel < 0) return false;
    const node = this.fwd[o];
    const b = node?.at(rel);
    if (node === undefined || b === undefined) return false;
    if (listHas(b.u, u)) b.u = listRemove(b.u, u);
    else if (listHas(b.s, u)) b.s = listRemove(b.s, u);
    else return false;
    if (b.c !== undefined) {
      b.c.delete(u);
      if (b.c.size === 0) b.c = undefined;
    }
    if (b.u === undefined && b.s === undefined) node.drop(rel);
    if (node.relIds.length === 0) this.fwd[o] = undefined;
    const r = this.rev[u]!;
    const at = r.relIds.indexOf(rel);
    const left = listRemove(r.entries[at], o);
    if (left === undefined) r.drop(rel);
    else r.entries[at] = left;
    if (r.relIds.length === 0) this.rev[u] = undefined;
    this.strings.release(o);
    this.releaseUser(u);
    this.count--;
    return true;
  }

  private releaseUser(u: number): void {
    this.strings.release(u);
    if (this.strings.strs[u] === undefined) this.usersets[u] = undefined;
  }

  /** The indexed object, or undefined when no tuple names it as object. */
  node(object: string): ObjectNode | undefined {
    const id = this.strings.find(object);
    return id < 0 ? undefined : this.fwd[id];
  }

  /** The users of `object#relation` (the shared {@link EMPTY_BUCKET} when there are none). */
  bucket(object: string, relation: string): Bucket {
    const id = this.strings.find(object);
    const rel = this.names.find(relation);
    return (id < 0 || rel < 0 ? undefined : this.fwd[id]?.at(rel)) ?? EMPTY;
  }

  /** relation → objects for tuples whose user is exactly `user`, or undefined when it is in none. */
  byUser(user: string): UserRelations | undefined {
    const id = this.strings.find(user);
    const node = id < 0 ? undefined : this.rev[id];
    return node === undefined ? undefined : new UserRelationsView(this, node);
  }

  /** @internal the split form of userset user `id` */
  usersetRef(id: number): UsersetRef | undefined {
    return this.usersets[id];
  }
}

/** An empty bucket, shared. */
export const EMPTY_BUCKET = EMPTY;
