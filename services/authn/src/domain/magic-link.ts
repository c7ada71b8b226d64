/**
 * @module @gatehouse/authn/domain/magic-link
 * `magic_link_login` (behaviour.md §3.4): mails a `magic_link_login` link to `/verify_email`,
 * creating the account on first use when signup is enabled. The answer never reveals whether the
 * address has an account.
 */
import { AppError } from '@gatehouse/errors';
import type { UserRecord } from '../storage/ports.ts';
import { userSignedUp } from '../events.ts';
import type { AuthnContext } from './deps.ts';
import { checkRedirectUri } from './redirect.ts';
import { selfServiceRoles, type GrantRequest } from './roles.ts';
import { blankUser, isRevoked } from './user.ts';
import { MAX_URL_CHARS, normaliseEmail, normaliseList, optText, type Opt } from './validation.ts';
import { claimLinkMail, issueLink, verifyEmailLink } from './verification.ts';

export const MAGIC_LINK_SENT =
  "If an account exists for this email, a magic link has been sent. Please check your inbox. If you don't receive it within a few minutes, double-check the email address for typos.";

/** A new passwordless account with an unverified email (behaviour.md §3.1 self-service roles). */
function newMagicLinkUser(email: string, roles: string[], now: number): UserRecord {
  return { ...blankUser(now), email, signupMethods: 'magic_link_login', roles };
}

/**
 * A magic link request; its roles are self-service roles (behaviour.md §3.1), added to an existing
 * user when the link is redeemed, and its roles, scope and state travel in the link.
 */
export interface MagicLinkRequest extends GrantRequest {
  email?: Opt<string>;
  redirectUri?: Opt<string>;
}

/**
 * `POST /v1/magic_link_login`: the answer is always {@link MAGIC_LINK_SENT}.
 * Unknown address + signup enabled: the user is created (`user.created`, `user.signup`, method
 * `magic_link_login`). Revoked user, or unknown address with signup disabled: nothing is sent.
 * At most one mail per address per 60 s. The user, events and `email.send` job commit together.
 * @throws AppError `failed_precondition` `magic link login is disabled for this instance`;
 *   `invalid_argument` `invalid email address` / `invalid roles` / `invalid redirect URI`
 */
export async function magicLinkLogin(c: AuthnContext, req: MagicLinkRequest): Promise<void> {
  const o = c.options;
  const rawEmail = optText('email', req.email, 320);
  const rolesReq = normaliseList('roles', req.roles);
  const scope = normaliseList('scope', req.scope);
  const state = optText('state', req.state, MAX_URL_CHARS);
  const redirectReq = optText('redirect_uri', req.redirectUri, MAX_URL_CHARS);
  if (!o.enableMagicLinkLogin) throw new AppError('failed_precondition', 'magic link login is disabled for this instance');
  const email = normaliseEmail(rawEmail ?? '');
  // validated for every address, so a refusal never depends on whether the account exists
  const roles = selfServiceRoles(o, rolesReq);
  const redirect = checkRedirectUri(o, redirectReq);
  const now = c.now();
  // claimed for every address, known or not (issue 30 §2): the answer never tells them apart
  const claim = await claimLinkMail(c, email, 'magic_link_login');

  // the lookup, the signup and the mail happen after the answer (issue 30 §6: no timing oracle)
  await c.afterAnswer(() => c.users.transaction(async (tx) => {
    await tx.users.lockIdentifier('email', email);
    let user = await tx.users.findByEmail(email);
    if (!user) {
      if (!o.enableSignup) return;
      user = newMagicLinkUser(email, roles, now);
      await tx.users.create(user);
      userSignedUp(tx.events, user, 'magic_link_login');
    }
    if (isRevoked(user)) return;
    await issueLink(c, tx, {
      purpose: 'magic_link_login', user, redirectUri: redirect, state: state ?? null, scope: scope ?? null, roles: rolesReq ?? null,
      linkOf: (token, r) => verifyEmailLink(o.url, token, r),
    }, claim);
  }));
}
