/**
 * @module @gatehouse/mfa/domain/resend-otp
 * `POST /v1/resend_otp` (behaviour.md §4.3, §4.4): a new code on the session's channel (email or
 * SMS); the old code stops working and the session is re-armed for another 300 s.
 */
import { AppError } from '@gatehouse/errors';
import { queueOtp } from '../events.ts';
import { randomToken, sha256Hex } from '@gatehouse/crypto';
import type { ArmedSession, Auditor, MfaContext } from './deps.ts';
import { DECOY_LOGIN_METHOD, MFA_SESSION_TTL_SECONDS, requireMfaSession, type SessionClaim } from './mfa-session.ts';
import { assertChannelService } from './options.ts';
import { generateOtp, OTP_TTL_SECONDS, otpDigest } from './otp.ts';
import { mustClaimCodeSend, writeClaimedSend } from './send-gate.ts';

export const OTP_SENT = 'OTP has been sent. Please check your inbox';

/**
 * @param handle the `mfa` cookie's value
 * @param audit builds the `audit.recorded` row of this call (`user.otp_resent`, behaviour.md §5.7);
 *   a decoy session (unknown phone) is answered alike but sends and audits nothing
 * @returns the re-armed session (same handle, new expiry)
 * @throws AppError `unauthenticated` `invalid session`; `failed_precondition` `no one-time code to
 *   resend for this session` / `email service not enabled` / `SMS service not enabled`;
 *   `resource_exhausted` `please wait before requesting another OTP` (with `Retry-After`) within 30 s
 *   of the last send, or the destination's hourly or daily cap (issue 30 §2)
 */
export async function resendOtp(c: MfaContext, handle: string | undefined, claim: SessionClaim, audit?: Auditor): Promise<ArmedSession> {
  const session = await requireMfaSession(c, handle, claim, null);
  const { channel, contact } = session;
  if (!channel || !contact) throw new AppError('failed_precondition', 'no one-time code to resend for this session');
  assertChannelService(c.options, channel);
  const now = c.now();
  // claimed atomically, for a decoy too (issue 30 §2): of concurrent resends one sends
  await mustClaimCodeSend(c, channel, contact, now);
  const decoy = session.loginMethod === DECOY_LOGIN_METHOD;
  const code = generateOtp();
  const expiresAt = now + MFA_SESSION_TTL_SECONDS;
  const digest = decoy ? sha256Hex(randomToken(32)) : otpDigest(c.otpKey, session.userId, channel, code);
  await writeClaimedSend(c, channel, contact, () => c.store.transaction(async (tx) => {
    await tx.otps.put({ userId: session.userId, channel, digest, expiresAt: now + OTP_TTL_SECONDS, sentAt: now });
    await tx.sessions.rearm(session.id, expiresAt);
    if (decoy) return;
    queueOtp(tx, c.jobKey, channel, contact, code, session.user);
    if (audit) {
      tx.events.emit('audit.recorded', audit('user.otp_resent', {
        actor: { type: 'user', id: session.userId, email: session.user.email ?? null },
        resourceType: 'user', resourceId: session.userId, details: { channel }, at: now,
      }));
    }
  }));
  return { handle: handle!, expiresAt, armedAt: now };
}
