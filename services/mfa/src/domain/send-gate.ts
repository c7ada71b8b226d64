/**
 * @module @gatehouse/mfa/domain/send-gate
 * Every one-time code mfa sends is claimed first (issue 30 §2): one code per destination every 30 s
 * (behaviour.md §4.4; concurrent requests send one), the per-destination hourly and daily caps, and
 * the allowed SMS countries, on the attempt slots every mfa replica shares (libs/auth `send-caps.ts`).
 * Decoy sessions (unknown phones) claim the same way, so they answer like real ones.
 */
import { claimSend, endSendInterval, sendCapsOf, type SendClaim } from '@gatehouse/auth';
import { AppError } from '@gatehouse/errors';
import type { OtpChannel } from '../storage/ports.ts';
import type { MfaContext } from './deps.ts';
import { OTP_RESEND_INTERVAL_SECONDS } from './otp.ts';

/** The interval's purpose: codes of every flow share it (one code per destination at a time). */
const CODE_PURPOSE = 'code';
export const PLEASE_WAIT = 'please wait before requesting another OTP';

/**
 * Claims one code to `destination` on `channel`.
 * @returns `{ send: true }`, or `{ send: false, retryAfter }` while a code sent less than 30 s ago holds the interval
 * @throws AppError `resource_exhausted` (hourly or daily cap, `Retry-After`); `failed_precondition`
 *   for an SMS to a country outside `--sms-allowed-country-codes`
 */
export function claimCodeSend(c: MfaContext, channel: OtpChannel, destination: string, now: number): Promise<SendClaim> {
  return claimSend(c.store.failures, sendCapsOf(c.options), { channel, destination, purpose: CODE_PURPOSE, intervalSeconds: OTP_RESEND_INTERVAL_SECONDS }, now);
}

/**
 * {@link claimCodeSend} for a request that must send (resend_otp, the setup in an MFA session).
 * @throws AppError `resource_exhausted` {@link PLEASE_WAIT} with `Retry-After` inside the interval,
 *   and whatever {@link claimCodeSend} throws
 */
export async function mustClaimCodeSend(c: MfaContext, channel: OtpChannel, destination: string, now: number): Promise<void> {
  const r = await claimCodeSend(c, channel, destination, now);
  if (!r.send) throw new AppError('resource_exhausted', PLEASE_WAIT, { headers: { 'Retry-After': String(r.retryAfter) }, reason: 'otp_resend' });
}

/** The code sent to `destination` was used up: the next one may go at once. */
export function codeUsed(c: MfaContext, channel: OtpChannel, destination: string): Promise<void> {
  return endSendInterval(c.store.failures, channel, destination, CODE_PURPOSE);
}

/**
 * Runs `write`, the transaction that stores and queues a code claimed by {@link claimCodeSend}; when it
 * fails nothing was sent, so the interval is given back and the next request may send at once (the
 * hourly and daily caps keep counting the attempt).
 * @returns what `write` returns
 * @throws whatever `write` throws, after the interval is given back
 */
export async function writeClaimedSend<T>(c: MfaContext, channel: OtpChannel, destination: string, write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (err) {
    await codeUsed(c, channel, destination).catch(() => undefined);
    throw err;
  }
}
