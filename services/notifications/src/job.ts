/**
 * @module @gatehouse/notifications/job
 * The `email.send` job contract: what authn, mfa and admin enqueue through the outbox
 * (ARCHITECTURE §4) and what the notifications worker consumes (behaviour.md §5.5).
 */
import { newEnvelope, type Envelope } from '@gatehouse/bus';
import type { events } from '@gatehouse/contracts';
import { openJobSecret, type KeyRing } from '@gatehouse/crypto';
import { AppError } from '@gatehouse/errors';

/** Envelope name of an email delivery job. */
export const EMAIL_SEND = 'email.send';

/** The six email template events (behaviour.md §5.5). */
export const EMAIL_EVENTS = [
  'basic_auth_signup',
  'magic_link_login',
  'update_email',
  'forgot_password',
  'invite_member',
  'verify_otp',
] as const;

export type EmailEventName = (typeof EMAIL_EVENTS)[number];

/**
 * The data of an `email.send` envelope (proto `gatehouse.events.v1.EmailSendJob`, the bus's
 * contract) once validated: one of the six events, and the User record (behaviour.md §5.3 fields) as
 * the plain object templates read as `{{.user.*}}`.
 */
export type EmailJob = Omit<events.EmailSendJob, 'event_name' | 'user' | 'variables'> & {
  event_name: EmailEventName;
  user: Record<string, unknown>;
  variables: { verification_url?: string; otp?: string };
};

/** True when `value` is one of the six email events. */
export function isEmailEventName(value: unknown): value is EmailEventName {
  return typeof value === 'string' && (EMAIL_EVENTS as readonly string[]).includes(value);
}

/**
 * Builds the envelope that carries one email job. Producers write it to their outbox in the same
 * transaction as the state change (ARCHITECTURE §4); the worker is idempotent on `id`.
 *
 * @param job the job data (not validated here; the worker validates on receipt)
 * @param source the producing service: `authn`, `mfa`, `admin`
 * @returns an envelope with a fresh UUIDv4 id and `occurredAt` = now (Unix seconds)
 */
export function emailJobEnvelope(job: EmailJob, source: string): Envelope<EmailJob> {
  return newEnvelope(EMAIL_SEND, source, job);
}

const CRLF = /[\r\n]/;

/**
 * Opens a sealed job secret (libs/crypto `openJobSecret`) and maps it with `read`.
 * @throws AppError `invalid_argument` when there is no key, or it does not open or read
 */
export function openSealed<T>(jobKey: KeyRing | undefined, job: string, to: string, sealed: unknown, read: (plain: string) => T): T {
  if (!jobKey) throw new AppError('invalid_argument', `${job} job is sealed and this worker has no job key`);
  if (typeof sealed !== 'string') throw new AppError('invalid_argument', `${job} job sealed secret must be a string`);
  try {
    return read(openJobSecret(jobKey, job, to, sealed));
  } catch (cause) {
    throw new AppError('invalid_argument', `${job} job sealed secret does not open with this deployment's key`, { cause });
  }
}
const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Validates untrusted envelope data as an {@link EmailJob}. A job that fails here can never be
 * sent, so the worker dead-letters it at once instead of retrying.
 *
 * A job's `sealed_variables` (issue 23) is opened with `jobKey` and wins over `variables`: producers
 * seal the link or code so the outbox and the bus never hold it in clear.
 *
 * @param jobKey the job seal key (libs/crypto `jobSealKey`); needed for a sealed job
 * @throws AppError `invalid_argument` naming the first bad field, or when the sealed variables do not
 *   open (wrong key, another recipient, tampering): such a job can never be sent
 */
export function parseEmailJob(data: unknown, jobKey?: KeyRing): EmailJob {
  if (!isRecord(data)) throw new AppError('invalid_argument', 'email job must be an object');
  const { event_name: eventName, to, user, sealed_variables: sealed } = data;
  let { variables } = data;
  if (!isEmailEventName(eventName)) {
    throw new AppError('invalid_argument', `invalid event name ${String(eventName)}`);
  }
  // The address goes into an SMTP envelope and a header: refuse anything that could inject lines.
  if (typeof to !== 'string' || to.trim() === '' || CRLF.test(to) || !to.includes('@')) {
    throw new AppError('invalid_argument', 'invalid email address');
  }
  if (!isRecord(user)) throw new AppError('invalid_argument', 'email job user must be an object');
  if (sealed !== undefined && sealed !== null && sealed !== '') variables = openSealed(jobKey, EMAIL_SEND, to, sealed, (s) => JSON.parse(s) as unknown);
  const vars = variables === undefined ? {} : variables;
  if (!isRecord(vars)) throw new AppError('invalid_argument', 'email job variables must be an object');
  const out: EmailJob['variables'] = {};
  for (const key of ['verification_url', 'otp'] as const) {
    const value = vars[key];
    if (value === undefined || value === null) continue;
    if (typeof value !== 'string') throw new AppError('invalid_argument', `email job ${key} must be a string`);
    out[key] = value;
  }
  if (eventName === 'verify_otp' ? !out.otp : !out.verification_url) {
    const missing = eventName === 'verify_otp' ? 'otp' : 'verification_url';
    throw new AppError('invalid_argument', `email job ${eventName} requires ${missing}`);
  }
  return { event_name: eventName, to: to.trim(), user, variables: out };
}
