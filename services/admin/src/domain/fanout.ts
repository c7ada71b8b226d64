/**
 * @module @gatehouse/admin/domain/fanout
 * The delivery trigger (behaviour.md §5.4): for one committed domain event of §8, a durable
 * `webhook.deliver` job per enabled webhook of that event, written to admin's outbox in one
 * transaction, so the jobs survive a restart and the worker resumes them.
 */
import type { AdminDomain } from './deps.ts';
import { WEBHOOK_EVENTS } from './events.ts';
import { deliveryIdOf, webhookBody } from './payload.ts';

/** One §8 event as it came off the bus. */
export interface DomainEvent {
  id: string;
  name: string;
  /** Unix seconds of the event */
  occurredAt: number;
  data: Record<string, unknown>;
}

/** Queues the deliveries of `event`; resolves with how many were queued (0 for a non-§8 name). */
export async function fanOutEvent(d: AdminDomain, event: DomainEvent): Promise<number> {
  if (!WEBHOOK_EVENTS.includes(event.name)) return 0;
  const hooks = await d.store.webhooks.enabledFor(event.name);
  if (hooks.length === 0) return 0;
  await d.store.transaction(async (tx) => {
    for (const w of hooks) {
      const deliveryId = deliveryIdOf(event.id, w.id);
      const body = webhookBody({
        deliveryId, webhookId: w.id, eventName: event.name, eventDescription: w.eventDescription, createdAt: event.occurredAt, data: event.data,
      });
      tx.events.emit('webhook.deliver', { delivery_id: deliveryId, webhook_id: w.id, event_name: event.name, body });
    }
  });
  return hooks.length;
}
