/**
 * @module @gatehouse/admin/consumers/webhook-fanout
 * The delivery trigger (behaviour.md §5.4, §8): every §8 domain event on the bus becomes one
 * `webhook.deliver` job per enabled webhook of that event, through admin's outbox.
 */
import type { Envelope } from '@gatehouse/bus';
import type { AdminDomain } from '../domain/deps.ts';
import { fanOutEvent } from '../domain/fanout.ts';

/** Durable consumer name. */
export const FANOUT_CONSUMER = 'admin-webhooks';

/** The handler given to `Bus.consume` for the §8 event names. */
export function webhookFanoutHandler(d: AdminDomain) {
  return async (envelope: Envelope): Promise<void> => {
    const data = envelope.data && typeof envelope.data === 'object' ? envelope.data as Record<string, unknown> : {};
    const queued = await fanOutEvent(d, { id: envelope.id, name: envelope.name, occurredAt: envelope.occurredAt, data });
    if (queued > 0) d.logger.debug({ event: envelope.name, event_id: envelope.id, deliveries: queued }, 'webhook deliveries queued');
  };
}
