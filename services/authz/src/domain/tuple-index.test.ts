import { describe, expect, it } from '@jest/globals';
import type { TupleCondition } from './condition.ts';
import { EMPTY_BUCKET, TupleIndex } from './tuple-index.ts';
import { prng } from '../../bench/github-dataset.ts';

/**
 * The reference: the plain Map/Set index the compact one replaced (issue 22 §3), kept here to compare
 * every read of the compact index against it after random adds and removes.
 */
class Reference {
  readonly fwd = new Map<string, { type: string; rels: Map<string, { users: Set<string>; usersets: Map<string, { object: string; relation: string }>; conds: Map<string, TupleCondition> }> }>();
  readonly rev = new Map<string, Map<string, Set<string>>>();
  size = 0;

  add(object: string, type: string, relation: string, user: string, cond: TupleCondition | null): boolean {
    let node = this.fwd.get(object);
    if (!node) this.fwd.set(object, (node = { type, rels: new Map() }));
    let b = node.rels.get(relation);
    if (!b) node.rels.set(relation, (b = { users: new Set(), usersets: new Map(), conds: new Map() }));
    const hash = user.indexOf('#');
    if (b.users.has(user) || b.usersets.has(user)) return false;
    if (hash >= 0) b.usersets.set(user, { object: user.slice(0, hash), relation: user.slice(hash + 1) });
    else b.users.add(user);
    if (cond) b.conds.set(user, cond);
    let byRel = this.rev.get(user);
    if (!byRel) this.rev.set(user, (byRel = new Map()));
    let objs = byRel.get(relation);
    if (!objs) byRel.set(relation, (objs = new Set()));
    objs.add(object);
    this.size++;
    return true;
  }

  remove(object: string, relation: string, user: string): boolean {
    const node = this.fwd.get(object);
    const b = node?.rels.get(relation);
    if (!node || !b || !(b.users.delete(user) || b.usersets.delete(user))) return false;
    b.conds.delete(user);
    if (b.users.size === 0 && b.usersets.size === 0) node.rels.delete(relation);
    if (node.rels.size === 0) this.fwd.delete(object);
    const byRel = this.rev.get(user)!;
    byRel.get(relation)!.delete(object);
    if (byRel.get(relation)!.size === 0) byRel.delete(relation);
    if (byRel.size === 0) this.rev.delete(user);
    this.size--;
    return true;
  }
}

const RELATIONS = ['viewer', 'editor', 'member', 'parent'];
const COND: TupleCondition = { name: 'in_range', context: { x: 1 } };

function randomTuple(rnd: () => number, wide: boolean): { object: string; type: string; relation: string; user: string; cond: TupleCondition | null } {
  const pick = (n: number): number => Math.floor(rnd() * n);
  // a few wide buckets (past the array-to-Set switch) and many narrow ones
  const type = pick(2) === 0 ? 'doc' : 'folder';
  const object = wide ? `${type}:hot${pick(2)}` : `${type}:${pick(40)}`;
  const relation = RELATIONS[pick(RELATIONS.length)]!;
  const kind = pick(10);
  const user = kind < 6 ? `user:${pick(wide ? 200 : 30)}` : kind < 7 ? 'user:*' : kind < 9 ? `group:${pick(10)}#member` : `folder:${pick(40)}`;
  return { object, type, relation, user, cond: pick(8) === 0 ? COND : null };
}

/** Every read of the compact index, gathered in one plain value (one comparison, not thousands). */
function readIndex(index: TupleIndex, probes: { objects: string[]; users: string[] }): unknown {
  const out: unknown[] = [index.size];
  for (const object of probes.objects) {
    const node = index.node(object);
    out.push(object, node?.type);
    for (const relation of [...RELATIONS, 'nothing']) {
      const b = index.bucket(object, relation);
      if (node?.rels.get(relation) === undefined) {
        out.push(b === EMPTY_BUCKET);
        continue;
      }
      out.push([...b.users], b.users.size, [...b.usersets], [...b.usersets.keys()], [...b.usersets.values()], b.usersets.size, b.conds && [...b.conds]);
      out.push(probes.users.map((u) => [b.users.has(u), b.usersets.has(u), b.usersets.get(u), b.conds?.get(u)]));
    }
  }
  for (const user of probes.users) {
    const got = index.byUser(user);
    out.push(user, got && [...got].map(([r, objs]) => [r, [...objs]]));
    out.push([...RELATIONS, 'nothing'].map((r) => { const objs = got?.get(r); return objs && [...objs]; }));
  }
  return out;
}

/** The same reads answered by the reference. */
function readReference(ref: Reference, probes: { objects: string[]; users: string[] }): unknown {
  const out: unknown[] = [ref.size];
  for (const object of probes.objects) {
    const want = ref.fwd.get(object);
    out.push(object, want?.type);
    for (const relation of [...RELATIONS, 'nothing']) {
      const w = want?.rels.get(relation);
      if (!w) {
        out.push(true);
        continue;
      }
      out.push([...w.users], w.users.size, [...w.usersets], [...w.usersets.keys()], [...w.usersets.values()], w.usersets.size, w.conds.size === 0 ? undefined : [...w.conds]);
      out.push(probes.users.map((u) => [w.users.has(u), w.usersets.has(u), w.usersets.get(u), w.conds.get(u)]));
    }
  }
  for (const user of probes.users) {
    const want = ref.rev.get(user);
    out.push(user, want && [...want].map(([r, objs]) => [r, [...objs]]));
    out.push([...RELATIONS, 'nothing'].map((r) => { const objs = want?.get(r); return objs && [...objs]; }));
  }
  return out;
}

describe('compact TupleIndex', () => {
  it('answers every read as the Map/Set index did, through random adds and removes', () => {
    for (const seed of [1, 2, 3]) {
      const rnd = prng(seed);
      const index = new TupleIndex();
      const ref = new Reference();
      const written: Array<ReturnType<typeof randomTuple>> = [];
      for (let step = 0; step < 3000; step++) {
        if (written.length > 0 && rnd() < 0.35) {
          // remove a written tuple, or one never written
          const t = rnd() < 0.9 ? written.splice(Math.floor(rnd() * written.length), 1)[0]! : randomTuple(rnd, false);
          expect(index.remove(t.object, t.relation, t.user)).toBe(ref.remove(t.object, t.relation, t.user));
        } else {
          const t = randomTuple(rnd, rnd() < 0.3);
          const hash = t.user.indexOf('#');
          const added = index.add(t.object, t.type, t.relation, t.user, hash >= 0 ? { object: t.user.slice(0, hash), relation: t.user.slice(hash + 1) } : null, t.cond);
          expect(added).toBe(ref.add(t.object, t.type, t.relation, t.user, t.cond));
          if (added) written.push(t);
        }
      }
      const objects = [...new Set([...ref.fwd.keys(), 'doc:hot0', 'doc:hot1', 'doc:none', 'folder:7'])];
      const users = [...new Set([...ref.rev.keys(), 'user:nobody', 'group:3#member', 'user:*', 'folder:3'])];
      expect(readIndex(index, { objects, users })).toEqual(readReference(ref, { objects, users }));
    }
  });

  it('forgets a string once no tuple names it, and reuses its id for the next one', () => {
    const index = new TupleIndex();
    index.add('doc:1', 'doc', 'viewer', 'group:eng#member', { object: 'group:eng', relation: 'member' });
    expect(index.remove('doc:1', 'viewer', 'group:eng#member')).toBe(true);
    expect(index.node('doc:1')).toBeUndefined();
    expect(index.byUser('group:eng#member')).toBeUndefined();
    index.add('doc:2', 'doc', 'viewer', 'user:anne', null);
    index.add('doc:2', 'doc', 'viewer', 'team:x#member', { object: 'team:x', relation: 'member' });
    expect([...index.bucket('doc:2', 'viewer').users]).toEqual(['user:anne']);
    expect([...index.bucket('doc:2', 'viewer').usersets]).toEqual([['team:x#member', { object: 'team:x', relation: 'member' }]]);
    expect(index.bucket('doc:1', 'viewer')).toBe(EMPTY_BUCKET);
    expect(index.size).toBe(2);
  });

  it('holds a tuple whose user is its own object under one id, and forgets it with its last tuple', () => {
    const index = new TupleIndex();
    expect(index.add('folder:1', 'folder', 'parent', 'folder:1', null)).toBe(true);
    expect(index.add('folder:1', 'folder', 'parent', 'folder:1', null)).toBe(false);
    expect([...index.bucket('folder:1', 'parent').users]).toEqual(['folder:1']);
    expect([...index.byUser('folder:1')!.get('parent')!]).toEqual(['folder:1']);
    expect(index.add('doc:2', 'doc', 'parent', 'folder:1', null)).toBe(true);
    expect(index.remove('folder:1', 'parent', 'folder:1')).toBe(true);
    expect(index.node('folder:1')).toBeUndefined();
    expect([...index.byUser('folder:1')!.get('parent')!]).toEqual(['doc:2']);
    expect(index.remove('doc:2', 'parent', 'folder:1')).toBe(true);
    expect(index.byUser('folder:1')).toBeUndefined();
    // the string's id was released: the next new string takes it, and reads stay exact
    index.add('doc:3', 'doc', 'viewer', 'user:anne', null);
    expect([...index.bucket('doc:3', 'viewer').users]).toEqual(['user:anne']);
    expect(index.size).toBe(1);
  });

  it('keeps a wide bucket exact past the switch from an array to a Set', () => {
    const index = new TupleIndex();
    for (let i = 0; i < 100; i++) expect(index.add('org:a', 'org', 'member', `user:${i}`, null)).toBe(true);
    expect(index.add('org:a', 'org', 'member', 'user:50', null)).toBe(false);
    for (let i = 0; i < 100; i += 2) expect(index.remove('org:a', 'member', `user:${i}`)).toBe(true);
    const b = index.bucket('org:a', 'member');
    expect(b.users.size).toBe(50);
    expect(b.users.has('user:51')).toBe(true);
    expect(b.users.has('user:50')).toBe(false);
    expect([...b.users]).toEqual(Array.from({ length: 50 }, (_, i) => `user:${2 * i + 1}`));
  });
});
