/**
 * @module @gatehouse/authn/domain/deps
 * What the authn service is built from, and the per-service context its flows share.
 */
import type { Authenticator, SessionStore } from '@gatehouse/auth';
import type { JwtSigner } from '@gatehouse/crypto';
import type { Logger } from '@gatehouse/observability';
import type { ProtoServices } from '@gatehouse/contracts';
import type { ClientOf } from '@gatehouse/rpc';
import type { LoginLockout, UserRecord, UserRepository } from '../storage/ports.ts';
import { compileCustomClaims, type CustomClaims } from './custom-claims.ts';
import type { AuthnOptions } from './options.ts';
import type { RequiredRelation } from './validation.ts';

/** The authorization engine hook for `required_relations` (behaviour.md §7.4). */
export interface PermissionChecker {
  /** true when `subject` (`user:<id>`) holds every relation (AND) */
  checkAll(subject: string, relations: readonly RequiredRelation[]): Promise<boolean>;
}

/**
 * The mfa service's challenges, as one call sees them: authn asks, mfa never calls authn (issue 14
 * §5). rpc/mfa.ts binds the mfa service's client to the caller's call, so the `mfa` cookie that mfa
 * sets or clears travels back with it. Each method throws AppError with mfa's code (`unavailable`
 * when mfa cannot be reached).
 */
export interface MfaChallenges {
  /** Opens a 300 s MFA session for a login and mails its code (behaviour.md §3.3 step 8, §4.4). */
  openEmailOtp(challenge: OtpChallenge): Promise<void>;
  /** mfa's verdict on the caller's MFA session and code (behaviour.md §4.3); the session is consumed. */
  verifyOtp(attempt: OtpAttempt): Promise<MfaVerdict>;
}

/** What the first step of a login decided: the user, and the grant tokens are finally issued with (§4.1). */
export interface OtpChallenge {
  user: UserRecord;
  loginMethod: string;
  roles: string[];
  scope: string[];
  state: string | null;
  /** Unix seconds of the first step */
  authTime: number;
}

/** A code the caller offers for its MFA session (behaviour.md §4.3 verify_otp). */
export interface OtpAttempt {
  otp?: string | null | undefined;
  /** the caller says the code is a TOTP or recovery code */
  isTotp?: boolean | null | undefined;
  email?: string | null | undefined;
  phoneNumber?: string | null | undefined;
  state?: string | null | undefined;
}

/** A proven challenge: who proved which contact, and the grant of the first step (§4.1). */
export interface MfaVerdict {
  userId: string;
  /** `email` or `sms`: that contact becomes verified */
  verifiedChannel: string;
  /** the address the code was sent to; it must still be the user's */
  verifiedContact: string;
  loginMethod: string;
  roles: string[];
  scope: string[];
  /** Unix seconds of the first step; 0 means now */
  authTime: number;
}

/**
 * The mfa service's internal API (proto `gatehouse.mfa.v1.MfaInternal`), as a typed client of any
 * transport: authn asks mfa for challenges and verdicts, mfa never calls authn (issue 14 §5).
 * Each call throws AppError with mfa's code (`unavailable` when it cannot be reached).
 */
export type MfaInternalClient = Pick<ClientOf<ProtoServices['gatehouse.mfa.v1.MfaInternal']>, 'OpenOtpChallenge' | 'VerifyOtpChallenge'>;

export interface AuthnDeps {
  options: AuthnOptions;
  /** users + the unit of work; events are emitted inside `users.transaction` through the builders of events.ts */
  users: UserRepository;
  sessions: SessionStore;
  lockout: LoginLockout;
  jwt: JwtSigner;
  authenticator: Authenticator;
  /**
   * The authenticator's user-activity check (behaviour.md §2.1), cached in all-in-one on SQLite;
   * absent: flows read the user and test `isRevoked`
   */
  activity?: { isActive(userId: string): Promise<boolean> };
  /** absent (split mode without --mfa-address): flows that need an MFA session refuse as if no channel existed */
  mfa?: MfaInternalClient;
  /** absent: a non-empty `required_relations` fails with `failed_precondition` */
  permissions?: PermissionChecker;
  /** Unix seconds */
  clock?: () => number;
  logger: Logger;
}

/** Deps plus what is derived once at start. */
export interface AuthnContext extends AuthnDeps {
  now(): number;
  customClaims: CustomClaims | null;
}

/**
 * @throws AppError `invalid_argument` when the custom access token script does not compile
 */
export function createAuthnContext(deps: AuthnDeps): AuthnContext {
  const clock = deps.clock ?? (() => Math.floor(Date.now() / 1000));
  return { ...deps, now: clock, customClaims: compileCustomClaims(deps.options.customAccessTokenScript, deps.logger) };
}
