/**
 * @module @gatehouse/mfa/domain/challenge
 * Opening an MFA session with an emailed code: login of an unverified email with SMTP configured
 * (behaviour.md §3.3 step 8). authn calls it through mfa's internal API.
 */
import { randomUUID } from 'node:crypto';
import { randomToken, sha256Hex } from '@gatehouse/crypto';
import { AppError } from '@gatehouse/errors';
import type { CallContext } from '@gatehouse/rpc';
import type { mfa } from '@gatehouse/contracts';
import type { MfaContext } from './deps.ts';
import { armCookie, MFA_SESSION_TTL_SECONDS } from './mfa-session.ts';
import { isEmailServiceEnabled } from './options.ts';
import { generateOtp, OTP_RESEND_INTERVAL_SECONDS, OTP_TTL_SECONDS, otpDigest } from './otp.ts';
import { queueOtpEmail } from './otp-email.ts';


/**
 * Opens a 300 s MFA session for `req.user`, sends a code to the user's email (unless a code sent
 * less than 30 s ago is still live: then that code stands, behaviour.md §4.4 resend limit), and
 * pushes the `mfa` cookie onto `ctx.setCookies`.
 * @returns `{expires_at}` (Unix s) and whether a new code was sent
 * @throws AppError `invalid_argument` for an unsupported channel or purpose, or a user without an
 *   id or email; `failed_precondition` `email service not enabled` without SMTP
 */
export async function openOtpChallenge(c: MfaContext, ctx: CallContext, req: mfa.OpenOtpChallengeRequest): Promise<{ expires_at: number; code_sent: boolean }> {
  if (req.channel !== 'email') throw new AppError('invalid_argument', `unsupported OTP channel: ${req.channel}`);
  if (req.purpose !== 'login') throw new AppError('invalid_argument', `unsupported MFA session purpose: ${req.purpose}`);
  // the email template's {{.user.*}} reads the wire User as plain fields
  const user: Record<string, unknown> | null = req.user ? { ...req.user } : null;
  const userId = req.user?.id ?? '';
  const email = req.user?.email ?? '';
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
      loginMethod: req.login_method, roles: [...req.roles], scope: [...req.scope], state: req.state ?? null,
      authTime: req.auth_time || now, expiresAt, createdAt: now,
    });
    if (code === null) return;
    await tx.otps.put({ userId, channel: 'email', digest: otpDigest(c.otpKey, userId, 'email', code), expiresAt: now + OTP_TTL_SECONDS, sentAt: now });
    queueOtpEmail(tx, email, user, code);
  });
  ctx.setCookies.push(armCookie(c, handle, expiresAt, now));
  return { expires_at: expiresAt, code_sent: code !== null };
}
