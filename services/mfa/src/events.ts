/**
 * @module @gatehouse/mfa/events
 * What mfa puts on the bus, typed by the bus's contract (proto/gatehouse/events/v1, `BusEvents`): the
 * `email.send` job of the `verify_otp` template with the code (behaviour.md §4.4 delivery), written to
 * the outbox in the transaction that stores the code (ARCHITECTURE §4).
 */
import type { BusEvents, common } from '@gatehouse/contracts';
import type { MfaTransaction } from './storage/ports.ts';

/** Queues the code mail through the outbox of the running transaction. */
export function queueOtpEmail(tx: MfaTransaction, to: string, user: common.User, otp: string): void {
  const job: BusEvents['email.send'] = { event_name: 'verify_otp', to, user, variables: { otp } };
  tx.events.emit('email.send', job);
}
