/**
 * @module @gatehouse/authn/domain/deps
 * What the authn domain is built from, the ports it asks other services through, and the context its
 * flows share.
 */
import type { AuditDetails, SessionStore } from '@gatehouse/auth';
import type { BusEvents, common } from '@gatehouse/contracts';
import { jobSealKey, type JwtSigner, type KeyRing } from '@gatehouse/crypto';
import type { Logger } from '@gatehouse/observability';
import type { LoginLockout, OAuthStore, UserRecord, UserRepository } from '../storage/ports.ts';
import { compileCustomClaims, type CustomClaims } from './custom-claims.ts';
import type { SessionGrant } from './issue.ts';
import type { AuthnOptions } from './options.ts';
import type { ContactInput } from './user.ts';
import type { Opt, RequiredRelation } from './validation.ts';

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
  /**
   * Opens an MFA session and sends its code on `challenge.channel` (issue 16): an SMS for login step 8
   * of an unverified phone, phone signup verification (600 s) and forgot_password by phone (purpose
   * `password_reset`, or a decoy session for an unknown phone). The `mfa` cookie travels back.
   */
  openOtp(challenge: ChannelChallenge): Promise<void>;
  /** mfa's verdict on the caller's MFA session and code (behaviour.md §4.3); the session is consumed. */
  verifyOtp(attempt: OtpAttempt): Promise<MfaVerdict>;
  // issue 16
  /**
   * The gate's rows G1-G7 for `user` after a first step with `grant` (behaviour.md §4.1): `issue`, or
   * the AuthResponse to answer with (tokens null); mfa has then opened the MFA session and set `mfa`.
   */
  evaluateGate(user: UserRecord, grant: SessionGrant, state: string | null): Promise<GateResult>;
  /** skip_mfa_setup's verdict (only in the offer state); the session is consumed. */
  skip(claim: ContactInput): Promise<MfaVerdict>;
  /** lock_mfa's verdict: the user to lock; the session is ended. */
  lock(claim: ContactInput): Promise<string>;
  /**
   * email/SMS OTP setup (behaviour.md §4.3): `caller` in user-credential mode, else the caller's MFA
   * session (named by `claim`). mfa sends the code and sets `mfa`.
   */
  beginOtpEnrolment(channel: 'email' | 'sms', caller: { user: UserRecord; grant: SessionGrant } | null, claim: ContactInput): Promise<void>;
  /** totp_mfa_setup (behaviour.md §4.5): the AuthResponse with secret, QR and codes; mfa sets `mfa`. */
  beginTotpEnrolment(user: UserRecord, grant: SessionGrant): Promise<common.AuthResponse>;
  /** admin reset (behaviour.md §4.7): every factor of the user deleted; returns how many. */
  resetUserMfa(userId: string): Promise<number>;
  /** `enrolled_mfa_methods` of each user (behaviour.md §5.3). */
  enrolledMethods(userIds: readonly string[]): Promise<Map<string, string[]>>;
  /** true when the caller sent an `mfa` cookie at all (a cheap first check; mfa decides whether it is valid) */
  hasSession(): boolean;
  /**
   * mfa verifies and stores a passkey (behaviour.md §4.3 webauthn_registration_verify): for `userId`
   * (user path), or for the caller's MFA session when null (its grant comes back; it is completed).
   */
  verifyPasskeyRegistration(attempt: PasskeyRegistrationAttempt, userId: string | null): Promise<PasskeyVerdict>;
  /** mfa's verdict on a passkey assertion (behaviour.md §4.3 webauthn_login_verify); completes a present MFA session. */
  verifyPasskeyLogin(credential: Opt<string>): Promise<PasskeyVerdict>;
}

/** {@link OtpChallenge} on a channel, with the options of the SMS legs (issue 16). */
export interface ChannelChallenge extends OtpChallenge {
  channel: 'email' | 'sms';
  /** default `login`; `password_reset` for forgot_password by phone (behaviour.md §3.4, §4.2) */
  purpose?: 'login' | 'password_reset';
  /** phone signup verification: session and code live 600 s (behaviour.md §4.2, §4.4) */
  signupVerification?: boolean;
  /** an unknown or revoked phone (forgot_password): the same session and cookie, no code sent, none accepted */
  decoy?: boolean;
}

/** A passkey registration the caller offers (behaviour.md §4.3). */
export interface PasskeyRegistrationAttempt extends ContactInput {
  credential?: Opt<string>;
  name?: Opt<string>;
  state?: Opt<string>;
}

/** A proven passkey ceremony: whose passkey, and the grant of the MFA session it completed, if any. */
export interface PasskeyVerdict {
  userId: string;
  passkeyId: string;
  /** null without an MFA session; `authTime` 0 means now */
  grant: (SessionGrant & { state: string | null }) | null;
}

/** The gate's answer (behaviour.md §4.1). */
export interface GateResult {
  /** `issue`, `email_otp`, `sms_otp`, `verify`, `enrol` or `offer` */
  outcome: string;
  /** null for `issue` */
  response: common.AuthResponse | null;
}

/**
 * Builds the `audit.recorded` event of an action in the current call (libs/auth `auditRecord` bound to
 * the call context by rpc/); the domain emits it through `tx.events` with the change it records.
 */
export type Audit = (action: string, details: AuditDetails) => BusEvents['audit.recorded'];

/** What the first step of a login decided: the user, and the grant tokens are finally issued with (§4.1). */
export interface OtpChallenge {
  user: UserRecord;
  /** `authTime`: the first step */
  grant: SessionGrant;
  state: string | null;
}

/** A code the caller offers for its MFA session (behaviour.md §4.3 verify_otp). */
export interface OtpAttempt extends ContactInput {
  otp?: Opt<string>;
  /** the caller says the code is a TOTP or recovery code */
  isTotp?: Opt<boolean>;
  state?: Opt<string>;
  /** the purpose the MFA session must have (default `login`; reset_password: `password_reset`) */
  purpose?: 'login' | 'password_reset';
}


/** A proven challenge: who proved which contact, and the grant its first step decided (§4.1). */
export interface MfaVerdict {
  userId: string;
  /** `email` or `sms`: that contact becomes verified */
  verifiedChannel: string;
  /** the address the code was sent to; it must still be the user's */
  verifiedContact: string;
  /** what the session is opened with; `authTime` 0 means now; `amr` the factor proven */
  grant: SessionGrant;
  /** the factor this completion verified for the first time (`totp`, `email_otp`, `sms_otp`), or '' */
  enrolledMethod: string;
}

/**
 * What the authn domain is built from. The domain is transport-free (issue 14 §3): it sees no call
 * context, cookie, credential or wire message; rpc/deps.ts adds those pieces for the handlers.
 */
export interface DomainDeps {
  options: AuthnOptions;
  /** users + the unit of work; events are emitted inside `users.transaction` through the builders of events.ts */
  users: UserRepository;
  sessions: SessionStore;
  lockout: LoginLockout;
  /** OAuth clients, trusted issuers, authorization codes, used assertion jtis (issue 18) */
  oauth: OAuthStore;
  jwt: JwtSigner;
  /**
   * The authenticator's user-activity check (behaviour.md §2.1), cached in all-in-one on SQLite;
   * absent: flows read the user and test `isRevoked`
   */
  activity?: { isActive(userId: string): Promise<boolean> };
  /** absent: a non-empty `required_relations` fails with `failed_precondition` */
  permissions?: PermissionChecker;
  /** Unix seconds */
  clock?: () => number;
  logger: Logger;
  /**
   * Runs the part of a request that must not change its timing (issue 30 §6: the account lookup and
   * link issue of forgot_password, magic_link_login and resend_verify_email, the account of a sign-up
   * with email verification on) after the answer. The default ({@link createAfterAnswerQueue}) starts
   * it shortly after without waiting and logs a failure; a process passes a queue's own to wait for it
   * before closing; tests pass `(work) => work()` to wait for it.
   */
  afterAnswer?: (work: () => Promise<void>) => Promise<void>;
}

/** How long work after the answer waits, in ms: the answer's way out through the gateway. */
const AFTER_ANSWER_DELAY_MS = 50;

/** Deps plus what is derived once at start: the context every domain flow takes. */
export interface AuthnContext extends DomainDeps {
  now(): number;
  afterAnswer: (work: () => Promise<void>) => Promise<void>;
  customClaims: CustomClaims | null;
  /** seals the link of every `email.send` job until the worker renders it (libs/crypto `jobSealKey`) */
  jobKey: KeyRing;
}

/** Work after the answer ({@link DomainDeps.afterAnswer}) and the wait for all of it before a shutdown. */
export interface AfterAnswerQueue {
  /** Starts `work` {@link AFTER_ANSWER_DELAY_MS} after the call, without waiting for it; a failure is logged. */
  afterAnswer(work: () => Promise<void>): Promise<void>;
  /** Resolves once every piece of work scheduled so far, started or not, has finished (never rejects). */
  drain(): Promise<void>;
}

/**
 * The production `afterAnswer`: work starts once the answer is on its way (it crosses the gateway
 * first, in process or not; a synchronous SQLite driver would otherwise hold the loop before it is
 * written), and a failure is the server's, logged, never the client's. What the answer promised
 * (a sign-up's account with email verification on, issue 30 §6) is written only then, so a stopping
 * process must {@link AfterAnswerQueue.drain} before it closes its database: without it a pod told to
 * stop right after answering a sign-up lost the account (issue 37 §4, `npm run test:k8s`).
 */
export function createAfterAnswerQueue(logger: Logger): AfterAnswerQueue {
  const pending = new Set<Promise<void>>();
  return {
    afterAnswer(work) {
      const done = new Promise<void>((resolve) => {
        setTimeout(() => {
          work().catch((err: unknown) => logger.error({ err }, 'work after the answer failed')).finally(resolve);
        }, AFTER_ANSWER_DELAY_MS);
      });
      pending.add(done);
      void done.then(() => pending.delete(done));
      return Promise.resolve();
    },
    async drain() {
      while (pending.size > 0) await Promise.all([...pending]);
    },
  };
}

/**
 * @throws AppError `invalid_argument` when the custom access token script does not compile
 */
export function createAuthnContext(deps: DomainDeps): AuthnContext {
  const clock = deps.clock ?? (() => Math.floor(Date.now() / 1000));
  return {
    ...deps,
    now: clock,
    afterAnswer: deps.afterAnswer ?? createAfterAnswerQueue(deps.logger).afterAnswer,
    customClaims: compileCustomClaims(deps.options.customAccessTokenScript, deps.logger),
    jobKey: jobSealKey(deps.options.encryptionKey, deps.options.clientSecret),
  };
}
