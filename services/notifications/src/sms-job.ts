/**
 * @module @gatehouse/notifications/sms-job
 * The `sms.send` job contract (proto `gatehouse.events.v1.SmsSendJob`): what mfa enqueues through its
 * outbox when a one-time code goes to a phone, and what the notifications worker sends through
 * Twilio (behaviour.md §4.4 delivery).
 */
import type { KeyRing } from '@gatehouse/crypto';
import { newEnvelope, type Envelope } from '@gatehouse/bus';
import type { events } from '@gatehouse/contracts';
import { AppError } from '@gatehouse/errors';
import { openSealed } from './job.ts';

/** Envelope name of an SMS delivery job. */
export const SMS_SEND = 'sms.send';
/** The event label of an `sms.send` job in attempt records and metrics. */
export const SMS_EVENT = 'verify_otp';

/** A validated `sms.send` job. */
export type SmsJob = events.SmsSendJob;

/** behaviour.md §3.1 phone rule: an optional `+` and 10–15 digits. */
const PHONE = /^\+?[0-9]{10,15}$/;
/** behaviour.md §4.4 code alphabet; a job never carries anything else into a text message. */
const OTP = /^[A-HJ-NP-Z1-9]{6}$/;

/** The text of the message: `Your verification code is: <code>` (behaviour.md §4.4). */
export function smsBody(otp: string): string {
  return `Your verification code is: ${otp}`;
}

/**
 * Builds the envelope that carries one SMS job. Producers write it to their outbox in the same
 * transaction as the code it carries (ARCHITECTURE §4); the worker is idempotent on `id`.
 * @param source the producing service (`mfa`)
 */
export function smsJobEnvelope(job: SmsJob, source: string): Envelope<SmsJob> {
  return newEnvelope(SMS_SEND, source, job);
}

/**
 * Validates untrusted envelope data as an {@link SmsJob}. A job that fails here can never be sent,
 * so the worker dead-letters it at once instead of retrying.
 * A job's `sealed_otp` (issue 23) is opened with `jobKey` and wins over `otp`.
 * @param jobKey the job seal key (libs/crypto `jobSealKey`); needed for a sealed job
 * @throws AppError `invalid_argument` naming the first bad field, or when the sealed code does not open
 */
export function parseSmsJob(data: unknown, jobKey?: KeyRing): SmsJob {
  if (typeof data !== 'object' || data === null || Array.isArray(data)) throw new AppError('invalid_argument', 'sms job must be an object');
  const { to, user_id: userId, sealed_otp: sealed } = data as Record<string, unknown>;
  let { otp } = data as Record<string, unknown>;
  if (typeof to !== 'string' || !PHONE.test(to.trim())) throw new AppError('invalid_argument', 'invalid phone number');
  if (sealed !== undefined && sealed !== null && sealed !== '') otp = openSealed(jobKey, SMS_SEND, to, sealed, (s) => s);
  if (typeof otp !== 'string' || !OTP.test(otp)) throw new AppError('invalid_argument', 'sms job otp must be a 6-character code');
  if (typeof userId !== 'string' || userId === '') throw new AppError('invalid_argument', 'sms job user_id must be a non-empty string');
  return { to: to.trim(), otp, user_id: userId };
}
