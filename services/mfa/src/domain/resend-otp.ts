/**
 * @module @gatehouse/mfa/domain/resend-otp
 * `POST /v1/resend_otp` (behaviour.md §4.3, §4.4): a new code on the session's channel; the old code
 * stops working and the session is re-armed for another 300 s.
 */
import { AppError } from '@gatehouse/errors';
import { queueOtpEmail } from '../events.ts';
import type { ArmedSession, MfaContext } from './deps.ts';
import { MFA_SESSION_TTL_SECONDS, requireMfaSession, type SessionClaim } from './mfa-session.ts';
import { isEmailServiceEnabled } from './options.ts';
import { generateOtp, OTP_RESEND_INTERVAL_SECONDS, OTP_TTL_SECONDS, otpDigest } from './otp.ts';

export const OTP_SENT = 'OTP has been sent. Please check your inbox';

/**
 * @param handle the `mfa` cookie's value
 * @returns the re-armed session (same handle, new expiry)
 * @throws AppError `unauthenticated` `invalid session`; `failed_precondition` `no one-time code to
 *   resend for this session` / `email service not enabled` / `SMS service not enabled`;
 *   `resource_exhausted` `please wait before requesting another OTP` (with `Retry-After`) within 30 s
 *   of the last send
 */
export async function resendOtp(c: MfaContext, handle: string | undefined, claim: SessionClaim): Promise<ArmedSession> {
  const session = await requireMfaSession(c, handle, claim, null);
  const { channel, contact } = session;
  if (!channel || !contact) throw new AppError('failed_precondition', 'no one-time code to resend for this session');
  // the SMS channel arrives with the SMS leg of the mfa service; no session of this release has it
  if (channel === 'sms') throw new AppError('failed_precondition', 'SMS service not enabled');
  if (!isEmailServiceEnabled(c.options)) throw new AppError('failed_precondition', 'email service not enabled');
  const now = c.now();
  const last = await c.store.findOtp(session.userId, channel);
  if (last && now - last.sentAt < OTP_RESEND_INTERVAL_SECONDS) {
    throw new AppError('resource_exhausted', 'please wait before requesting another OTP', {
      headers: { 'Retry-After': String(OTP_RESEND_INTERVAL_SECONDS - (now - last.sentAt)) },
      reason: 'otp_resend',
    });
  }
  const code = generateOtp();
  const expiresAt = now + MFA_SESSION_TTL_SECONDS;
  await c.store.transaction(async (tx) => {
    await tx.otps.put({ userId: session.userId, channel, digest: otpDigest(c.otpKey, session.userId, channel, code), expiresAt: now + OTP_TTL_SECONDS, sentAt: now });
    await tx.sessions.rearm(session.id, expiresAt);
    queueOtpEmail(tx, contact, session.user, code);
  });
  return { handle: handle!, expiresAt, armedAt: now };
}
