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
  /** `--organization-name`: the WebAuthn relying party's name (behaviour.md §4.6) */
  organizationName?: string;
  /** `--allowed-origins`: origins on the RP ID's host or a subdomain of it are accepted passkey origins (§4.6) */
  allowedOrigins?: string[];
  /** `--disable-mfa` (behaviour.md §4.1) */
  disableMfa?: boolean;
  /** `--disable-webauthn-mfa`: passkeys stop counting as a second factor (behaviour.md §4.1) */
  disableWebauthnMfa?: boolean;
}

/** Email counts as configured only with host, port and sender (behaviour.md §1.3). */
export const isEmailServiceEnabled = (o: MfaOptions): boolean => Boolean(o.smtpHost && o.smtpPort && o.smtpSenderEmail);

export const cookieOptions = (o: MfaOptions): AppCookieOptions => ({ url: o.url, secure: o.appCookieSecure, sameSite: o.appCookieSameSite });
