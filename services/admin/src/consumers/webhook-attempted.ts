/**
 * @module @gatehouse/admin/consumers/webhook-attempted
 * Writes one WebhookLog row per delivery attempt the notifications worker reports (behaviour.md §5.4
 * logging). Attempts of a webhook deleted meanwhile are dropped with it.
 */
import type { Envelope } from '@gatehouse/bus';
import type { BusEvents } from '@gatehouse/contracts';
import type { Logger } from '@gatehouse/observability';
import { isUuid } from '../domain/events.ts';
import type { AdminStore } from '../storage/ports.ts';

/** Durable consumer name. */
export const ATTEMPTS_CONSUMER = 'admin-webhook-logs';

/** The handler given to `Bus.consume` for `webhook.attempted`. */
export function webhookAttemptedHandler(store: AdminStore, logger: Logger) {
  return async (envelope: Envelope): Promise<void> => {
    const a = (envelope.data ?? {}) as Partial<BusEvents['webhook.attempted']>;
    if (!isUuid(String(a.id)) || !isUuid(String(a.webhook_id)) || !isUuid(String(a.delivery_id))) {
      logger.error({ event_id: envelope.id }, 'malformed webhook attempt dropped');
      return;
    }
    if (!(await store.webhooks.get(a.webhook_id!))) return;
    const at = Number(a.created_at) || envelope.occurredAt;
    await store.webhookLogs.insert({
      id: a.id!, webhookId: a.webhook_id!, deliveryId: a.delivery_id!, attempt: Number(a.attempt) || 1, httpStatus: Number(a.http_status) || 0,
      request: String(a.request ?? ''), response: String(a.response ?? ''), createdAt: at, updatedAt: at,
    });
  };
}
