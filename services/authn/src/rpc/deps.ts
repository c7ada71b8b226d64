/**
 * @module @gatehouse/authn/rpc/deps
 * What the authn service is built from, what every RPC handler receives, and the handler types
 * checked against the generated contract (`gatehouse.authn.v1.AuthnService`, `AuthnInternal`). The
 * pieces only the rpc layer touches live here: credential resolution and the mfa service's client.
 */
import type { Authenticator } from '@gatehouse/auth';
import type { authn, ProtoServices } from '@gatehouse/contracts';
import type { ClientOf, HandlersOf } from '@gatehouse/rpc';
import { createAuthnContext, type AuthnContext, type DomainDeps } from '../domain/deps.ts';

/**
 * The mfa service's internal API (proto `gatehouse.mfa.v1.MfaInternal`), as a typed client of any
 * transport: authn asks mfa for challenges and verdicts, mfa never calls authn (issue 14 §5).
 * Each call throws AppError with mfa's code (`unavailable` when it cannot be reached).
 */
export type MfaInternalClient = Pick<ClientOf<ProtoServices['gatehouse.mfa.v1.MfaInternal']>,
  'OpenOtpChallenge' | 'VerifyOtpChallenge' | 'EvaluateGate' | 'SkipMfaSetup' | 'LockMfa' | 'BeginOtpEnrolment' |
  'BeginTotpEnrolment' | 'ResetUserMfa' | 'EnrolledMfaMethods' |
  'VerifyWebauthnRegistration' | 'VerifyWebauthnLogin'>;

/** What the authn service is built from. */
export interface AuthnDeps extends DomainDeps {
  /** resolves the caller of every RPC whose auth class needs one (the guard, then the handler) */
  authenticator: Authenticator;
  /** absent (split mode without --mfa-address): flows that need an MFA session refuse as if no channel existed */
  mfa?: MfaInternalClient;
}

/** What every handler receives: the domain's context, and the transport-side pieces. */
export interface RpcContext extends AuthnContext {
  authenticator: Authenticator;
  mfa: MfaInternalClient | undefined;
}

/** @throws AppError `invalid_argument` when the custom access token script does not compile */
export function createRpcContext(deps: AuthnDeps): RpcContext {
  return { ...createAuthnContext(deps), authenticator: deps.authenticator, mfa: deps.mfa };
}

/** The handler of RPC `K` of `gatehouse.authn.v1.AuthnService`, typed by the generated contract. */
export type AuthnHandler<K extends keyof authn.AuthnService> = HandlersOf<authn.AuthnService>[K];

/** The handler of RPC `K` of `gatehouse.authn.v1.AuthnInternal`. */
export type AuthnInternalHandler<K extends keyof authn.AuthnInternal> = HandlersOf<authn.AuthnInternal>[K];
