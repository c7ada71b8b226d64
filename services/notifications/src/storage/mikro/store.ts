/**
 * @module @gatehouse/notifications/storage/mikro/store
 * {@link DeliveryStore} on MikroORM through libs/db (SQLite, PostgreSQL, MySQL, MariaDB).
 */
import { randomUUID } from 'node:crypto';
import type { Database } from '@gatehouse/db';
import {
  finalJobOf, type AttemptOutcome, type DeliveryAttempt, type DeliveryChannel, type DeliveryJob, type DeliveryStore,
  type JobStatus, type NewAttempt,
} from '../storage.ts';
import { NotificationAttempt, NotificationJob } from './schema.ts';

type AttemptRow = typeof NotificationAttempt['~entity'];
type JobRow = typeof NotificationJob['~entity'];

const toAttempt = (r: AttemptRow): DeliveryAttempt => ({
  id: r.id,
  jobId: r.jobId,
  channel: r.channel as DeliveryChannel,
  eventName: r.eventName,
  recipient: r.recipient,
  attempt: r.attempt,
  outcome: r.outcome as AttemptOutcome,
  error: r.error ?? null,
  createdAt: Number(r.createdAt),
});

const toJob = (r: JobRow): DeliveryJob => ({
  jobId: r.jobId,
  channel: r.channel as DeliveryChannel,
  eventName: r.eventName,
  status: r.status as JobStatus,
  error: r.error ?? null,
  updatedAt: Number(r.updatedAt),
});

/** Builds the store on a database opened with `notificationsSchema`. */
export function createMikroDeliveryStore(db: Database): DeliveryStore {
  return {
    async findJob(jobId) {
      const row = await db.fork().findOne(NotificationJob, { jobId });
      return row ? toJob(row) : null;
    },
    async recordAttempt(attempt: NewAttempt) {
      const row: DeliveryAttempt = { id: randomUUID(), ...attempt };
      // One transaction: the attempt and the job's final state commit together (idempotency).
      await db.transactional(async (em) => {
        em.persist(em.create(NotificationAttempt, { ...row }));
        const job = finalJobOf(attempt);
        if (!job) return;
        const existing = await em.findOne(NotificationJob, { jobId: job.jobId });
        if (!existing) em.persist(em.create(NotificationJob, { ...job }));
        else if (existing.status !== 'sent') em.assign(existing, { status: job.status, error: job.error, updatedAt: job.updatedAt });
      });
      return row;
    },
    async listAttempts(jobId) {
      const rows = await db.fork().find(NotificationAttempt, { jobId }, { orderBy: { attempt: 'asc', createdAt: 'asc' } });
      return rows.map(toAttempt);
    },
    async listDeadLetters(limit) {
      const rows = await db.fork().find(NotificationJob, { status: 'dead' }, { orderBy: { updatedAt: 'desc' }, limit });
      return rows.map(toJob);
    },
  };
}
