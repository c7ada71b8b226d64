/**
 * @module @gatehouse/authn/domain/email-job
 * authn's own declaration of the `email.send` job it produces (the contract the notifications
 * worker consumes; services never import each other, ARCHITECTURE §2). Jobs are written to the
 * outbox in the transaction of the state change (ARCHITECTURE §4) with `tx.events.emit`.
 */
import type { EventSink, VerificationPurpose } from '../storage/ports.ts';
import type { WireUser } from './user.ts';

/** Envelope name of an email delivery job. */
export const EMAIL_SEND = 'email.send';

/** The data of an `email.send` envelope (link events only: authn sends no OTP mails). */
export interface EmailJob {
  /** the email template event (behaviour.md §5.5) */
  event_name: VerificationPurpose;
  /** recipient address */
  to: string;
  /** the User record (behaviour.md §5.3) for `{{.user.*}}` */
  user: WireUser;
  /** `verification_url`: built from `--url`, never from a Host header (behaviour.md §1.1) */
  variables: { verification_url: string };
}

/** Queues one link mail through the outbox of the running transaction. */
export function queueLinkEmail(events: EventSink, event: VerificationPurpose, to: string, user: WireUser, verificationUrl: string): void {
  const job: EmailJob = { event_name: event, to, user, variables: { verification_url: verificationUrl } };
  events.emit(EMAIL_SEND, job);
}
