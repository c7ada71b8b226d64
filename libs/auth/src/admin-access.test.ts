import { afterAll, describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import type { AppError } from '@gatehouse/errors';
import { ADMIN_SECRET_MAX_FAILURES, createMemoryAdminAccessStore, createRedisAdminAccessStore, verifyAdminSecret, type AdminAccessStore } from './admin-access.ts';
import { runAttemptLogSuite } from './attempt-log.suite.ts';

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

  // the admin-secret attempts, claimed before each comparison (issue 30 §1)
  runAttemptLogSuite('admin secret', () => store.failures);

  it('verifyAdminSecret: 10 wrong secrets at once are all compared, the 11th and a right one are refused; a right one gives its claim back', async () => {
    const ip = `10.1.${randomBytes(1)[0]}.${randomBytes(1)[0]}`;
    const results = await Promise.allSettled(Array.from({ length: 30 }, () => verifyAdminSecret(store.failures, ip, 'wrong', 'the-secret', now)));
    expect(results.filter((r) => r.status === 'fulfilled' && r.value === false)).toHaveLength(ADMIN_SECRET_MAX_FAILURES);
    expect(results.filter((r) => r.status === 'rejected' && (r.reason as AppError).code === 'resource_exhausted')).toHaveLength(30 - ADMIN_SECRET_MAX_FAILURES);
    await expect(verifyAdminSecret(store.failures, ip, 'the-secret', 'the-secret', now)).rejects.toMatchObject({ code: 'resource_exhausted' });
    const other = `10.2.${randomBytes(1)[0]}.${randomBytes(1)[0]}`;
    for (let i = 0; i < 20; i++) expect(await verifyAdminSecret(store.failures, other, 'the-secret', 'the-secret', now)).toBe(true);
    expect(await store.failures.attemptsSince(other, 0)).toEqual([]);
  });
});
