/**
 * @module @gatehouse/notifications/storage/memory
 * In-memory {@link DeliveryStore} for unit tests; passes the same conformance suite as MikroORM.
 */
import { randomUUID } from 'node:crypto';
import { finalJobOf, type DeliveryAttempt, type DeliveryJob, type DeliveryStore, type NewAttempt } from './storage.ts';

export function createMemoryDeliveryStore(): DeliveryStore {
  const attempts: DeliveryAttempt[] = [];
  const jobs = new Map<string, DeliveryJob>();
  return {
    async findJob(jobId) {
      return jobs.get(jobId) ?? null;
    },
    async recordAttempt(attempt: NewAttempt) {
      const row: DeliveryAttempt = { id: randomUUID(), ...attempt };
      attempts.push(row);
      const job = finalJobOf(attempt);
      // A job already sent stays sent: a late duplicate cannot turn it into a dead letter.
      if (job && jobs.get(job.jobId)?.status !== 'sent') jobs.set(job.jobId, job);
      return row;
    },
    async listAttempts(jobId) {
      return attempts
        .filter((a) => a.jobId === jobId)
        .sort((a, b) => a.attempt - b.attempt || a.createdAt - b.createdAt);
    },
    async listDeadLetters(limit) {
      return [...jobs.values()]
        .filter((j) => j.status === 'dead')
        .sort((a, b) => b.updatedAt - a.updatedAt)
        .slice(0, limit);
    },
  };
}
