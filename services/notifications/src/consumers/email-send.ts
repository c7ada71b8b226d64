/**
 * @module @gatehouse/notifications/consumers/email-send
 * The `email.send` consumer: renders and sends one email per job, records every attempt, never
 * sends a job twice once it is recorded as sent, and dead-letters a job after its last attempt
 * (ARCHITECTURE §4, behaviour.md §5.5).
 */
import type { Delivery, Envelope } from '@gatehouse/bus';
import { AppError } from '@gatehouse/errors';
import type { Logger } from '@gatehouse/observability';
import { isEmailEventName, parseEmailJob, type EmailEventName, type EmailJob } from '../job.ts';
import type { Mailer } from '../smtp/mailer.ts';
import { renderEmail, type RenderOptions, type RenderedEmail } from '../domain/render.ts';
import type { DeliveryCounter } from '../metrics.ts';
import type { DeliveryStore, NewAttempt } from '../storage/storage.ts';

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
  /** Unix seconds; injectable for tests */
  readonly now?: (() => number) | undefined;
}

const ERROR_MAX = 1000;

function errorText(err: unknown): string {
  const text = err instanceof Error ? err.message : String(err);
  return text.length > ERROR_MAX ? `${text.slice(0, ERROR_MAX)}…` : text;
}

/**
 * True for an SMTP permanent negative reply (5yz, RFC 5321 §4.2.1): the same request will fail
 * again, so the job goes straight to the dead letters instead of waiting out the retries.
 */
function isPermanentSmtpFailure(err: unknown): boolean {
  const code = (err as { responseCode?: unknown } | null)?.responseCode;
  return typeof code === 'number' && code >= 500 && code < 600;
}

/** Builds the handler given to `Bus.consume` for `email.send`. */
export function createEmailSendHandler(deps: EmailSendDeps): (envelope: Envelope, delivery: Delivery) => Promise<void> {
  const now = deps.now ?? (() => Math.floor(Date.now() / 1000));
  const log = deps.logger;

  // Deliveries of one id running at once in this process (a JetStream redelivery after ack_wait
  // while the first SMTP session is still open): the later one waits, then sees the final state.
  const inflight = new Map<string, Promise<void>>();

  const handle = async (envelope: Envelope, delivery: Delivery): Promise<void> => {
    const jobId = envelope.id;
    const prior = await deps.store.findJob(jobId);
    if (prior) {
      // Redelivery (lost ack, outbox relay re-publish): the job already has its final state.
      log.debug({ job_id: jobId, status: prior.status, attempt: delivery.attempt }, 'email job already final, skipped');
      return;
    }
    const data = envelope.data as Partial<Record<string, unknown>> | null;
    const base = {
      jobId,
      channel: 'email' as const,
      eventName: isEmailEventName(data?.['event_name']) ? data['event_name'] : 'invalid',
      recipient: typeof data?.['to'] === 'string' ? data['to'].slice(0, 320) : '',
      attempt: delivery.attempt,
    };
    const record = async (outcome: NewAttempt['outcome'], error: string | null): Promise<void> => {
      await deps.store.recordAttempt({ ...base, outcome, error, createdAt: now() });
      deps.deliveries.inc({ event: base.eventName, outcome });
    };

    /** A retryable failure: record it and throw for the bus to retry, or dead-letter on the last attempt. */
    const fail = async (err: unknown, event: string): Promise<void> => {
      const error = errorText(err);
      if (delivery.isLastAttempt || isPermanentSmtpFailure(err)) {
        await record('dead', error);
        log.error({ job_id: jobId, event, attempt: delivery.attempt, err: error }, 'email delivery failed, dead-lettered');
        return;
      }
      await record('failed', error);
      log.warn({ job_id: jobId, event, attempt: delivery.attempt, err: error }, 'email delivery failed, will retry');
      throw err;
    };

    let job: EmailJob;
    let message: RenderedEmail;
    try {
      job = parseEmailJob(envelope.data);
      message = renderEmail(job, {
        organizationName: deps.organizationName,
        organizationLogo: deps.organizationLogo,
        override: await deps.templateFor?.(job.event_name),
      });
    } catch (err) {
      if (!(err instanceof AppError) || err.code !== 'invalid_argument') return fail(err, base.eventName);
      // A job that cannot be rendered never will be: dead-letter it now.
      await record('dead', err.message);
      log.error({ job_id: jobId, event: base.eventName, err: err.message }, 'email job invalid, dead-lettered');
      return;
    }

    let messageId: string;
    try {
      ({ messageId } = await deps.mailer.send({ to: job.to, ...message }));
    } catch (err) {
      return fail(err, job.event_name);
    }
    // If this write fails the bus redelivers and the mail may go out twice: SMTP offers no
    // two-phase commit, so at-least-once is the strongest promise after the server accepted it.
    await record('sent', null);
    log.info({ job_id: jobId, event: job.event_name, attempt: delivery.attempt, message_id: messageId }, 'email sent');
  };

  return async (envelope, delivery) => {
    for (let running = inflight.get(envelope.id); running; running = inflight.get(envelope.id)) {
      await running.catch(() => undefined);
    }
    const run = handle(envelope, delivery);
    inflight.set(envelope.id, run);
    try {
      await run;
    } finally {
      inflight.delete(envelope.id);
    }
  };
}
