/**
 * @module @gatehouse/mfa/domain/options
 * The flags the mfa service reads (camelCase Config keys, behaviour.md §1) and what follows from them.
 */
import type { AppCookieOptions, SameSite } from '@gatehouse/auth';
import { AppError } from '@gatehouse/errors';

/** The subset of flags mfa needs. */
export interface MfaOptions {
  /** `--url`: the cookie domain rules (behaviour.md §2.4) */
  url: string;
  appCookieSecure: boolean;
  appCookieSameSite: SameSite;
  /** `--encryption-key`: the OTP HMAC key (behaviour.md §4.4); absent → derived from `--client-secret` */
  encryptionKey?: string;
  clientSecret: string;
  smtpHost?: string;
  smtpPort?: number;
  smtpSenderEmail?: string;
  twilioAccountSid?: string;
  twilioApiKey?: string;
  twilioApiSecret?: string;
  twilioSender?: string;
}

/** Email counts as configured only with host, port and sender (behaviour.md §1.3). */
export const isEmailServiceEnabled = (o: MfaOptions): boolean => Boolean(o.smtpHost && o.smtpPort && o.smtpSenderEmail);

/** SMS counts as configured only with all four `--twilio-*` flags (behaviour.md §1.3). */
export const isSmsServiceEnabled = (o: MfaOptions): boolean =>
  Boolean(o.twilioAccountSid && o.twilioApiKey && o.twilioApiSecret && o.twilioSender);

/**
 * Refuses a code on a channel whose provider is not configured (behaviour.md §3.4, §4.3).
 * @throws AppError `failed_precondition` `email service not enabled` / `SMS service not enabled`
 */
export function assertChannelService(o: MfaOptions, channel: 'email' | 'sms'): void {
  if (channel === 'email' && !isEmailServiceEnabled(o)) throw new AppError('failed_precondition', 'email service not enabled');
  if (channel === 'sms' && !isSmsServiceEnabled(o)) throw new AppError('failed_precondition', 'SMS service not enabled');
}

export const cookieOptions = (o: MfaOptions): AppCookieOptions => ({ url: o.url, secure: o.appCookieSecure, sameSite: o.appCookieSameSite });
