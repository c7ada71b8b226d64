/**
 * @module @gatehouse/mfa/domain/challenge
 * Opening an MFA session with an emailed code: login of an unverified email with SMTP configured
 * (behaviour.md §3.3 step 8). authn asks for it through mfa's internal API.
 */
import { randomUUID } from 'node:crypto';
import { randomToken, sha256Hex } from '@gatehouse/crypto';
import type { common } from '@gatehouse/contracts';
import { AppError } from '@gatehouse/errors';
import { queueOtpEmail } from '../events.ts';
import type { ArmedSession, MfaContext } from './deps.ts';
import { MFA_SESSION_TTL_SECONDS } from './mfa-session.ts';
import { isEmailServiceEnabled } from './options.ts';
import { generateOtp, OTP_RESEND_INTERVAL_SECONDS, OTP_TTL_SECONDS, otpDigest } from './otp.ts';

/** What the first step decided: the user, and the grant tokens are finally issued with (§4.1). */
export interface OtpChallenge {
  /** the user's User record (for the email template's `{{.user.*}}`); needs `id` and `email` */
  user: common.User | null;
  /** `email` (sms waits for the SMS channel) */
  channel: string;
  /** `login` (behaviour.md §4.2) */
  purpose: string;
  loginMethod: string;
  roles: readonly string[];
  scope: readonly string[];
  state: string | null;
  /** Unix seconds of the first step; 0 means now */
  authTime: number;
}

/**
 * Opens a 300 s MFA session for `challenge.user` and sends a code to the user's email, unless a code
 * sent less than 30 s ago is still live: then that code stands (behaviour.md §4.4 resend limit).
 * @returns the new session's handle and expiry (for the `mfa` cookie), and whether a code was sent
 * @throws AppError `invalid_argument` for an unsupported channel or purpose, or a user without an
 *   id or email; `failed_precondition` `email service not enabled` without SMTP
 */
export async function openOtpChallenge(c: MfaContext, challenge: OtpChallenge): Promise<ArmedSession & { codeSent: boolean }> {
  if (challenge.channel !== 'email') throw new AppError('invalid_argument', `unsupported OTP channel: ${challenge.channel}`);
  if (challenge.purpose !== 'login') throw new AppError('invalid_argument', `unsupported MFA session purpose: ${challenge.purpose}`);
  const user = challenge.user;
  const userId = user?.id ?? '';
  const email = user?.email ?? '';
  if (!user || !userId || !email) throw new AppError('invalid_argument', 'the user needs an id and an email address');
  if (!isEmailServiceEnabled(c.options)) throw new AppError('failed_precondition', 'email service not enabled');

  const now = c.now();
  const live = await c.store.findOtp(userId, 'email');
  const keep = live !== null && live.expiresAt > now && now - live.sentAt < OTP_RESEND_INTERVAL_SECONDS;
  const code = keep ? null : generateOtp();
  const handle = randomToken(32);
  const expiresAt = now + MFA_SESSION_TTL_SECONDS;
  await c.store.transaction(async (tx) => {
    await tx.sessions.create({
      id: randomUUID(), handleHash: sha256Hex(handle), userId, purpose: 'login', channel: 'email', contact: email, user,
      loginMethod: challenge.loginMethod, roles: [...challenge.roles], scope: [...challenge.scope], state: challenge.state,
      authTime: challenge.authTime || now, expiresAt, createdAt: now,
    });
    if (code === null) return;
    await tx.otps.put({ userId, channel: 'email', digest: otpDigest(c.otpKey, userId, 'email', code), expiresAt: now + OTP_TTL_SECONDS, sentAt: now });
    queueOtpEmail(tx, email, user, code);
  });
  return { handle, expiresAt, armedAt: now, codeSent: code !== null };
}
