/**
 * @module @gatehouse/bus
 * One publish/consume interface (bus.ts) over NATS JetStream (split mode) and in memory
 * (all-in-one), ARCHITECTURE §1 and §4.
 */
import type { Bus } from './bus.ts';
import type { JetStreamBusOptions } from './jetstream.ts';

export type { Bus, ConsumerOptions, Delivery, Envelope, Subscription } from './bus.ts';
export { newEnvelope } from './envelope.ts';
export { createInProcessBus } from './in-process.ts';
export type { JetStreamBusOptions };
export { USER_DELETED_BACKOFF_MS, USER_DELETED_MAX_ATTEMPTS, consumeUserDeleted, userDeletedHandler, type UserDeletedConsumer } from './user-deleted.ts';

/**
 * Connects to NATS (reconnecting forever), creates or updates the stream and returns the bus
 * (./jetstream.ts). The NATS client (≈ 2 MiB of heap) is loaded here, so a deployment without
 * `--nats-url` never loads it (issue 22 §3).
 * @throws AppError `unavailable` when NATS cannot be reached or JetStream is not enabled.
 */
export async function createJetStreamBus(opts: JetStreamBusOptions): Promise<Bus> {
  return (await import('./jetstream.ts')).createJetStreamBus(opts);
}
