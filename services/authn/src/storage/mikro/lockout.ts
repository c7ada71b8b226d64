/**
 * @module @gatehouse/authn/storage/mikro/lockout
 * LoginLockout on `authn_login_failures`: one row per failure, pruned past the window.
 */
import type { Database } from '@gatehouse/db';
import type { LoginLockout } from '../ports.ts';
import { LoginFailureEntity } from './entities.ts';

export function createMikroLoginLockout(db: Database): LoginLockout {
  return {
    async recordFailure(key, at, pruneBefore) {
      await db.transactional(async (em) => {
        if (pruneBefore !== undefined) await em.nativeDelete(LoginFailureEntity as never, { key, failedAt: { $lt: pruneBefore } } as never);
        em.persist(em.create(LoginFailureEntity as never, { key, failedAt: at } as never));
      });
    },
    async failuresSince(key, since) {
      const rows = await db.fork().find(LoginFailureEntity as never, { key, failedAt: { $gte: since } } as never, { orderBy: { failedAt: 'asc' } } as never);
      return (rows as Array<{ failedAt: unknown }>).map((r) => Number(r.failedAt));
    },
    async clear(key) {
      await db.fork().nativeDelete(LoginFailureEntity as never, { key } as never);
    },
  };
}
