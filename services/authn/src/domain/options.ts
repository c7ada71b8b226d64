/**
 * @module @gatehouse/authn/domain/options
 * The flags authn reads (camelCase names of the kebab-case flags, behaviour.md §1) and what
 * follows from them (MFA availability §4.1).
 */
import type { SameSite } from '@gatehouse/auth';

/** Social providers with `--<provider>-client-id` / `--<provider>-client-secret` (spec §1). */
export const PROVIDERS = ['google', 'facebook', 'github', 'linkedin', 'apple', 'discord', 'twitter', 'microsoft', 'twitch', 'roblox'] as const;
export type Provider = (typeof PROVIDERS)[number];

type ProviderFlags = Partial<Record<`${Provider}ClientId` | `${Provider}ClientSecret` | `${Provider}BaseUrl`, string>>
  & Partial<Record<`${Provider}Scopes`, readonly string[]>>
  & { microsoftTenantId?: string };

/** The subset of flags authn needs. Durations are seconds. */
export interface AuthnOptions extends ProviderFlags {
  /** `--url`, without a trailing slash: `iss`, links, discovery */
  url: string;
  clientId: string;
  /** `--jwt-role-claim` (default `role`): the ID-token claim carrying the granted roles */
  jwtRoleClaim: string;
  /** `--custom-access-token-script`: `function(user, tokenPayload) { return {...} }` */
  customAccessTokenScript?: string;
  roles: string[];
  defaultRoles: string[];
  protectedRoles: string[];
  enableStrongPassword: boolean;
  enableBasicAuthentication: boolean;
  enableMobileBasicAuthentication: boolean;
  enableSignup: boolean;
  enableEmailVerification: boolean;
  enablePhoneVerification: boolean;
  enableMagicLinkLogin: boolean;
  /** `--send-cap-per-hour`, `--send-cap-per-day`: messages per destination (issue 30 §2; defaults 5 and 10) */
  sendCapPerHour?: number;
  sendCapPerDay?: number;
  /** `--sms-allowed-country-codes` (`+1`, `+44`; empty: any) */
  smsAllowedCountryCodes?: readonly string[];
  enableOrgDiscovery: boolean;
  /** issue 34: `--enable-dynamic-client-registration` (RFC 7591 /oauth/register) and its registry ceiling */
  enableDynamicClientRegistration: boolean;
  dynamicClientRegistrationMaxClients: number;
  /**
   * issue 34 §2: `--enable-client-id-metadata-documents`: an https URL as `client_id` names an OAuth
   * Client ID Metadata Document, fetched under the outbound guard
   */
  enableClientIdMetadataDocuments?: boolean;
  /** `--allow-private-webhook-targets`: the outbound guard also lets metadata documents come from private addresses */
  allowPrivateWebhookTargets?: boolean;
  /** issue 34: `--require-pushed-authorization-requests` (RFC 9126 §5), for every client but the server's own */
  requirePushedAuthorizationRequests?: boolean;
  /** issue 34 §5: `--device-code-expires-in`, seconds a device code lives (RFC 8628 §3.2 `expires_in`; default 600) */
  deviceCodeExpiresIn?: number;
  accessTokenExpiresIn: number;
  refreshTokenExpiresIn: number;
  sessionExpiresIn: number;
  appCookieSecure: boolean;
  appCookieSameSite: SameSite;
  organizationName: string;
  /** build version, reported by Meta */
  version: string;
  /** `--redirect-uris` and `--allowed-origins` (behaviour.md §3.1 redirect rule) */
  redirectUris: string[];
  allowedOrigins: string[];
  /** `--client-secret`: the server's own client's secret (issue 18); also keys client-secret MACs and
   * the job seal when `--encryption-key` is not set */
  clientSecret: string;
  /** `--encryption-key`: MAC key of client secrets, and seals the links of `email.send` jobs at rest
   * (issue 23, libs/crypto `jobSealKey`) */
  encryptionKey?: string;
  /** `--default-authorize-response-type` / `--default-authorize-response-mode` (issue 18) */
  defaultAuthorizeResponseType: string;
  defaultAuthorizeResponseMode: string;
  disableMfa: boolean;
  disableTotpLogin: boolean;
  disableEmailOtp: boolean;
  disableSmsOtp: boolean;
  disableWebauthnMfa: boolean;
  enforceMfa: boolean;
  smtpHost?: string;
  smtpPort?: number;
  smtpSenderEmail?: string;
  /** `--reset-password-url`: where forgot_password links point when the request names no redirect_uri */
  resetPasswordUrl?: string;
  twilioAccountSid?: string;
  twilioApiKey?: string;
  twilioApiSecret?: string;
  twilioSender?: string;
  /** issue 33 §4: Config's `devOutbox`: under `--env=development`, the channels the development outbox stands in for */
  devOutbox?: { readonly email: boolean; readonly sms: boolean };
}

/**
 * Email counts as configured only with host, port and sender (behaviour.md §1.3), or when the development
 * outbox keeps the mails (`--env=development` without SMTP, issue 33 §4).
 */
export const isEmailServiceEnabled = (o: AuthnOptions): boolean =>
  Boolean(o.smtpHost && o.smtpPort && o.smtpSenderEmail) || o.devOutbox?.email === true;
/** SMS counts as configured only with all four `--twilio-*` flags (behaviour.md §1.3), or with the development outbox. */
export const isSmsServiceEnabled = (o: AuthnOptions): boolean =>
  Boolean(o.twilioAccountSid && o.twilioApiKey && o.twilioApiSecret && o.twilioSender) || o.devOutbox?.sms === true;

/** Usable MFA methods (behaviour.md §4.1). */
export function usableMfaMethods(o: AuthnOptions): { totp: boolean; webauthn: boolean; emailOtp: boolean; smsOtp: boolean } {
  return {
    totp: !o.disableTotpLogin,
    webauthn: !o.disableWebauthnMfa,
    emailOtp: !o.disableEmailOtp && isEmailServiceEnabled(o),
    smsOtp: !o.disableSmsOtp && isSmsServiceEnabled(o),
  };
}

/**
 * The MFA methods this build can enrol and challenge. Meta (behaviour.md §5.2) reports a method only
 * when it is usable by the flags AND served, so a client never offers a method whose routes answer 501
 * (test/e2e/discovery.e2e.test.ts holds Meta to the routes). The MFA issue sets each to true as it
 * serves the method.
 */
export const SERVED_MFA_METHODS: Readonly<{ totp: boolean; webauthn: boolean; emailOtp: boolean; smsOtp: boolean }> = Object.freeze({
  // issue 16: TOTP, email OTP, SMS OTP and passkeys are served
  totp: true, webauthn: true, emailOtp: true, smsOtp: true,
});

/** The MFA methods Meta reports: usable by the flags and served by this build. */
export function offeredMfaMethods(o: AuthnOptions): { totp: boolean; webauthn: boolean; emailOtp: boolean; smsOtp: boolean } {
  const usable = usableMfaMethods(o);
  const on = !o.disableMfa;
  return {
    totp: on && usable.totp && SERVED_MFA_METHODS.totp,
    webauthn: on && usable.webauthn && SERVED_MFA_METHODS.webauthn,
    emailOtp: on && usable.emailOtp && SERVED_MFA_METHODS.emailOtp,
    smsOtp: on && usable.smsOtp && SERVED_MFA_METHODS.smsOtp,
  };
}

/**
 * MFA available: not `--disable-mfa` and at least one usable method (behaviour.md §4.1), counting a
 * method only when this build serves it, as Meta and the mfa service's gate do.
 */
export function isMfaAvailable(o: AuthnOptions): boolean {
  const m = offeredMfaMethods(o);
  return m.totp || m.webauthn || m.emailOtp || m.smsOtp;
}

/** Enforced: `--enforce-mfa` and MFA available (behaviour.md §4.1). */
export const isMfaEnforced = (o: AuthnOptions): boolean => o.enforceMfa && isMfaAvailable(o);

export const isProviderEnabled = (o: AuthnOptions, p: Provider): boolean => Boolean(o[`${p}ClientId`] && o[`${p}ClientSecret`]);

