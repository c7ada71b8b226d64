/**
 * @module @gatehouse/mfa/domain/challenge
 * Opening an MFA session with a code: login of an unverified email with SMTP configured (behaviour.md
 * §3.3 step 8), and the gate's G2/G3 challenges (§4.1). authn asks for it through mfa's internal API.
 */
import { randomUUID } from 'node:crypto';
import { randomToken, sha256Hex } from '@gatehouse/crypto';
import type { common } from '@gatehouse/contracts';
import { AppError } from '@gatehouse/errors';
import { deliverOtp } from '../events.ts';
import type { OtpChannel } from '../storage/ports.ts';
import type { ArmedSession, MfaContext } from './deps.ts';
import { MFA_SESSION_TTL_SECONDS } from './mfa-session.ts';
import { isEmailServiceEnabled, isSmsServiceEnabled } from './options.ts';
import { generateOtp, OTP_RESEND_INTERVAL_SECONDS, OTP_TTL_SECONDS, otpDigest } from './otp.ts';

/** What the first step decided: the user, and the grant tokens are finally issued with (§4.1). */
export interface OtpChallenge {
  /** the user's User record (for the email template's `{{.user.*}}`); needs `id` and `email` */
  user: common.User | null;
  /** `email` or `sms` */
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
 * The channel's service is configured, else 400 (behaviour.md §4.3 resend_otp wording).
 * @throws AppError `failed_precondition` `email service not enabled` / `SMS service not enabled`
 */
export function assertChannelServiceEnabled(c: MfaContext, channel: OtpChannel): void {
  if (channel === 'email' && !isEmailServiceEnabled(c.options)) throw new AppError('failed_precondition', 'email service not enabled');
  if (channel === 'sms' && !isSmsServiceEnabled(c.options)) throw new AppError('failed_precondition', 'SMS service not enabled');
}

/**
 * Opens a 300 s MFA session for `challenge.user` and sends a code to the user's email or phone, unless
 * a code sent less than 30 s ago is still live: then that code stands (behaviour.md §4.4 resend limit).
 * @returns the new session's handle and expiry (for the `mfa` cookie), and whether a code was sent
 * @throws AppError `invalid_argument` for an unsupported channel or purpose, or a user without an
 *   id or the channel's address; `failed_precondition` `email service not enabled` / `SMS service
 *   not enabled` without the channel's service
 */
export async function openOtpChallenge(c: MfaContext, challenge: OtpChallenge): Promise<ArmedSession & { codeSent: boolean }> {
  if (challenge.channel !== 'email' && challenge.channel !== 'sms') throw new AppError('invalid_argument', `unsupported OTP channel: ${challenge.channel}`);
  const channel: OtpChannel = challenge.channel;
  if (challenge.purpose !== 'login') throw new AppError('invalid_argument', `unsupported MFA session purpose: ${challenge.purpose}`);
  const user = challenge.user;
  const userId = user?.id ?? '';
  const email = (channel === 'email' ? user?.email : user?.phone_number) ?? '';
  if (!user || !userId || !email) throw new AppError('invalid_argument', `the user needs an id and ${channel === 'email' ? 'an email address' : 'a phone number'}`);
  assertChannelServiceEnabled(c, channel);

  const now = c.now();
  const live = await c.store.findOtp(userId, channel);
  const keep = live !== null && live.expiresAt > now && now - live.sentAt < OTP_RESEND_INTERVAL_SECONDS;
  const code = keep ? null : generateOtp();
  const handle = randomToken(32);
  const expiresAt = now + MFA_SESSION_TTL_SECONDS;
  await c.store.transaction(async (tx) => {
    await tx.sessions.create({
      id: randomUUID(), handleHash: sha256Hex(handle), userId, purpose: 'login', channel, contact: email, user,
      loginMethod: challenge.loginMethod, roles: [...challenge.roles], scope: [...challenge.scope], state: challenge.state,
      authTime: challenge.authTime || now, expiresAt, createdAt: now,
    });
    if (code === null) return;
    await tx.otps.put({ userId, channel, digest: otpDigest(c.otpKey, userId, channel, code), expiresAt: now + OTP_TTL_SECONDS, sentAt: now });
    deliverOtp(tx, channel, email, user, code);
  });
  return { handle, expiresAt, armedAt: now, codeSent: code !== null };
}
