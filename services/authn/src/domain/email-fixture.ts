/**
 * @module @gatehouse/authn/domain/email-fixture
 * Test helpers for the email flows (used by *.test.ts only): the authn fixture with SMTP,
 * verification and magic links on, and readers for the `email.send` jobs it queued.
 */
import { makeAuthn } from '../fixture.ts';
import type { AuthnOptions } from './options.ts';
import type { BusEvents } from '@gatehouse/contracts';
import { jobSealKey, openJobSecret } from '@gatehouse/crypto';

/** An `email.send` job of one of authn's link mails: its `verification_url` is always set. */
type LinkMail = Omit<BusEvents['email.send'], 'variables'> & { variables: { verification_url: string } };

/**
 * An `email.send` job's data as the worker reads it: `sealed_variables` opened with the job key of
 * `options` (issue 23) into `variables`; the sealed field is kept so tests can check it.
 * @throws AppError `internal` when the sealed variables do not open
 */
export function openMail(options: Pick<AuthnOptions, 'encryptionKey' | 'clientSecret'>, data: unknown): LinkMail {
  const job = data as BusEvents['email.send'];
  if (!job.sealed_variables) return job as LinkMail;
  const key = jobSealKey(options.encryptionKey, options.clientSecret);
  return { ...job, variables: JSON.parse(openJobSecret(key, 'email.send', job.to, job.sealed_variables)) as LinkMail['variables'] };
}

export const SMTP: Partial<AuthnOptions> = { smtpHost: 'smtp.example.com', smtpPort: 587, smtpSenderEmail: 'noreply@example.com' };

export function makeEmailAuthn(over: Partial<AuthnOptions> = {}) {
  const a = makeAuthn({ ...SMTP, enableEmailVerification: true, enableMagicLinkLogin: true, ...over });
  /** every queued email job, in commit order */
  // the outbox keeps envelopes untyped; these were emitted through events.ts (linkEmail, which always sets the link)
  const mails = (): LinkMail[] => a.storage.published.filter((e) => e.name === 'email.send').map((e) => openMail(a.options, e.data));
  /** the token of the newest mail (to `to`, when given) */
  const lastToken = (to?: string): string => {
    const job = mails().filter((m) => to === undefined || m.to === to).at(-1);
    if (!job) throw new Error('no mail queued');
    const token = new URL(job.variables.verification_url).searchParams.get('token');
    if (!token) throw new Error(`no token in ${job.variables.verification_url}`);
    return token;
  };
  return { ...a, mails, lastToken };
}
