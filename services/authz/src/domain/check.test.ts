/** @module check.test: resolution limits of the synchronous resolver (behaviour.md §7.3 Resolution). */
import { describe, it, expect } from '@jest/globals';
import { Resolver, ResolverCache, ResolutionTooComplex } from './check.ts';
import { parseDsl } from './model-dsl.ts';
import { parseUser } from './object-ref.ts';
import { TupleIndex } from './tuple-index.ts';
import { TypeSystem } from './type-system.ts';
import { prng } from '../../bench/github-dataset.ts';
import { addParsed } from './snapshot.ts';
import { parseTupleForm } from './tuple.ts';

const ts = new TypeSystem(parseDsl('model\n  schema 1.1\ntype user\ntype group\n  relations\n    define member: [user, group#member]\n'));

function chain(length: number): TupleIndex {
  const index = new TupleIndex();
  for (let i = 0; i < length; i++) index.add(`group:g${i}`, 'group', 'member', `group:g${i + 1}#member`, { object: `group:g${i + 1}`, relation: 'member' });
  index.add(`group:g${length}`, 'group', 'member', 'user:anne', null);
  return index;
}

describe('Resolver limits', () => {
  it('resolves 24 nested hops and refuses the 25th', () => {
    const anne = parseUser('user:anne')!;
    expect(new Resolver(ts, chain(24), null, anne).check('group:g0', 'member')).toBe(true);
    expect(() => new Resolver(ts, chain(25), null, anne).check('group:g0', 'member')).toThrow(ResolutionTooComplex);
  });

  it('gives up past its step budget instead of holding the event loop', () => {
    const index = new TupleIndex();
    for (let a = 0; a < 8; a++) {
      for (let b = 0; b < 8; b++) if (a !== b) index.add(`group:g${a}`, 'group', 'member', `group:g${b}#member`, { object: `group:g${b}`, relation: 'member' });
    }
    const bob = parseUser('user:bob')!;
    expect(new Resolver(ts, index, null, bob).check('group:g0', 'member')).toBe(false);
    expect(() => new Resolver(ts, index, null, bob, 5).check('group:g0', 'member')).toThrow(ResolutionTooComplex);
  });

  it('answers a cycle false without memoising a result that depended on the cut', () => {
    const index = new TupleIndex();
    index.add('group:a', 'group', 'member', 'group:b#member', { object: 'group:b', relation: 'member' });
    index.add('group:b', 'group', 'member', 'group:a#member', { object: 'group:a', relation: 'member' });
    index.add('group:b', 'group', 'member', 'group:c#member', { object: 'group:c', relation: 'member' });
    index.add('group:c', 'group', 'member', 'user:anne', null);
    const r = new Resolver(ts, index, null, parseUser('user:anne')!);
    expect(r.check('group:a', 'member')).toBe(true);
    expect(r.check('group:b', 'member')).toBe(true);
    const bob = new Resolver(ts, index, null, parseUser('user:bob')!);
    expect(bob.check('group:a', 'member')).toBe(false);
    expect(bob.check('group:b', 'member')).toBe(false);
  });
});

describe('ResolverCache', () => {
  it('gives the object subjects no tuple names one resolver per type, and every other subject its own', () => {
    const index = chain(3);
    const cache = new ResolverCache();
    const snapshot = {};
    const get = (subject: string): Resolver => cache.get(snapshot, 1, ts, index, parseUser(subject)!);
    const zed = get('user:zed');
    expect(get('user:yan')).toBe(zed);
    expect(get('group:nobody')).not.toBe(zed);
    expect(get('user:anne')).not.toBe(zed);
    expect(get('group:g3#member')).not.toBe(get('group:g9#member'));
    expect(zed.check('group:g0', 'member')).toBe(false);
    expect(get('user:anne').check('group:g0', 'member')).toBe(true);
    cache.drop(zed);
    expect(get('user:yan')).not.toBe(zed);
  });
});

describe('answers from remembered and shared resolvers', () => {
  // Nested groups with cycles, tuple-to-userset, recursive (folder and doc viewers) or not (repo readers),
  // wildcards, an intersection, exclusions, and a folder chain deeper than the depth limit.
  const model = new TypeSystem(parseDsl(`model
  schema 1.1
type user
type group
  relations
    define member: [user, user:*, group#member]
    define banned: [user]
    define active: member but not banned
type folder
  relations
    define parent: [folder]
    define owner: [user, group#member]
    define viewer: [user, user:*, group#member] or owner or viewer from parent
type doc
  relations
    define parent: [folder]
    define owner: [user]
    define editor: [user, group#active] or owner
    define viewer: [user, group#member] or editor or viewer from parent
    define both: editor and viewer
    define hidden: [user]
    define can_view: viewer but not hidden
type repo
  relations
    define owner: [group]
    define reader: [user, group#member] or member from owner
    define blocked: [user]
    define can_read: reader but not blocked
`));
  const USERS = 12;
  const GROUPS = 10;
  const FOLDERS = 40;
  const DOCS = 30;
  const REPOS = 20;

  /** a seeded pick in [0, n): the same tuples and checks every run */
  function random(seed: number): (n: number) => number {
    const next = prng(seed);
    return (n) => Math.floor(next() * n);
  }

  function dataset(seed: number): TupleIndex {
    const pick = random(seed);
    const index = new TupleIndex();
    const add = (object: string, relation: string, user: string): void => addParsed(index, parseTupleForm({ user, relation, object }));
    for (let g = 0; g < GROUPS; g++) {
      for (let k = 0; k < 2; k++) add(`group:g${g}`, 'member', `user:u${pick(USERS)}`);
      if (pick(3) === 0) add(`group:g${g}`, 'member', `group:g${pick(GROUPS)}#member`); // cycles too
      if (pick(4) === 0) add(`group:g${g}`, 'banned', `user:u${pick(USERS)}`);
    }
    add('group:g0', 'member', 'user:*');
    // folder f0 <- f1 <- ... <- f29 is one chain (30 hops: past the depth limit); the rest hang off random folders
    for (let f = 1; f < FOLDERS; f++) add(`folder:f${f}`, 'parent', `folder:f${f < 30 ? f - 1 : pick(FOLDERS)}`);
    for (let k = 0; k < 8; k++) add(`folder:f${pick(FOLDERS)}`, 'viewer', `user:u${pick(USERS)}`);
    for (let k = 0; k < 6; k++) add(`folder:f${pick(FOLDERS)}`, 'owner', `group:g${pick(GROUPS)}#member`);
    add('folder:f0', 'viewer', 'user:*');
    for (let d = 0; d < DOCS; d++) {
      add(`doc:d${d}`, 'parent', `folder:f${pick(FOLDERS)}`);
      if (pick(2) === 0) add(`doc:d${d}`, 'owner', `user:u${pick(USERS)}`);
      if (pick(2) === 0) add(`doc:d${d}`, 'editor', `group:g${pick(GROUPS)}#active`);
      if (pick(3) === 0) add(`doc:d${d}`, 'viewer', `group:g${pick(GROUPS)}#member`);
      if (pick(4) === 0) add(`doc:d${d}`, 'hidden', `user:u${pick(USERS)}`);
    }
    for (let r = 0; r < REPOS; r++) {
      add(`repo:r${r}`, 'owner', `group:g${pick(GROUPS)}`);
      add(`repo:r${r}`, 'reader', `user:u${pick(USERS)}`);
      if (pick(2) === 0) add(`repo:r${r}`, 'reader', `group:g${pick(GROUPS)}#member`);
      if (pick(3) === 0) add(`repo:r${r}`, 'blocked', `user:u${pick(USERS)}`);
    }
    return index;
  }

  const relations: Array<[string, string[], number]> = [
    ['group', ['member', 'banned', 'active'], GROUPS],
    ['folder', ['viewer', 'owner', 'parent'], FOLDERS],
    ['doc', ['viewer', 'editor', 'both', 'can_view', 'owner', 'hidden'], DOCS],
    ['repo', ['reader', 'can_read', 'owner'], REPOS],
  ];
  const outcome = (work: () => boolean): boolean | 'too complex' => {
    try {
      return work();
    } catch (err) {
      if (err instanceof ResolutionTooComplex) return 'too complex';
      throw err;
    }
  };

  // Calls of 1-20 checks by random subjects through one ResolverCache (so answers are remembered across
  // calls, and subjects in no tuple share a resolver), each compared with a fresh resolver of its own.
  it.each([1, 2, 3, 4, 5])('answers every check as a fresh resolver of its own subject does (dataset %i)', (seed) => {
    const index = dataset(seed);
    const pick = random(seed + 100);
    const cache = new ResolverCache();
    const snapshot = {};
    // users u0..u11 are in tuples (most of them); u12..u15 are in none
    const subjects = Array.from({ length: USERS + 4 }, (_, i) => parseUser(`user:u${i}`)!);
    let compared = 0;
    let allowed = 0;
    let errors = 0;
    for (let call = 0; call < 400; call++) {
      const subject = subjects[pick(subjects.length)]!;
      const resolver = cache.get(snapshot, 1, model, index, subject);
      for (let k = 0; k < 1 + pick(20); k++) {
        const [type, rels, count] = relations[pick(relations.length)]!;
        const object = `${type}:${type[0]}${pick(count)}`;
        const relation = rels[pick(rels.length)]!;
        const expected = outcome(() => new Resolver(model, index, null, subject).check(object, relation));
        const got = outcome(() => resolver.answer(object, relation));
        expect({ subject: subject.key, object, relation, got }).toEqual({ subject: subject.key, object, relation, got: expected });
        compared++;
        if (expected === true) allowed++;
        if (expected === 'too complex') {
          errors++;
          cache.drop(resolver);
          break;
        }
      }
    }
    // the data exercises all three outcomes
    expect(compared).toBeGreaterThan(1500);
    expect(allowed).toBeGreaterThan(100);
    expect(errors).toBeGreaterThan(5);
  });
});
