/**
 * @module @gatehouse/authn/domain/verify-email
 * `verify_email` and its link target `GET /verify_email` (behaviour.md §3.4): redeem a
 * `basic_auth_signup`, `magic_link_login`, `update_email` or `invite_member` token, mark the address
 * verified, and log the user in through the MFA gate (§4.1).
 */
import { AppError } from '@gatehouse/errors';
import type { UserRecord, VerificationPurpose } from '../storage/ports.ts';
import type { AuthnContext, MfaChallenges } from './deps.ts';
import type { AuthOutcome } from './issue.ts';
import { loginRedirect, type LinkRedirect } from './login-redirect.ts';
import { MFA_LOCKED_MESSAGE, passMfaGate } from './mfa-gate.ts';
import { DEFAULT_SCOPE, grantedRoles } from './roles.ts';
import { addSignupMethod, isRevoked } from './user.ts';
import { MAX_URL_CHARS, optText, type Opt } from './validation.ts';
import { findRedeemable, userOf } from './verification.ts';

export const EMAIL_VERIFIED = 'Email verified successfully.';
export const INVALID_VERIFICATION_TOKEN = 'invalid verification token';
export const USER_REVOKED = 'user access has been revoked';
const PURPOSES: readonly VerificationPurpose[] = ['basic_auth_signup', 'magic_link_login', 'update_email', 'invite_member'];
const MAX_TOKEN_CHARS = 512;

/** A verify_email request. */
export interface VerifyEmailRequest {
  token?: Opt<string>;
  state?: Opt<string>;
}

/** The query of the emailed link `GET /verify_email`; `roles` and `scope` are space- or comma-separated. */
export interface EmailLinkVisit extends VerifyEmailRequest {
  redirectUri?: Opt<string>;
  roles?: Opt<string>;
  scope?: Opt<string>;
}

export type { LinkRedirect };

/** Roles and scope a link may carry in its query (space or comma separated). */
interface LinkGrant {
  roles?: string[];
  scope?: string[];
}

/**
 * Redeems `token`: checks it, applies the verification (and, for `update_email`, the new address;
 * for a magic link, the requested roles and the `magic_link_login` signup method), consumes it,
 * then runs the MFA gate: tokens (`user.login`) or the gate's challenge/offer.
 * @throws AppError `invalid_argument` `invalid verification token`; `failed_precondition`
 *   `user access has been revoked` or the MFA-lock message; `invalid_argument` `invalid roles`
 */
async function redeem(c: AuthnContext, mfa: MfaChallenges | null, token: string | undefined, fromLink: LinkGrant, state: string | null): Promise<AuthOutcome> {
  const o = c.options;
  const now = c.now();
  const { user, request, roles } = await c.users.transaction(async (tx) => {
    const r = await findRedeemable(c, tx, token, PURPOSES, INVALID_VERIFICATION_TOKEN);
    const u = await userOf(tx, r);
    if (!u) throw new AppError('invalid_argument', INVALID_VERIFICATION_TOKEN);
    if (isRevoked(u)) throw new AppError('failed_precondition', USER_REVOKED);
    // update_email: the link is for the address the user changed to; a later change makes it stale
    if (u.email !== r.email) throw new AppError('invalid_argument', INVALID_VERIFICATION_TOKEN);
    if (!(await tx.verifications.consume(r.id, now))) throw new AppError('invalid_argument', INVALID_VERIFICATION_TOKEN);
    const next: UserRecord = { ...u, emailVerifiedAt: u.emailVerifiedAt ?? now, updatedAt: now };
    if (r.identifier === 'magic_link_login') {
      // behaviour.md §3.4: requested non-protected roles are added to an existing user
      const extra = (r.roles ?? []).filter((role) => o.roles.includes(role) && !o.protectedRoles.includes(role) && !next.roles.includes(role));
      next.roles = [...next.roles, ...extra];
      next.signupMethods = addSignupMethod(next.signupMethods, 'magic_link_login');
    }
    // refused roles roll the whole redemption back: the token stays usable
    const granted = grantedRoles(o, next.roles, r.roles ?? fromLink.roles);
    await tx.users.update(next);
    return { user: next, request: r, roles: granted };
  });
  // login step 7, then the §4.1 gate and tokens
  if (user.mfaLockedAt !== null) throw new AppError('failed_precondition', MFA_LOCKED_MESSAGE);
  const loginMethod = request.identifier === 'magic_link_login' ? 'magic_link_login' : 'basic_auth';
  const scope = request.scope ?? fromLink.scope ?? [...DEFAULT_SCOPE];
  const outcome = await passMfaGate(c, mfa, { user, grant: { loginMethod, roles, scope, authTime: now }, state, issuedMessage: EMAIL_VERIFIED, emitLogin: true });
  return { ...outcome, verifiedUser: { id: user.id, email: user.email } };
}

/**
 * `POST /v1/verify_email`, answered {@link EMAIL_VERIFIED}: redeems the token and logs the user in
 * through the MFA gate.
 * @param mfa the mfa service's challenges for this call; null without it
 * @returns the tokens and the session cookie, or the gate's answer
 * @throws AppError as {@link redeem}; `invalid_argument` for a field over its length
 */
export async function verifyEmail(c: AuthnContext, mfa: MfaChallenges | null, req: VerifyEmailRequest): Promise<AuthOutcome> {
  const token = optText('token', req.token, MAX_TOKEN_CHARS);
  const state = optText('state', req.state, MAX_URL_CHARS) || null;
  return redeem(c, mfa, token, {}, state);
}

export const splitList = (v: string | undefined): string[] | undefined => {
  const list = (v ?? '').split(/[\s,]+/).filter(Boolean);
  return list.length > 0 ? [...new Set(list)] : undefined;
};

/**
 * The link target `GET /verify_email?token&redirect_uri&state&roles&scope` (behaviour.md §3.4): the
 * Location of a 302, built by {@link loginRedirect} (tokens, the gate's parameters, or `error` and
 * `error_description`). Never throws for a refusal.
 */
export async function verifyEmailLinkTarget(c: AuthnContext, mfa: MfaChallenges | null, visit: EmailLinkVisit): Promise<LinkRedirect> {
  return loginRedirect(c, visit, async (state) => {
    const token = optText('token', visit.token, MAX_TOKEN_CHARS);
    const grant: LinkGrant = {};
    const roles = splitList(optText('roles', visit.roles, MAX_URL_CHARS));
    const scope = splitList(optText('scope', visit.scope, MAX_URL_CHARS));
    if (roles) grant.roles = roles;
    if (scope) grant.scope = scope;
    return redeem(c, mfa, token, grant, state);
  }, 'verify_email link failed');
}
