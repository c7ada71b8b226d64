/**
 * @module @gatehouse/notifications/storage/mikro/retention.test
 * notifications' retention rules (issue 23) on SQLite, PostgreSQL, MariaDB and MongoDB (FerretDB): delivery records older
 * than a week go, newer ones stay; two sweepers (replicas) at once delete each row once.
 */
import { randomUUID } from 'node:crypto';
import { describeRetention } from '@gatehouse/db/retention-suite';
import { notificationsSchema } from './schema.ts';
import { DELIVERY_RETENTION_SECONDS, NOTIFICATIONS_RETENTION } from './retention.ts';

const WEEK = DELIVERY_RETENTION_SECONDS;
const attempt = (createdAt: number): Record<string, unknown> => ({
  id: randomUUID(), job_id: randomUUID(), channel: 'email', event_name: 'verify_otp', recipient: 'ada@example.com', attempt: 1, outcome: 'sent', error: null, created_at: createdAt,
});
const job = (updatedAt: number, status: string): Record<string, unknown> => ({
  job_id: randomUUID(), channel: 'email', event_name: 'verify_otp', status, error: null, updated_at: updatedAt,
});

describeRetention(notificationsSchema, NOTIFICATIONS_RETENTION, {
  notification_attempts: { expired: (i, now) => attempt(now - WEEK - 1 - i), live: (i, now) => attempt(now - WEEK + 1 + i) },
  notification_jobs: { expired: (i, now) => job(now - WEEK - 1 - i, i % 2 ? 'dead' : 'sent'), live: (i, now) => job(now - WEEK + 1 + i, 'sent') },
});
