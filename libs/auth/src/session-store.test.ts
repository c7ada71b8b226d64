import { afterAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { createMemorySessionStore } from './session-store.ts';
import { createRedisSessionStore } from './redis-session-store.ts';
import { runSessionStoreSuite } from './session-store.suite.ts';

runSessionStoreSuite('memory', async () => {
  let now = 1_000_000;
  return { store: createMemorySessionStore({ clock: () => now }), advance: (s) => { now += s; }, now: () => now };
});

const closers: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const c of closers) await c();
});

runSessionStoreSuite('redis', async () => {
  // real time: Redis expires keys on its own clock, so the harness clock is offset from Date.now()
  let offset = 0;
  const clock = () => Math.floor(Date.now() / 1000) + offset;
  const store = createRedisSessionStore({ url: 'redis://127.0.0.1:6379', keyPrefix: `gh-test-${randomUUID()}:`, clock });
  closers.push(() => store.close());
  return { store, advance: (s) => { offset += s; }, now: clock };
});

describe('redis session store failures', () => {
  it('maps an unreachable Redis to 503 unavailable', async () => {
    const store = createRedisSessionStore({ url: 'redis://127.0.0.1:1', keyPrefix: 'x:' });
    closers.push(() => store.close().catch(() => undefined));
    await expect(store.get('00000000-0000-4000-8000-000000000001')).rejects.toMatchObject({ code: 'unavailable', message: 'session store unavailable' });
  });
});
