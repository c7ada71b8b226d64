import { afterAll, describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { createMemoryAdminAccessStore, createRedisAdminAccessStore, type AdminAccessStore } from './admin-access.ts';

const redis = createRedisAdminAccessStore({ url: 'redis://127.0.0.1:6379', keyPrefix: `gh-test-${randomBytes(4).toString('hex')}:`, windowSeconds: 900 });
afterAll(async () => { await redis.close(); });

describe.each([['memory', createMemoryAdminAccessStore()], ['redis', redis]] as Array<[string, AdminAccessStore]>)('admin access store (%s)', (_name, store) => {
  const now = Math.floor(Date.now() / 1000);

  it('keeps a session until its idle or absolute expiry, whichever comes first', async () => {
    const h = randomBytes(8).toString('hex');
    await store.createSession({ handleHash: h, createdAt: now, idleExpiresAt: now + 60, absoluteExpiresAt: now + 120 });
    expect(await store.getSession(h, now)).toMatchObject({ idleExpiresAt: now + 60 });
    await store.updateSession({ handleHash: h, createdAt: now, idleExpiresAt: now + 90, absoluteExpiresAt: now + 120 }, now);
    expect(await store.getSession(h, now + 61)).toMatchObject({ idleExpiresAt: now + 90 });
    expect(await store.getSession(h, now + 90)).toBeNull();
    await store.deleteSession(h);
    expect(await store.getSession(h, now)).toBeNull();
  });

  it('does not revive a deleted session through an update', async () => {
    const h = randomBytes(8).toString('hex');
    await store.updateSession({ handleHash: h, createdAt: now, idleExpiresAt: now + 60, absoluteExpiresAt: now + 120 }, now);
    expect(await store.getSession(h, now)).toBeNull();
  });

  it('lists failures per key in time order and prunes those before the window', async () => {
    const ip = `10.0.${randomBytes(1)[0]}.${randomBytes(1)[0]}`;
    await store.failures.recordFailure(ip, now - 1000);
    await store.failures.recordFailure(ip, now - 10, now - 900);
    await store.failures.recordFailure(ip, now - 10, now - 900);
    expect(await store.failures.failuresSince(ip, now - 2000)).toEqual([now - 10, now - 10]);
    expect(await store.failures.failuresSince('other', 0)).toEqual([]);
    await store.failures.clear(ip);
    expect(await store.failures.failuresSince(ip, 0)).toEqual([]);
  });
});
