/**
 * @module @gatehouse/auth/send-caps
 * Send caps (issue 30 §2): every request that sends a message (a one-time code by email or SMS, or a
 * link mail) claims the send on the service's {@link AttemptLog} before anything is queued:
 * - the resend interval, one message per destination and purpose per interval (30 s for codes, 60 s
 *   for link mails; behaviour.md §4.4, §10), claimed atomically so concurrent requests send one;
 * - per destination (email address or phone number), at most `--send-cap-per-hour` (default 5) and
 *   `--send-cap-per-day` (default 10) messages, on top of the per-IP request rate (the defaults of
 *   Twilio Verify's per-number rate limits; Keycloak's "max login failures"-style counters are per
 *   user, these are per destination so an unknown address is capped like a known one);
 * - SMS only to the country calling codes of `--sms-allowed-country-codes` (default: any).
 * The counters live in the service's database (shared by its replicas), keyed by a hash of the
 * destination, so nothing readable about the address is stored.
 */
import { sha256Hex } from '@gatehouse/crypto';
import { AppError } from '@gatehouse/errors';
import type { AttemptClaim, AttemptLog } from './lockout.ts';

export const SEND_CAP_PER_HOUR_DEFAULT = 5;
export const SEND_CAP_PER_DAY_DEFAULT = 10;
export const SEND_CAP_MESSAGE = 'too many messages to this destination, please try again later';
export const SMS_COUNTRY_REFUSED = 'sending SMS to this country is not allowed';

/** The operator's send caps (flags `--send-cap-per-hour`, `--send-cap-per-day`, `--sms-allowed-country-codes`). */
export interface SendCapOptions {
  /** messages per destination per hour; 0 = no hourly cap */
  perHour: number;
  /** messages per destination per 24 h; 0 = no daily cap */
  perDay: number;
  /** E.164 country calling codes an SMS may go to (`+1`, `+44`); empty = any */
  allowedCountryCodes: readonly string[];
}

/** The caps of a parsed configuration (a field left out takes its flag's default). */
export const sendCapsOf = (config: { sendCapPerHour?: number; sendCapPerDay?: number; smsAllowedCountryCodes?: readonly string[] }): SendCapOptions => ({
  perHour: config.sendCapPerHour ?? SEND_CAP_PER_HOUR_DEFAULT,
  perDay: config.sendCapPerDay ?? SEND_CAP_PER_DAY_DEFAULT,
  allowedCountryCodes: config.smsAllowedCountryCodes ?? [],
});

/** One message to send: where, by which channel, and the purpose its resend interval is counted by. */
export interface SendRequest {
  channel: 'email' | 'sms';
  /** the normalised address or E.164 number */
  destination: string;
  /** what the message is for (`otp`, `forgot_password`, …): one interval per destination and purpose */
  purpose: string;
  /** seconds between two messages of this purpose to this destination */
  intervalSeconds: number;
}

/** The outcome of {@link claimSend}: send, or wait `retryAfter` seconds (the interval holds a message already). */
export type SendClaim = { send: true } | { send: false; retryAfter: number };

/**
 * Refuses an SMS to a number outside the allowed country codes (none configured: any number).
 * @throws AppError `failed_precondition` {@link SMS_COUNTRY_REFUSED}
 */
export function assertSmsCountryAllowed(caps: SendCapOptions, phone: string): void {
  if (caps.allowedCountryCodes.length === 0) return;
  const n = phone.replace(/[\s().-]/g, '').replace(/^00/, '+');
  if (!caps.allowedCountryCodes.some((code) => n.startsWith(code))) {
    throw new AppError('failed_precondition', SMS_COUNTRY_REFUSED, { reason: 'sms_country' });
  }
}

const HOUR = 3600;
const DAY = 24 * HOUR;

const destinationOf = (channel: string, destination: string): string => sha256Hex(`${channel}:${destination}`);
const intervalKey = (channel: string, destination: string, purpose: string): string => `send:${destinationOf(channel, destination)}:${purpose}`;

/**
 * Ends the resend interval of a destination and purpose early: the message it held was used up (a
 * code verified), so the next request may send at once, as behaviour.md §4.4 words it ("while a code
 * is live"). The hourly and daily caps keep counting it.
 */
export function endSendInterval(log: AttemptLog, channel: 'email' | 'sms', destination: string, purpose: string): Promise<void> {
  return log.clear(intervalKey(channel, destination, purpose));
}

/**
 * Claims one message to `req.destination` before it is queued. The interval is claimed first, so of
 * concurrent requests one sends and the rest are told to wait; then the hourly and daily caps, whose
 * refusal gives the interval back. Claims are made whether or not an account owns the destination,
 * so the answers are the same for a known and an unknown one.
 * @returns `{ send: true }`, or `{ send: false, retryAfter }` while the interval holds a message
 * @throws AppError `resource_exhausted` {@link SEND_CAP_MESSAGE} with `Retry-After` when a cap is
 *   reached; `failed_precondition` {@link SMS_COUNTRY_REFUSED} (nothing claimed)
 */
export async function claimSend(log: AttemptLog, caps: SendCapOptions, req: SendRequest, now: number): Promise<SendClaim> {
  if (req.channel === 'sms') assertSmsCountryAllowed(caps, req.destination);
  const dest = destinationOf(req.channel, req.destination);
  const interval = await log.claim(intervalKey(req.channel, req.destination, req.purpose), now, 1, req.intervalSeconds);
  if (!interval.claimed) return { send: false, retryAfter: Math.max(1, interval.unlockAt - now) };
  const held: AttemptClaim[] = [interval.claimed];
  for (const [suffix, max, window] of [['h', caps.perHour, HOUR], ['d', caps.perDay, DAY]] as const) {
    if (max <= 0) continue;
    const r = await log.claim(`send:${dest}:${suffix}`, now, max, window);
    if (!r.claimed) {
      for (const c of held) await log.release(c);
      throw new AppError('resource_exhausted', SEND_CAP_MESSAGE, {
        headers: { 'Retry-After': String(Math.max(1, r.unlockAt - now)) }, reason: `send_cap_${suffix}`,
      });
    }
    held.push(r.claimed);
  }
  return { send: true };
}
