import v8 from 'node:v8';
import { describe, expect, it } from '@jest/globals';
import { releaseUnusedMemory } from './memory.ts';

const newSpace = (): number => v8.getHeapSpaceStatistics().find((s) => s.space_name === 'new_space')!.space_size;

describe('releaseUnusedMemory', () => {
  it('shrinks the young generation V8 grew while allocating', () => {
    // enough short-lived objects surviving a few scavenges to make V8 grow its semi-spaces
    let keep: Array<{ i: number; s: string }> = [];
    for (let i = 0; i < 2_000_000; i++) {
      keep.push({ i, s: `x${i}` });
      if (keep.length > 300_000) keep = keep.slice(100_000);
    }
    const grown = newSpace();
    expect(keep.length).toBeGreaterThan(0);
    keep = [];
    expect(releaseUnusedMemory()).toBe(true);
    expect(newSpace()).toBeLessThan(grown);
  });

  it('does not put gc() on the global object', () => {
    releaseUnusedMemory();
    expect((globalThis as { gc?: unknown }).gc).toBeUndefined();
  });
});
