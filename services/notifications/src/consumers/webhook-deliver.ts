/**
 * @module @gatehouse/notifications/consumers/webhook-deliver
 * The `webhook.deliver` consumer (behaviour.md §5.4): one signed POST per attempt, up to 5 attempts
 * with 1/2/4/8 s waits (the bus's retry policy), each attempt reported as a `webhook.attempted`
 * event through the worker's outbox before the message is acknowledged, so admin writes one
 * WebhookLog row per attempt even across restarts (an attempt that cannot read the webhook from admin
 * is logged with http_status 0 and retried). Retried: transport/DNS/TLS errors, timeouts, 408,
 * 429, 5xx. Not retried: 2xx (done), 3xx (never followed), other 4xx, §5.6 refusals.
 */
import { randomUUID } from 'node:crypto';
import type { Delivery, Envelope } from '@gatehouse/bus';
import type { BusEvents } from '@gatehouse/contracts';
import { OutboundError, signWebhookBody, SIGNATURE_HEADER, WEBHOOK_USER_AGENT, type OutboundPost, type OutboundResponse } from '@gatehouse/delivery';
import type { Logger } from '@gatehouse/observability';
import type { DeliveryCounter } from '../metrics.ts';

/** Durable consumer name, stable across restarts. */
export const WEBHOOK_CONSUMER = 'notifications-webhook';
/** behaviour.md §5.4: 5 attempts, waits 1, 2, 4 and 8 s. */
export const WEBHOOK_MAX_ATTEMPTS = 5;
export const WEBHOOK_BACKOFF_MS: readonly number[] = [1000, 2000, 4000, 8000];

/** What the worker needs to know about a webhook at attempt time (admin's `WebhookTarget`). */
export interface WebhookTarget {
  found: boolean;
  enabled: boolean;
  endpoint: string;
  headers: Record<string, string>;
  signingSecret: string;
}

export interface WebhookDeliverDeps {
  /** the webhook's current target; throws when admin cannot be reached (the attempt is retried) */
  targetOf(webhookId: string): Promise<WebhookTarget>;
  /** one guarded POST (libs/delivery `guardedPost` under the flag) */
  post(p: Pick<OutboundPost, 'url' | 'headers' | 'body'>): Promise<OutboundResponse>;
  /** commits a `webhook.attempted` event to the worker's outbox */
  recordAttempt(attempt: BusEvents['webhook.attempted']): Promise<void>;
  logger: Logger;
  deliveries: DeliveryCounter;
  /** Unix seconds */
  now?: () => number;
}

/** True for the statuses §5.4 retries. */
export const isRetryableStatus = (status: number): boolean => status === 408 || status === 429 || status >= 500;

/** Thrown to make the bus retry; the attempt is already recorded. */
class RetryableDelivery extends Error {}

/** Builds the handler given to `Bus.consume` for `webhook.deliver`. */
export function createWebhookDeliverHandler(deps: WebhookDeliverDeps): (envelope: Envelope, delivery: Delivery) => Promise<void> {
  const now = deps.now ?? (() => Math.floor(Date.now() / 1000));
  return async (envelope, delivery) => {
    const job = (envelope.data ?? {}) as Partial<BusEvents['webhook.deliver']>;
    if (typeof job.webhook_id !== 'string' || typeof job.delivery_id !== 'string' || typeof job.body !== 'string') {
      deps.logger.error({ job_id: envelope.id }, 'malformed webhook job dropped');
      return;
    }
    const record = (httpStatus: number, response: string): Promise<void> => deps.recordAttempt({
      id: randomUUID(), webhook_id: job.webhook_id!, delivery_id: job.delivery_id!, attempt: delivery.attempt, http_status: httpStatus,
      request: job.body!, response, created_at: now(),
    });
    let target: WebhookTarget;
    try {
      target = await deps.targetOf(job.webhook_id);
    } catch (err) {
      // admin's internal API is unreachable: the attempt still gets its log row, and is retried
      await record(0, `webhook target unavailable: ${err instanceof Error ? err.message : String(err)}`);
      deps.deliveries.inc({ event: job.event_name ?? 'webhook', outcome: delivery.isLastAttempt ? 'dead' : 'failed' });
      if (delivery.isLastAttempt) return;
      throw new RetryableDelivery(`webhook attempt ${delivery.attempt} failed`);
    }
    if (!target.found || !target.enabled) {
      deps.logger.info({ webhook_id: job.webhook_id, delivery_id: job.delivery_id }, 'webhook deleted or disabled: delivery cancelled');
      return;
    }
    const headers: Record<string, string> = {
      ...target.headers,
      'user-agent': target.headers['user-agent'] ?? target.headers['User-Agent'] ?? WEBHOOK_USER_AGENT,
      'content-type': 'application/json',
      [SIGNATURE_HEADER]: signWebhookBody(target.signingSecret, job.body),
    };
    let httpStatus = 0;
    let response: string;
    let retry: boolean;
    try {
      const res = await deps.post({ url: target.endpoint, headers, body: job.body });
      httpStatus = res.status;
      response = res.body;
      retry = isRetryableStatus(res.status);
    } catch (err) {
      response = err instanceof Error ? err.message : String(err);
      retry = !(err instanceof OutboundError && err.kind === 'ssrf');
    }
    await record(httpStatus, response);
    const ok = httpStatus >= 200 && httpStatus < 300;
    const outcome = ok ? 'sent' : retry && !delivery.isLastAttempt ? 'failed' : 'dead';
    deps.deliveries.inc({ event: job.event_name ?? 'webhook', outcome });
    const fields = { webhook_id: job.webhook_id, delivery_id: job.delivery_id, attempt: delivery.attempt, http_status: httpStatus };
    if (ok) return;
    if (outcome === 'failed') {
      deps.logger.warn(fields, 'webhook attempt failed, will retry');
      throw new RetryableDelivery(`webhook attempt ${delivery.attempt} failed`);
    }
    deps.logger.error(fields, retry ? 'webhook delivery failed after its last attempt' : 'webhook delivery refused by the receiver, not retried');
  };
}
