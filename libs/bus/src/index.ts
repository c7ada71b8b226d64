/**
 * @module @gatehouse/bus
 * One publish/consume interface (bus.ts) over NATS JetStream (split mode) and in memory
 * (all-in-one), ARCHITECTURE §1 and §4.
 */
export type { Bus, ConsumerOptions, Delivery, Envelope, Subscription } from './bus.ts';
export { newEnvelope } from './envelope.ts';
export { createInProcessBus } from './in-process.ts';
export type { JetStreamBusOptions } from './jetstream.ts';
export { createJetStreamBus } from './jetstream.ts';
export { USER_DELETED_BACKOFF_MS, USER_DELETED_MAX_ATTEMPTS, consumeUserDeleted, userDeletedHandler, type UserDeletedConsumer } from './user-deleted.ts';
