/**
 * @module @gatehouse/notifications/metrics
 * `gatehouse_notification_deliveries_total{event,outcome}` (STYLE §6) on the process registry.
 */
import { Counter, type Registry } from 'prom-client';

export const DELIVERIES_METRIC = 'gatehouse_notification_deliveries_total';

export type DeliveryCounter = Counter<'event' | 'outcome'>;

/**
 * Returns the deliveries counter registered on `registry`, creating it once; a second service
 * built on the same registry (tests, all-in-one restarts) reuses it instead of throwing.
 * Labels: `event` (an email event name, or `invalid` for a malformed job), `outcome`
 * (`sent`, `failed`, `dead`).
 */
export function deliveryCounter(registry: Registry): DeliveryCounter {
  const existing = registry.getSingleMetric(DELIVERIES_METRIC);
  if (existing) return existing as DeliveryCounter;
  return new Counter({
    name: DELIVERIES_METRIC,
    help: 'Notification delivery attempts by event and outcome (sent, failed = will retry, dead = gave up)',
    labelNames: ['event', 'outcome'] as const,
    registers: [registry],
  });
}
