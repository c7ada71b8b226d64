/**
 * @module @gatehouse/notifications/webhooks
 * Wires the webhook worker (behaviour.md §5.4) and the stored-template lookup (§5.5) to admin's
 * internal API: webhook targets are read at every attempt, templates through a 5 s cache, and
 * attempts are committed to this worker's outbox as `webhook.attempted` events for admin's log.
 */
import type { Bus, Subscription } from '@gatehouse/bus';
import type { admin, ProtoServices } from '@gatehouse/contracts';
import { newEnvelope } from '@gatehouse/bus';
import type { Database } from '@gatehouse/db';
import { guardedPost } from '@gatehouse/delivery';
import type { Logger, Registry } from '@gatehouse/observability';
import { createCallContext, type ClientOf } from '@gatehouse/rpc';
import { BACKCHANNEL_LOGOUT_BACKOFF_MS, BACKCHANNEL_LOGOUT_CONSUMER, BACKCHANNEL_LOGOUT_MAX_ATTEMPTS, createBackchannelLogoutHandler } from './consumers/backchannel-logout.ts';
import { createWebhookDeliverHandler, WEBHOOK_BACKOFF_MS, WEBHOOK_CONSUMER, WEBHOOK_MAX_ATTEMPTS } from './consumers/webhook-deliver.ts';
import type { TemplateLookup } from './consumers/email-send.ts';
import { deliveryCounter } from './metrics.ts';

/** admin's internal API (proto `gatehouse.admin.v1.AdminInternal`). */
export type AdminInternalClient = ClientOf<ProtoServices['gatehouse.admin.v1.AdminInternal']>;

/** How long a stored template (or its absence) is reused before admin is asked again. */
export const TEMPLATE_CACHE_MS = 5000;

const internalCall = () => createCallContext({ protocol: 'grpc' });

const stringMap = (v: unknown): Record<string, string> =>
  Object.fromEntries(Object.entries((v ?? {}) as Record<string, unknown>).filter(([, x]) => typeof x === 'string')) as Record<string, string>;

/**
 * The stored template of an event through admin, cached for {@link TEMPLATE_CACHE_MS}. When admin
 * cannot be reached the lookup throws, and the mail is retried rather than sent with the wrong body.
 */
export function adminTemplateLookup(client: AdminInternalClient): TemplateLookup {
  const cache = new Map<string, { at: number; value: Awaited<ReturnType<TemplateLookup>> }>();
  return async (event) => {
    const hit = cache.get(event);
    if (hit && Date.now() - hit.at < TEMPLATE_CACHE_MS) return hit.value;
    const res: admin.StoredEmailTemplateResponse = await client.StoredEmailTemplate({ event_name: event }, internalCall());
    const value = res.found ? { subject: res.subject, template: res.template } : undefined;
    cache.set(event, { at: Date.now(), value });
    return value;
  };
}

export interface WebhookWorkerDeps {
  bus: Bus;
  db: Database;
  admin: AdminInternalClient;
  /** `--allow-private-webhook-targets` */
  allowPrivate: boolean;
  logger: Logger;
  registry: Registry;
}

/** Starts the durable `webhook.deliver` consumer. */
export function startWebhookWorker(d: WebhookWorkerDeps): Promise<Subscription> {
  const handler = createWebhookDeliverHandler({
    async targetOf(webhookId) {
      const t = await d.admin.WebhookTarget({ webhook_id: webhookId }, internalCall());
      return { found: t.found, enabled: t.enabled, endpoint: t.endpoint, headers: stringMap(t.headers), signingSecret: t.signing_secret };
    },
    post: (p) => guardedPost({ ...p, allowPrivate: d.allowPrivate }),
    async recordAttempt(attempt) {
      await d.db.transactional(async (em) => {
        d.db.outbox.enqueue(em, newEnvelope('webhook.attempted', 'notifications', attempt));
      });
    },
    logger: d.logger,
    deliveries: deliveryCounter(d.registry),
  });
  return d.bus.consume({ durable: WEBHOOK_CONSUMER, names: ['webhook.deliver'], maxAttempts: WEBHOOK_MAX_ATTEMPTS, backoffMs: WEBHOOK_BACKOFF_MS, handler });
}

export interface BackchannelLogoutWorkerDeps {
  bus: Bus;
  /** `--allow-private-webhook-targets`: the same outbound guard as webhooks */
  allowPrivate: boolean;
  logger: Logger;
  registry: Registry;
}

/**
 * Starts the durable `oauth.backchannel_logout` consumer (issue 34 §6, OIDC Back-Channel Logout 1.0
 * §2.5): authn's logout tokens POSTed to the relying parties with the webhook guard and retries.
 */
export function startBackchannelLogoutWorker(d: BackchannelLogoutWorkerDeps): Promise<Subscription> {
  const handler = createBackchannelLogoutHandler({
    post: (p) => guardedPost({ ...p, allowPrivate: d.allowPrivate }),
    logger: d.logger,
    deliveries: deliveryCounter(d.registry),
  });
  return d.bus.consume({
    durable: BACKCHANNEL_LOGOUT_CONSUMER, names: ['oauth.backchannel_logout'], maxAttempts: BACKCHANNEL_LOGOUT_MAX_ATTEMPTS, backoffMs: BACKCHANNEL_LOGOUT_BACKOFF_MS, handler,
  });
}
