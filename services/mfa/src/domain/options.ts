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
  // issue 16: the MFA flags (behaviour.md §4.1) and what they depend on
  /** `--organization-name`: the TOTP issuer (behaviour.md §4.5), the WebAuthn relying party's name (§4.6) */
  organizationName: string;
  enforceMfa: boolean;
  disableMfa: boolean;
  disableTotpLogin: boolean;
  disableEmailOtp: boolean;
  disableSmsOtp: boolean;
  disableWebauthnMfa: boolean;
  twilioAccountSid?: string;
  twilioApiKey?: string;
  twilioApiSecret?: string;
  twilioSender?: string;
  /** issue 33 §4: Config's `devOutbox`: under `--env=development`, the channels the development outbox stands in for */
  devOutbox?: { readonly email: boolean; readonly sms: boolean };
  /** `--allowed-origins`: origins on the RP ID's host or a subdomain of it are accepted passkey origins (§4.6) */
  allowedOrigins?: string[];
  /** `--send-cap-per-hour`, `--send-cap-per-day`: codes per destination (issue 30 §2; defaults 5 and 10) */
  sendCapPerHour?: number;
  sendCapPerDay?: number;
  /** `--sms-allowed-country-codes` (`+1`, `+44`; empty: any) */
  smsAllowedCountryCodes?: readonly string[];
}

/** SMS counts as configured only with all four `--twilio-*` flags (behaviour.md §1.3), or with the development outbox. */
export const isSmsServiceEnabled = (o: MfaOptions): boolean =>
  Boolean(o.twilioAccountSid && o.twilioApiKey && o.twilioApiSecret && o.twilioSender) || o.devOutbox?.sms === true;

/**
 * behaviour.md §4.1: which methods are usable, whether MFA is available and whether it is enforced.
 * A method is true only when it is usable and MFA is not disabled (the same rule as libs/config's
 * `derive`, which Meta reports).
 */
export interface MfaMethods {
  available: boolean;
  enforced: boolean;
  totp: boolean;
  emailOtp: boolean;
  smsOtp: boolean;
  webauthn: boolean;
}

/**
 * The methods this build can enrol and challenge. The gate offers and counts a method only when it is
 * usable by the flags AND served, as Meta reports (authn's `SERVED_MFA_METHODS`). PLUG-IN POINT: the
 * passkeys work (h/passkeys) and the SMS work (h/sms) set theirs to true here and in authn.
 */
export const SERVED_MFA_METHODS: Readonly<{ totp: boolean; webauthn: boolean; emailOtp: boolean; smsOtp: boolean }> = Object.freeze({
  totp: true, webauthn: true, emailOtp: true, smsOtp: true,
});

/** {@link MfaMethods} from the flags. */
export function mfaMethods(o: MfaOptions): MfaMethods {
  const on = !o.disableMfa;
  const usable = {
    totp: on && !o.disableTotpLogin && SERVED_MFA_METHODS.totp,
    emailOtp: on && !o.disableEmailOtp && isEmailServiceEnabled(o) && SERVED_MFA_METHODS.emailOtp,
    smsOtp: on && !o.disableSmsOtp && isSmsServiceEnabled(o) && SERVED_MFA_METHODS.smsOtp,
    webauthn: on && !o.disableWebauthnMfa && SERVED_MFA_METHODS.webauthn,
  };
  // available: a method the gate can actually challenge (Meta's `is_multi_factor_auth_enabled`)
  const available = usable.totp || usable.emailOtp || usable.smsOtp || usable.webauthn;
  return { available, enforced: Boolean(o.enforceMfa) && available, ...usable };
}

/**
 * Email counts as configured only with host, port and sender (behaviour.md §1.3), or when the development
 * outbox keeps the mails (`--env=development` without SMTP, issue 33 §4).
 */
export const isEmailServiceEnabled = (o: MfaOptions): boolean =>
  Boolean(o.smtpHost && o.smtpPort && o.smtpSenderEmail) || o.devOutbox?.email === true;

/**
 * Refuses a code on a channel whose provider is not configured (behaviour.md §3.4, §4.3).
 * @throws AppError `failed_precondition` `email service not enabled` / `SMS service not enabled`
 */
export function assertChannelService(o: MfaOptions, channel: 'email' | 'sms'): void {
  if (channel === 'email' && !isEmailServiceEnabled(o)) throw new AppError('failed_precondition', 'email service not enabled');
  if (channel === 'sms' && !isSmsServiceEnabled(o)) throw new AppError('failed_precondition', 'SMS service not enabled');
}

export const cookieOptions = (o: MfaOptions): AppCookieOptions => ({ url: o.url, secure: o.appCookieSecure, sameSite: o.appCookieSameSite });
