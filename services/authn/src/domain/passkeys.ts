/**
 * @module @gatehouse/authn/domain/passkeys
 * The passkey completions authn owns because they may issue tokens (behaviour.md §4.3
 * webauthn_registration_verify and webauthn_login_verify; issue 14 "flows go one way"): the mfa
 * service verifies the ceremony and answers a verdict, authn checks the account and issues.
 */
import { AppError } from '@gatehouse/errors';
import { userLoggedIn } from '../events.ts';
import type { UserRecord } from '../storage/ports.ts';
import type { Audit, AuthnContext, MfaChallenges, PasskeyRegistrationAttempt, PasskeyVerdict } from './deps.ts';
import { openSession, type Issued, type SessionGrant } from './issue.ts';
import { MFA_LOCKED_MESSAGE } from './login.ts';
import { withEnrolled } from './mfa-gate.ts';
import { DEFAULT_SCOPE, grantedRoles } from './roles.ts';
import { isRevoked } from './user.ts';
import { USER_REVOKED } from './verify-email.ts';

/** behaviour.md §9 */
export const PASSKEY_REGISTERED = 'Passkey registered successfully.';
export const PASSKEY_REGISTERED_MFA = 'Passkey registered and MFA setup complete.';
export const PASSKEY_LOGGED_IN = 'Logged in successfully with passkey.';
/** behaviour.md §4.3 */
export const PASSKEY_EMAIL_NOT_VERIFIED = 'email is not verified. please verify your email before signing in with a passkey';
/** the login method of a passkey login; its `amr` is `hwk` + `user` (RFC 8176: a user-verifying key) */
export const WEBAUTHN_LOGIN_METHOD = 'webauthn';
/** RFC 8176 values of a user-verifying passkey proven as the second factor */
export const PASSKEY_AMR = ['hwk', 'user'];

/** A registration's outcome: on the MFA-session path tokens, on the user path the user only. */
export interface PasskeyRegistration {
  message: string;
  user: UserRecord;
  /** null on the user path (tokens stay null, behaviour.md §4.3) */
  issued: Issued | null;
  /** the user's `enrolled_mfa_methods` after the registration */
  enrolledMfaMethods: string[];
}

const requireMfa = (mfa: MfaChallenges | null): MfaChallenges => {
  if (!mfa) throw new AppError('failed_precondition', 'MFA is not available');
  return mfa;
};

/**
 * The account a verdict names, checked for what still refuses a session: gone, revoked, MFA-locked (G0).
 * @throws AppError `unauthenticated` `refusal` (gone); `failed_precondition` `user access has been revoked` / the MFA-lock message
 */
async function accountOf(c: AuthnContext, userId: string, gone: AppError): Promise<UserRecord> {
  const user = await c.users.findById(userId);
  if (!user) throw gone;
  if (isRevoked(user)) throw new AppError('failed_precondition', USER_REVOKED);
  if (user.mfaLockedAt !== null) throw new AppError('failed_precondition', MFA_LOCKED_MESSAGE);
  return user;
}

/**
 * Opens the session of a completed passkey ceremony and emits `user.login`; with `audit`, also
 * `user.mfa_enabled` (a passkey set up in the MFA session completed the enrolment, behaviour.md §5.7).
 */
async function issue(c: AuthnContext, mfa: MfaChallenges, user: UserRecord, grant: SessionGrant, audit?: Audit): Promise<Issued> {
  const issued = await openSession(c, user, { ...grant, authTime: grant.authTime || c.now() });
  await c.users.transaction(async (tx) => {
    userLoggedIn(tx.events, user, grant.loginMethod);
    if (audit) {
      tx.events.emit('audit.recorded', audit('user.mfa_enabled', {
        actor: { type: 'user', id: user.id, email: user.email }, resourceType: 'user', resourceId: user.id, details: { method: 'webauthn' },
      }));
    }
  });
  return withEnrolled(mfa, issued);
}

/**
 * `POST /v1/webauthn_registration_verify` (behaviour.md §4.3). With `userId` (the signed-in caller)
 * the user path: mfa stores the passkey, tokens stay null, `user` is set. Without: the caller's MFA
 * session (offer/enrol state only) is completed by the new passkey and the withheld tokens are issued
 * with the session's grant.
 * @param mfa the mfa service's challenges for this call; null without the mfa service
 * @throws AppError mfa's (`invalid passkey registration`, `passkey challenge expired`, `cannot set up a
 *   passkey in the current state`, `invalid session`, the limit); `failed_precondition` revoked or locked
 */
export async function registerPasskey(
  c: AuthnContext, mfa: MfaChallenges | null, userId: string | null, attempt: PasskeyRegistrationAttempt, audit?: Audit,
): Promise<PasskeyRegistration> {
  const m = requireMfa(mfa);
  const verdict = await m.verifyPasskeyRegistration(attempt, userId);
  const user = await accountOf(c, verdict.userId, new AppError('not_found', 'user not found'));
  if (!verdict.grant) {
    const enrolled = (await m.enrolledMethods([user.id])).get(user.id) ?? [];
    return { message: PASSKEY_REGISTERED, user, issued: null, enrolledMfaMethods: enrolled };
  }
  const issued = await issue(c, m, user, { ...verdict.grant, amr: PASSKEY_AMR }, audit);
  return { message: PASSKEY_REGISTERED_MFA, user, issued, enrolledMfaMethods: issued.enrolledMfaMethods ?? [] };
}

/**
 * `POST /v1/webauthn_login_verify` (behaviour.md §4.1 "no gate", §4.3): a verified, user-verifying
 * passkey assertion issues tokens directly, even under `--enforce-mfa`; G0 and revocation still
 * apply, and an unverified email is refused. With an MFA session present, its stored grant is used.
 * @throws AppError `unauthenticated` `invalid passkey` (mfa's refusals, or the account is gone);
 *   `failed_precondition` revoked, locked, or `email is not verified. ...`
 */
export async function loginWithPasskey(c: AuthnContext, mfa: MfaChallenges | null, credential: string | null | undefined): Promise<Issued> {
  const m = requireMfa(mfa);
  const verdict: PasskeyVerdict = await m.verifyPasskeyLogin(credential);
  const user = await accountOf(c, verdict.userId, new AppError('unauthenticated', 'invalid passkey'));
  if (user.email !== null && user.emailVerifiedAt === null) throw new AppError('failed_precondition', PASSKEY_EMAIL_NOT_VERIFIED);
  // in an MFA session the first step's grant, the passkey as its second factor; else a passkey login
  const grant: SessionGrant = verdict.grant ? { ...verdict.grant, amr: PASSKEY_AMR } : {
    loginMethod: WEBAUTHN_LOGIN_METHOD, roles: grantedRoles(c.options, user.roles, undefined), scope: [...DEFAULT_SCOPE], authTime: c.now(),
  };
  return issue(c, m, user, grant);
}
