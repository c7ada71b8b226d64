/**
 * @module @gatehouse/notifications/storage/storage.suite
 * Conformance suite every {@link DeliveryStore} implementation passes (STYLE §8): memory,
 * SQLite (unit run), PostgreSQL and MariaDB (integration run).
 */
import { randomUUID } from 'node:crypto';
import { describe, it, expect, beforeAll, afterAll } from '@jest/globals';
import type { DeliveryStore, NewAttempt } from './storage.ts';

export interface StoreHandle {
  readonly store: DeliveryStore;
  close(): Promise<void>;
}

const attempt = (jobId: string, n: number, outcome: NewAttempt['outcome'], extra: Partial<NewAttempt> = {}): NewAttempt => ({
  jobId,
  channel: 'email',
  eventName: 'forgot_password',
  recipient: 'ann@acme.test',
  attempt: n,
  outcome,
  error: outcome === 'sent' ? null : `451 try again (${n})`,
  createdAt: 1_700_000_000 + n,
  ...extra,
});

/** Registers the suite for one implementation. `open` runs once in beforeAll. */
export function describeDeliveryStore(name: string, open: () => Promise<StoreHandle>): void {
  describe(`DeliveryStore conformance: ${name}`, () => {
    let handle: StoreHandle;
    beforeAll(async () => {
      handle = await open();
    });
    afterAll(async () => {
      await handle?.close();
    });

    it('has no final state for a job never attempted', async () => {
      expect(await handle.store.findJob(randomUUID())).toBeNull();
      expect(await handle.store.listAttempts(randomUUID())).toEqual([]);
    });

    it('records failed attempts without a final state, then sent with the job marked sent', async () => {
      const jobId = randomUUID();
      await handle.store.recordAttempt(attempt(jobId, 1, 'failed'));
      await handle.store.recordAttempt(attempt(jobId, 2, 'failed'));
      expect(await handle.store.findJob(jobId)).toBeNull();
      const sent = await handle.store.recordAttempt(attempt(jobId, 3, 'sent'));
      expect(sent.id).toMatch(/^[0-9a-f-]{36}$/);
      expect(await handle.store.findJob(jobId)).toEqual({
        jobId, channel: 'email', eventName: 'forgot_password', status: 'sent', error: null, updatedAt: 1_700_000_003,
      });
      const attempts = await handle.store.listAttempts(jobId);
      expect(attempts.map((a) => [a.attempt, a.outcome, a.error])).toEqual([
        [1, 'failed', '451 try again (1)'], [2, 'failed', '451 try again (2)'], [3, 'sent', null],
      ]);
      expect(attempts[2]).toEqual({ ...attempt(jobId, 3, 'sent'), id: sent.id });
    });

    it('records a dead letter with its error, listed newest first', async () => {
      const older = randomUUID();
      const newer = randomUUID();
      await handle.store.recordAttempt(attempt(older, 5, 'dead', { createdAt: 1_800_000_000, error: 'connection refused' }));
      await handle.store.recordAttempt(attempt(newer, 1, 'dead', { createdAt: 1_800_000_100, error: '550 no such user', eventName: 'verify_otp' }));
      expect(await handle.store.findJob(older)).toMatchObject({ status: 'dead', error: 'connection refused', updatedAt: 1_800_000_000 });
      const dead = await handle.store.listDeadLetters(2);
      expect(dead.map((j) => j.jobId)).toEqual([newer, older]);
      expect(dead[0]).toMatchObject({ eventName: 'verify_otp', error: '550 no such user' });
      expect(await handle.store.listDeadLetters(1)).toHaveLength(1);
    });

    it('keeps a sent job sent when a late duplicate fails for good', async () => {
      const jobId = randomUUID();
      await handle.store.recordAttempt(attempt(jobId, 1, 'sent'));
      await handle.store.recordAttempt(attempt(jobId, 2, 'dead'));
      expect(await handle.store.findJob(jobId)).toMatchObject({ status: 'sent', error: null });
      expect((await handle.store.listAttempts(jobId)).map((a) => a.outcome)).toEqual(['sent', 'dead']);
    });

    it('stores long errors and long recipients whole', async () => {
      const jobId = randomUUID();
      const recipient = `${'a'.repeat(64)}@${'b'.repeat(250)}.test`;
      const error = 'x'.repeat(1001);
      await handle.store.recordAttempt(attempt(jobId, 1, 'failed', { recipient, error }));
      const [row] = await handle.store.listAttempts(jobId);
      expect(row).toMatchObject({ recipient, error });
    });
  });
}
