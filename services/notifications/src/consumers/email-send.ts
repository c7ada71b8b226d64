/**
 * @module @gatehouse/notifications/consumers/email-send
 * The `email.send` consumer: renders and sends one email per job, records every attempt, never
 * sends a job twice once it is recorded as sent, and dead-letters a job after its last attempt
 * (ARCHITECTURE §4, behaviour.md §5.5). The bookkeeping is consumers/delivery.ts's.
 */
import type { KeyRing } from '@gatehouse/crypto';
import type { Delivery, Envelope } from '@gatehouse/bus';
import type { Logger } from '@gatehouse/observability';
import { isEmailEventName, parseEmailJob, type EmailEventName } from '../job.ts';
import type { Mailer, OutgoingEmail } from '../smtp/mailer.ts';
import { renderEmail, type RenderOptions } from '../domain/render.ts';
import type { DeliveryCounter } from '../metrics.ts';
import type { DeliveryStore } from '../storage/storage.ts';
import { createDeliveryHandler } from './delivery.ts';

/** A stored template for an event, or undefined for the built-in one (the admin templates hook). */
export type TemplateLookup = (event: EmailEventName) => Promise<RenderOptions['override']>;

export interface EmailSendDeps {
  readonly store: DeliveryStore;
  readonly mailer: Mailer;
  readonly organizationName: string;
  readonly organizationLogo: string;
  readonly logger: Logger;
  readonly deliveries: DeliveryCounter;
  readonly templateFor?: TemplateLookup | undefined;
  /** opens the sealed variables of a job (libs/crypto `jobSealKey`); absent: sealed jobs are dead-lettered */
  readonly jobKey?: KeyRing | undefined;
  /** Unix seconds; injectable for tests */
  readonly now?: (() => number) | undefined;
}

/**
 * True for an SMTP permanent negative reply (5yz, RFC 5321 §4.2.1): the same request will fail
 * again, so the job goes straight to the dead letters instead of waiting out the retries.
 */
function isPermanentSmtpFailure(err: unknown): boolean {
  const code = (err as { responseCode?: unknown } | null)?.responseCode;
  return typeof code === 'number' && code >= 500 && code < 600;
}

const field = (data: unknown, key: string): unknown => (data as Partial<Record<string, unknown>> | null)?.[key];

/** Builds the handler given to `Bus.consume` for `email.send`. */
export function createEmailSendHandler(deps: EmailSendDeps): (envelope: Envelope, delivery: Delivery) => Promise<void> {
  return createDeliveryHandler<OutgoingEmail>(deps, {
    channel: 'email',
    eventNameOf: (data) => {
      const name = field(data, 'event_name');
      return isEmailEventName(name) ? name : 'invalid';
    },
    recipientOf: (data) => {
      const to = field(data, 'to');
      return typeof to === 'string' ? to : '';
    },
    async prepare(data) {
      const job = parseEmailJob(data, deps.jobKey);
      const message = renderEmail(job, {
        organizationName: deps.organizationName,
        organizationLogo: deps.organizationLogo,
        override: await deps.templateFor?.(job.event_name),
      });
      return { to: job.to, ...message };
    },
    send: async (mail) => (await deps.mailer.send(mail)).messageId,
    isPermanent: isPermanentSmtpFailure,
  });
}
