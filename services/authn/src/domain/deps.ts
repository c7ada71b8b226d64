/**
 * @module @gatehouse/authn/domain/deps
 * What the authn service is built from, and the per-service context its flows share.
 */
import type { Authenticator, SessionStore } from '@gatehouse/auth';
import type { JwtSigner } from '@gatehouse/crypto';
import type { Logger } from '@gatehouse/observability';
import type { ProtoServices } from '@gatehouse/contracts';
import type { ClientOf } from '@gatehouse/rpc';
import type { LoginLockout, UserRepository } from '../storage/ports.ts';
import { compileCustomClaims, type CustomClaims } from './custom-claims.ts';
import type { AuthnOptions } from './options.ts';
import type { RequiredRelation } from './validation.ts';

/** The authorization engine hook for `required_relations` (behaviour.md §7.4). */
export interface PermissionChecker {
  /** true when `subject` (`user:<id>`) holds every relation (AND) */
  checkAll(subject: string, relations: readonly RequiredRelation[]): Promise<boolean>;
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
