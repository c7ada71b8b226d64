/**
 * @module authz/consumers/user-deleted
 * Removes the relationship tuples naming `user:<id>` (as user or object) when authn deletes a user
 * (behaviour.md §5.3 delete_user, §7.1). A durable consumer of `user.deleted`: an event published
 * while authz is down is delivered when it starts again, and a failed deletion is retried, so no tuple
 * is left behind. Deleting twice is harmless (the second run finds nothing).
 */
import type { Bus, Envelope, Subscription } from '@gatehouse/bus';
import type { BusEvents } from '@gatehouse/contracts';
import type { Logger } from '@gatehouse/observability';
import type { Engine } from '../domain/engine.ts';

export const USER_DELETED_CONSUMER = 'authz-user-deleted';
/** attempts and waits (ms) before a deletion is given up and logged as lost */
export const USER_DELETED_MAX_ATTEMPTS = 20;
export const USER_DELETED_BACKOFF_MS: readonly number[] = [1000, 2000, 4000, 8000, 16000, 30000];

/** The handler alone (unit tests call it with an envelope). */
export function userDeletedHandler(engine: Pick<Engine, 'deleteUserTuples'>, logger: Logger) {
  return async (envelope: Envelope, delivery: { isLastAttempt: boolean }): Promise<void> => {
    const id = (envelope.data as Partial<BusEvents['user.deleted']>).user?.id;
    if (typeof id !== 'string' || id === '') {
      logger.error({ event_id: envelope.id }, 'user.deleted without a user id: ignored');
      return;
    }
    try {
      const deleted = await engine.deleteUserTuples(id);
      logger.debug({ event_id: envelope.id, deleted }, 'tuples of a deleted user removed');
    } catch (err) {
      if (delivery.isLastAttempt) logger.error({ err, event_id: envelope.id }, 'tuples of a deleted user not removed: attempts exhausted');
      throw err;
    }
  };
}

/** Starts the durable consumer on `bus`. */
export function consumeUserDeleted(bus: Bus, engine: Pick<Engine, 'deleteUserTuples'>, logger: Logger): Promise<Subscription> {
  return bus.consume({
    durable: USER_DELETED_CONSUMER,
    names: ['user.deleted'],
    maxAttempts: USER_DELETED_MAX_ATTEMPTS,
    backoffMs: USER_DELETED_BACKOFF_MS,
    handler: userDeletedHandler(engine, logger),
  });
}
