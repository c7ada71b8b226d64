/**
 * @module @gatehouse/mfa/domain/options
 * The flags the mfa service reads (camelCase Config keys, behaviour.md §1) and what follows from them.
 */
import type { AppCookieOptions, SameSite } from '@gatehouse/auth';

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
}

/** Email counts as configured only with host, port and sender (behaviour.md §1.3). */
export const isEmailServiceEnabled = (o: MfaOptions): boolean => Boolean(o.smtpHost && o.smtpPort && o.smtpSenderEmail);

export const cookieOptions = (o: MfaOptions): AppCookieOptions => ({ url: o.url, secure: o.appCookieSecure, sameSite: o.appCookieSameSite });
