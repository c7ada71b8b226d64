/**
 * @module @gatehouse/bus/user-deleted
 * The durable consumer every service that holds data about a user runs on authn's `user.deleted`
 * (behaviour.md §5.3 delete_user): an event published while the service is down is delivered when it
 * starts again, and a failed deletion is retried, so nothing is left behind. `forget` must be
 * idempotent (a redelivery after a crash runs it twice).
 */
import type { BusEvents } from '@gatehouse/contracts';
import type { Logger } from '@gatehouse/observability';
import type { Bus, Envelope, Subscription } from './bus.ts';

/** attempts and waits (ms) before a deletion is given up and logged as lost */
export const USER_DELETED_MAX_ATTEMPTS = 20;
export const USER_DELETED_BACKOFF_MS: readonly number[] = [1000, 2000, 4000, 8000, 16000, 30000];

export interface UserDeletedConsumer {
  /** the durable consumer's name, one per service: `authz-user-deleted` */
  durable: string;
  /** removes the service's part of the user; resolves with a count for the debug line */
  forget(userId: string): Promise<unknown>;
  logger: Logger;
}

/** The handler alone (unit tests call it with an envelope). */
export function userDeletedHandler(o: UserDeletedConsumer) {
  return async (envelope: Envelope, delivery: { isLastAttempt: boolean }): Promise<void> => {
    const id = (envelope.data as Partial<BusEvents['user.deleted']>).user?.id;
    if (typeof id !== 'string' || id === '') {
      o.logger.error({ event_id: envelope.id, consumer: o.durable }, 'user.deleted without a user id: ignored');
      return;
    }
    try {
      const removed = await o.forget(id);
      o.logger.debug({ event_id: envelope.id, consumer: o.durable, removed }, 'data of a deleted user removed');
    } catch (err) {
      if (delivery.isLastAttempt) o.logger.error({ err, event_id: envelope.id, consumer: o.durable }, 'data of a deleted user not removed: attempts exhausted');
      throw err;
    }
  };
}

/** Starts the durable consumer of `user.deleted` on `bus`. */
export function consumeUserDeleted(bus: Bus, o: UserDeletedConsumer): Promise<Subscription> {
  return bus.consume({
    durable: o.durable,
    names: ['user.deleted'],
    maxAttempts: USER_DELETED_MAX_ATTEMPTS,
    backoffMs: USER_DELETED_BACKOFF_MS,
    handler: userDeletedHandler(o),
  });
}
