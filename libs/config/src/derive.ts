/** @module @gatehouse/config/derive: read-only values computed once from the flags (behaviour.md §1.3, §4.1; spec §1). */

import type { CommandName } from './commands.ts';
import { SOCIAL_PROVIDERS } from './registry.ts';
import type { FgaStore, FlagValues, SocialProvider } from './registry.ts';

/** MFA state (behaviour.md §4.1). A method is `true` only when it is usable and MFA is not disabled. */
export interface MfaState {
  /** not `--disable-mfa`, and at least one usable method */
  readonly available: boolean;
  /** `--enforce-mfa` and MFA available (`--disable-mfa` wins) */
  readonly enforced: boolean;
  /** TOTP unless `--disable-totp-login` */
  readonly totp: boolean;
  /** email OTP unless `--disable-email-otp`, and only with SMTP configured */
  readonly email: boolean;
  /** SMS OTP unless `--disable-sms-otp`, and only with SMS configured */
  readonly sms: boolean;
  /** passkey-as-MFA unless `--disable-webauthn-mfa` */
  readonly webauthn: boolean;
}

/** The embedded authorization engine's store (spec §1 "Additional rules"). */
export interface FgaState {
  readonly enabled: boolean;
  /** null when the engine is off */
  readonly store: FgaStore | null;
  /**
   * Connection URL: `--fga-store-url`, or the main `--database-url` when the engine reuses the main
   * database (undefined then if the database was given as host/name parts, or for `memory`).
   */
  readonly url: string | undefined;
  /** true when the engine runs on the main database (no `--fga-store` given) */
  readonly sharesMainDatabase: boolean;
  /** `--fga-store-id`: the OpenFGA store (only with store `openfga`; undefined: the store named "gatehouse") */
  readonly storeId?: string | undefined;
  /** `--fga-store-api-token`: the OpenFGA API token (only with store `openfga`) */
  readonly apiToken?: string | undefined;
}

/** Fields computed from the flags. */
export interface Derived {
  /** `--smtp-host`, `--smtp-port` and `--smtp-sender-email` are all set (behaviour.md §1.3) */
  readonly isEmailConfigured: boolean;
  /** all four `--twilio-*` flags are set (behaviour.md §1.3) */
  readonly isSmsConfigured: boolean;
  /**
   * The development outbox (issue 33 §4): under `--env=development`, a channel without its provider
   * (email without SMTP, SMS without Twilio) keeps its messages in memory and logs them instead of
   * sending; the channel then counts as available. Both false in production.
   */
  readonly devOutbox: { readonly email: boolean; readonly sms: boolean };
  readonly mfa: MfaState;
  /** providers with both client id and client secret, in registry order */
  readonly enabledSocialProviders: readonly SocialProvider[];
  readonly fga: FgaState;
}

/** behaviour.md §4.1 "usable method", before `--disable-mfa` is considered. */
export function usableMfaMethods(v: FlagValues, email: boolean, sms: boolean): Omit<MfaState, 'available' | 'enforced'> {
  return {
    totp: !v.disableTotpLogin,
    email: !v.disableEmailOtp && email,
    sms: !v.disableSmsOtp && sms,
    webauthn: !v.disableWebauthnMfa,
  };
}

const DISABLED_FGA: FgaState = { enabled: false, store: null, url: undefined, sharesMainDatabase: false };

/**
 * Computes the derived fields. Pure.
 * @param command decides whether the engine flags apply (the gateway has no engine)
 */
export function derive(v: FlagValues, command: CommandName): Derived {
  const isEmailConfigured = v.smtpHost !== undefined && v.smtpPort !== undefined && v.smtpSenderEmail !== undefined;
  const isSmsConfigured = v.twilioAccountSid !== undefined && v.twilioApiKey !== undefined &&
    v.twilioApiSecret !== undefined && v.twilioSender !== undefined;
  const development = v.env === 'development';
  const devOutbox = { email: development && !isEmailConfigured, sms: development && !isSmsConfigured };
  const usable = usableMfaMethods(v, isEmailConfigured || devOutbox.email, isSmsConfigured || devOutbox.sms);
  const available = !v.disableMfa && (usable.totp || usable.email || usable.sms || usable.webauthn);
  const on = (m: boolean): boolean => available && m;
  const mfa: MfaState = {
    available,
    enforced: v.enforceMfa && available,
    totp: on(usable.totp),
    email: on(usable.email),
    sms: on(usable.sms),
    webauthn: on(usable.webauthn),
  };
  const enabledSocialProviders = SOCIAL_PROVIDERS.filter((p) => clientOf(v, p).id !== undefined && clientOf(v, p).secret !== undefined);
  return { isEmailConfigured, isSmsConfigured, devOutbox, mfa, enabledSocialProviders, fga: deriveFga(v, command) };
}

/** A provider's client id and secret. */
export function clientOf(v: FlagValues, p: SocialProvider): { id: string | undefined; secret: string | undefined } {
  return { id: v[`${p}ClientId`], secret: v[`${p}ClientSecret`] };
}

/**
 * spec §1: on by default over a SQL main database, reusing it (sqlite→sqlite, postgres→postgres,
 * mysql/mariadb→mysql); off over mongodb unless `--fga-store` is given.
 */
function deriveFga(v: FlagValues, command: CommandName): FgaState {
  if (command === 'gateway') return DISABLED_FGA;
  if (v.fgaStore === 'openfga') {
    return { enabled: true, store: 'openfga', url: v.fgaStoreUrl, sharesMainDatabase: false, storeId: v.fgaStoreId, apiToken: v.fgaStoreApiToken };
  }
  if (v.fgaStore !== undefined) {
    return { enabled: true, store: v.fgaStore, url: v.fgaStore === 'memory' ? undefined : v.fgaStoreUrl, sharesMainDatabase: false };
  }
  const store: FgaStore | null = v.databaseType === 'sqlite' ? 'sqlite'
    : v.databaseType === 'postgres' ? 'postgres'
    : v.databaseType === 'mysql' || v.databaseType === 'mariadb' ? 'mysql'
    : null;
  return store === null ? DISABLED_FGA : { enabled: true, store, url: v.databaseUrl, sharesMainDatabase: true };
}
