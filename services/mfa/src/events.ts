/**
 * @module @gatehouse/mfa/events
 * mfa's own declaration of the `email.send` job it produces: the `verify_otp` template with the code
 * (behaviour.md §4.4 delivery). Services never import each other (ARCHITECTURE §2); the shape is the
 * contract the notifications worker consumes.
 */
import type { MfaTransaction } from './storage/ports.ts';

export const EMAIL_SEND = 'email.send';

/** Queues the code mail through the outbox of the running transaction. */
export function queueOtpEmail(tx: MfaTransaction, to: string, user: Record<string, unknown>, otp: string): void {
  tx.events.emit(EMAIL_SEND, { event_name: 'verify_otp', to, user, variables: { otp } });
}
