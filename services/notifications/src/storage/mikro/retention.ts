/**
 * @module @gatehouse/notifications/storage/mikro/retention
 * notifications' retention rules (issue 23), run by the libs/db sweeper (`startSweeper`); the
 * README's "Retention" table documents each. Times are Unix seconds.
 */
import type { RetentionRule } from '@gatehouse/db';

/**
 * How long delivery records are kept: 7 days. A job row is what makes a redelivered job a no-op once
 * sent; redeliveries come within the retry backoff (seconds) and duplicate publishes within the
 * JetStream duplicate window (2 min), so a week is far past any redelivery and leaves time to read
 * the attempts when a mail went missing.
 */
export const DELIVERY_RETENTION_SECONDS = 7 * 24 * 3600;

export const NOTIFICATIONS_RETENTION: readonly RetentionRule[] = [
  { table: 'notification_attempts', key: 'id', expired: { column: 'created_at', before: (now) => now - DELIVERY_RETENTION_SECONDS } },
  // a job row is written only at its final status (sent or dead)
  { table: 'notification_jobs', key: 'job_id', expired: { column: 'updated_at', before: (now) => now - DELIVERY_RETENTION_SECONDS } },
];
