/** @module check.test: resolution limits of the synchronous resolver (behaviour.md §7.3 Resolution). */
import { describe, it, expect } from '@jest/globals';
import { Resolver, ResolverCache, ResolutionTooComplex } from './check.ts';
import { parseDsl } from './model-dsl.ts';
import { parseUser } from './object-ref.ts';
import { TupleIndex } from './tuple-index.ts';
import { TypeSystem } from './type-system.ts';

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
