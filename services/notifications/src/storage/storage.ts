/**
 * @module @gatehouse/notifications/storage/storage
 * What the worker needs from storage: the attempt log (`notification_attempts`) and the per-job
 * final state (`notification_jobs`) that makes delivery idempotent and holds dead letters.
 */

export type DeliveryChannel = 'email' | 'sms';
export type AttemptOutcome = 'sent' | 'failed' | 'dead';
export type JobStatus = 'sent' | 'dead';

/** One row of `notification_attempts`. */
export interface DeliveryAttempt {
  readonly id: string;
  /** the envelope id */
  readonly jobId: string;
  readonly channel: DeliveryChannel;
  readonly eventName: string;
  /** the recipient address (the user's email) */
  readonly recipient: string;
  /** 1-based delivery attempt number, as the bus counts it */
  readonly attempt: number;
  readonly outcome: AttemptOutcome;
  /** the failure, for `failed` and `dead`; null for `sent` */
  readonly error: string | null;
  /** Unix seconds */
  readonly createdAt: number;
}

/** One row of `notification_jobs`: a job that reached a final state. */
export interface DeliveryJob {
  readonly jobId: string;
  readonly channel: DeliveryChannel;
  readonly eventName: string;
  readonly status: JobStatus;
  /** the last error, for dead letters */
  readonly error: string | null;
  /** Unix seconds */
  readonly updatedAt: number;
}

export type NewAttempt = Omit<DeliveryAttempt, 'id'>;

export interface DeliveryStore {
  /** The job's final state, or null while it has none (never attempted, or only failed so far). */
  findJob(jobId: string): Promise<DeliveryJob | null>;
  /**
   * Appends one attempt. For outcome `sent` or `dead` it also upserts the job's final status in
   * the same transaction, so "sent" can never be recorded without its attempt or the reverse.
   */
  recordAttempt(attempt: NewAttempt): Promise<DeliveryAttempt>;
  /** Attempts of one job, oldest first (by attempt number, then time). */
  listAttempts(jobId: string): Promise<DeliveryAttempt[]>;
  /** Dead letters, newest first, at most `limit`. */
  listDeadLetters(limit: number): Promise<DeliveryJob[]>;
}

/** The job row that an attempt implies, or null for a `failed` attempt (not final). */
export function finalJobOf(attempt: NewAttempt): DeliveryJob | null {
  if (attempt.outcome === 'failed') return null;
  return {
    jobId: attempt.jobId,
    channel: attempt.channel,
    eventName: attempt.eventName,
    status: attempt.outcome,
    error: attempt.error,
    updatedAt: attempt.createdAt,
  };
}
