/**
 * @module @gatehouse/mfa/events
 * What mfa puts on the bus, typed by the bus's contract (proto/gatehouse/events/v1, `BusEvents`): the
 * `email.send` job of the `verify_otp` template with the code (behaviour.md §4.4 delivery), written to
 * the outbox in the transaction that stores the code (ARCHITECTURE §4).
 */
import type { BusEvents, common } from '@gatehouse/contracts';
import { AppError } from '@gatehouse/errors';
import type { MfaTransaction, OtpChannel } from './storage/ports.ts';

/** Queues the code mail through the outbox of the running transaction. */
export function queueOtpEmail(tx: MfaTransaction, to: string, user: common.User, otp: string): void {
  const job: BusEvents['email.send'] = { event_name: 'verify_otp', to, user, variables: { otp } };
  tx.events.emit('email.send', job);
}

/**
 * The one place a code leaves mfa (behaviour.md §4.4 delivery): email through {@link queueOtpEmail};
 * SMS is the SMS work's (branch h/sms: an `sms.send` job on the bus with the body `Your verification
 * code is: <code>`), which replaces the `sms` branch here. Written in the transaction that stores the code.
 * @param destination the email address or phone number
 * @throws AppError `unavailable` for `sms` until the SMS channel is built
 */
export function deliverOtp(tx: MfaTransaction, channel: OtpChannel, destination: string, user: common.User, otp: string): void {
  if (channel === 'email') return queueOtpEmail(tx, destination, user, otp);
  throw new AppError('unavailable', 'SMS delivery is not available yet');
}
