/**
 * @module @gatehouse/mfa/domain/deps
 * What the mfa service is built from, and the context its flows share.
 */
import type { Logger } from '@gatehouse/observability';
import type { CallContext } from '@gatehouse/rpc';
import type { MfaStore } from '../storage/ports.ts';
import type { MfaOptions } from './options.ts';
import { otpKey } from './otp.ts';

/** authn's internal API (proto `gatehouse.authn.v1.AuthnInternal`), as a client of any transport. */
export interface AuthnInternalClient {
  /**
   * @throws AppError with authn's code (`failed_precondition` for a revoked user, `not_found` for a
   *   deleted one, `unavailable` when authn cannot be reached)
   */
  call(rpc: 'CompleteMfaLogin', req: CompleteMfaLoginRequest, ctx: CallContext): Promise<Record<string, unknown>>;
}

/** proto `CompleteMfaLoginRequest` */
export interface CompleteMfaLoginRequest {
  user_id: string;
  verified_channel: string;
  verified_contact: string;
  login_method: string;
  roles: string[];
  scope: string[];
  state: string | null;
  auth_time: number;
  message: string;
}

export interface MfaDeps {
  options: MfaOptions;
  store: MfaStore;
  authn: AuthnInternalClient;
  logger: Logger;
  /** Unix seconds */
  clock?: () => number;
}

/** Deps plus what is derived once at start. */
export interface MfaContext extends MfaDeps {
  now(): number;
  /** the OTP HMAC key (domain/otp) */
  otpKey: string;
}

export function createMfaContext(deps: MfaDeps): MfaContext {
  return {
    ...deps,
    now: deps.clock ?? (() => Math.floor(Date.now() / 1000)),
    otpKey: otpKey(deps.options.encryptionKey, deps.options.clientSecret),
  };
}
