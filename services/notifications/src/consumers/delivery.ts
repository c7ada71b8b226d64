/**
 * @module @gatehouse/notifications/consumers/delivery
 * What every delivery consumer (`email.send`, `sms.send`) does around the send itself: skip a job
 * already final (idempotency on the envelope id), record every attempt, throw a retryable failure
 * back to the bus, dead-letter on the last attempt or a permanent refusal, and run two deliveries of
 * one id in this process one after the other (ARCHITECTURE §4).
 */
import type { Delivery, Envelope } from '@gatehouse/bus';
import { AppError } from '@gatehouse/errors';
import type { Logger } from '@gatehouse/observability';
import type { DeliveryCounter } from '../metrics.ts';
import type { DeliveryChannel, DeliveryStore, NewAttempt } from '../storage/storage.ts';

/** How one channel validates, sends and classifies failures; the rest is {@link createDeliveryHandler}'s. */
export interface ChannelDelivery<J> {
  readonly channel: DeliveryChannel;
  /** the event label of raw envelope data for records and metrics (`invalid` when it has none) */
  eventNameOf(data: unknown): string;
  /** the recipient of raw envelope data for the attempt record ('' when it has none) */
  recipientOf(data: unknown): string;
  /**
   * Validates (and renders) the job. AppError `invalid_argument` means it can never be sent: it is
   * dead-lettered at once. Any other error is retried.
   */
  prepare(data: unknown): Promise<J>;
  /** Sends the job; resolves with the provider's id for the log (SMTP Message-ID, Twilio SID). */
  send(job: J): Promise<string>;
  /** true when the provider refused for good (SMTP 5yz, Twilio 4xx): dead-letter without retrying */
  isPermanent(err: unknown): boolean;
}

export interface DeliveryDeps {
  readonly store: DeliveryStore;
  readonly logger: Logger;
  readonly deliveries: DeliveryCounter;
  /** Unix seconds; injectable for tests */
  readonly now?: (() => number) | undefined;
}

const ERROR_MAX = 1000;

/** An error's text for the attempt record, at most 1000 characters. */
export function errorText(err: unknown): string {
  const text = err instanceof Error ? err.message : String(err);
  return text.length > ERROR_MAX ? `${text.slice(0, ERROR_MAX)}…` : text;
}

/**
 * Builds the handler given to `Bus.consume` for one channel. Delivery is at least once: if the
 * database write after an accepted send fails, the bus redelivers and the message may go out again
 * (neither SMTP nor Twilio offers a two-phase commit).
 */
export function createDeliveryHandler<J>(deps: DeliveryDeps, ch: ChannelDelivery<J>): (envelope: Envelope, delivery: Delivery) => Promise<void> {
  const now = deps.now ?? (() => Math.floor(Date.now() / 1000));
  const log = deps.logger;
  const name = ch.channel;
  // Deliveries of one id running at once in this process (a JetStream redelivery after ack_wait
  // while the first send is still open): the later one waits, then sees the final state.
  const inflight = new Map<string, Promise<void>>();

  const handle = async (envelope: Envelope, delivery: Delivery): Promise<void> => {
    const jobId = envelope.id;
    const prior = await deps.store.findJob(jobId);
    if (prior) {
      // Redelivery (lost ack, outbox relay re-publish): the job already has its final state.
      log.debug({ job_id: jobId, status: prior.status, attempt: delivery.attempt }, `${name} job already final, skipped`);
      return;
    }
    const base = {
      jobId,
      channel: name,
      eventName: ch.eventNameOf(envelope.data),
      recipient: ch.recipientOf(envelope.data).slice(0, 320),
      attempt: delivery.attempt,
    };
    const record = async (outcome: NewAttempt['outcome'], error: string | null): Promise<void> => {
      await deps.store.recordAttempt({ ...base, outcome, error, createdAt: now() });
      deps.deliveries.inc({ event: base.eventName, outcome });
    };
    /** A retryable failure: record it and throw for the bus to retry, or dead-letter on the last attempt. */
    const fail = async (err: unknown): Promise<void> => {
      const error = errorText(err);
      const fields = { job_id: jobId, event: base.eventName, attempt: delivery.attempt, err: error };
      if (delivery.isLastAttempt || ch.isPermanent(err)) {
        await record('dead', error);
        log.error(fields, `${name} delivery failed, dead-lettered`);
        return;
      }
      await record('failed', error);
      log.warn(fields, `${name} delivery failed, will retry`);
      throw err;
    };

    let job: J;
    try {
      job = await ch.prepare(envelope.data);
    } catch (err) {
      if (!(err instanceof AppError) || err.code !== 'invalid_argument') return fail(err);
      // A job that cannot be sent never will be: dead-letter it now.
      await record('dead', err.message);
      log.error({ job_id: jobId, event: base.eventName, err: err.message }, `${name} job invalid, dead-lettered`);
      return;
    }
    let providerId: string;
    try {
      providerId = await ch.send(job);
    } catch (err) {
      return fail(err);
    }
    await record('sent', null);
    log.info({ job_id: jobId, event: base.eventName, attempt: delivery.attempt, provider_id: providerId }, `${name} sent`);
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
