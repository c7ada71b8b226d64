/**
 * @module @gatehouse/mfa/domain/deps
 * What the mfa domain is built from, and the context its flows share. The domain is transport-free:
 * it sees no call context, cookie or wire message (issue 14 §3); rpc/ turns those into the values here.
 */
import type { AuditDetails, Authenticator } from '@gatehouse/auth';
import type { BusEvents } from '@gatehouse/contracts';
import type { Logger } from '@gatehouse/observability';
import type { MfaStore } from '../storage/ports.ts';
import type { MfaOptions } from './options.ts';
import { mfaMethods, type MfaMethods } from './options.ts';
import { otpKey } from './otp.ts';
import { totpSealKey } from './totp.ts';
import { jobSealKey, type KeyRing } from '@gatehouse/crypto';

export interface MfaDeps {
  options: MfaOptions;
  store: MfaStore;
  /**
   * Credential resolution for the RPCs a signed-in user calls (the shared session store); null where
   * mfa has none (split mode without --redis-url): then only MFA-cookie RPCs can be called.
   */
  authenticator: Authenticator | null;
  logger: Logger;
  /** Unix seconds */
  clock?: () => number;
}

/** Deps plus what is derived once at start. */
export interface MfaContext extends MfaDeps {
  now(): number;
  /** the OTP HMAC key (domain/otp) */
  otpKey: KeyRing;
  /** the AES-256 key TOTP secrets are sealed with (domain/totp) */
  totpKey: KeyRing;
  /** seals the code of every `email.send` / `sms.send` job until the worker renders it (libs/crypto `jobSealKey`) */
  jobKey: KeyRing;
  /** usable methods, availability, enforcement (behaviour.md §4.1) */
  methods: MfaMethods;
}

export function createMfaContext(deps: MfaDeps): MfaContext {
  return {
    ...deps,
    now: deps.clock ?? (() => Math.floor(Date.now() / 1000)),
    otpKey: otpKey(deps.options.encryptionKey, deps.options.clientSecret),
    totpKey: totpSealKey(deps.options.encryptionKey, deps.options.clientSecret),
    jobKey: jobSealKey(deps.options.encryptionKey, deps.options.clientSecret),
    methods: mfaMethods(deps.options),
  };
}

/**
 * An MFA session the caller holds: the opaque handle its `mfa` cookie carries and when it expires.
 * `armedAt` is the clock reading the expiry was computed from, so the cookie's Max-Age is exact.
 */
export interface ArmedSession {
  handle: string;
  /** Unix seconds */
  expiresAt: number;
  /** Unix seconds */
  armedAt: number;
}

/**
 * Builds the `audit.recorded` row of an action in the current call (behaviour.md §5.7). rpc/ binds
 * `auditRecord` of @gatehouse/auth to the call's context, so the domain never sees the transport.
 */
export type Auditor = (action: string, details: AuditDetails) => BusEvents['audit.recorded'];
