/**
 * @module @gatehouse/authn/domain/resend
 * `resend_verify_email` (behaviour.md §3.4): re-sends a pending link with a fresh token, at most
 * once per 60 s per address and purpose; the previous link stops working. One answer always.
 */
import { AppError } from '@gatehouse/errors';
import type { VerificationPurpose } from '../storage/ports.ts';
import type { AuthnContext } from './deps.ts';
import { isRevoked } from './user.ts';
import { MAX_URL_CHARS, normaliseEmail, optText, type Opt } from './validation.ts';
import { claimLinkMail, issueLink, linkFor, userOf } from './verification.ts';

export const RESEND_MESSAGE =
  "If a verification is pending for this email, a new link has been sent. Please check your inbox. If you don't receive it within a few minutes, double-check the email address for typos.";

const RESENDABLE: readonly VerificationPurpose[] = ['basic_auth_signup', 'forgot_password', 'update_email'];

/** A request to re-send a pending link. */
export interface ResendRequest {
  email?: Opt<string>;
  /** the purpose: `basic_auth_signup`, `forgot_password` or `update_email` */
  identifier?: Opt<string>;
  /** replaces the pending request's `state` when given */
  state?: Opt<string>;
}

/**
 * `POST /v1/resend_verify_email`: the answer is always {@link RESEND_MESSAGE}. A new link goes out
 * only when an unexpired, unconsumed request of that purpose exists for the address and its user is
 * still active; it keeps the request's redirect, scope and roles (and takes a new `state` if given).
 * @throws AppError `invalid_argument` `invalid identifier` / `invalid email address`
 */
export async function resendVerifyEmail(c: AuthnContext, req: ResendRequest): Promise<void> {
  const o = c.options;
  const rawEmail = optText('email', req.email, 320);
  const identifier = optText('identifier', req.identifier, 64);
  const state = optText('state', req.state, MAX_URL_CHARS);
  if (!RESENDABLE.includes(identifier?.trim() as VerificationPurpose)) throw new AppError('invalid_argument', 'invalid identifier');
  const purpose = identifier!.trim() as VerificationPurpose;
  const email = normaliseEmail(rawEmail ?? '');
  const now = c.now();
  // claimed whether or not a request is pending (issue 30 §2): the answer never tells them apart
  const claim = await claimLinkMail(c, email, purpose);

  // the lookup and the mail happen after the answer (issue 30 §6: no timing oracle)
  await c.afterAnswer(() => c.users.transaction(async (tx) => {
    const pending = await tx.verifications.findPending(email, purpose);
    if (!pending || pending.expiresAt <= now) return;
    const user = await userOf(tx, pending);
    if (!user || isRevoked(user) || user.email !== email) return;
    await issueLink(c, tx, {
      purpose, user, email, redirectUri: pending.redirectUri, state: state || pending.state, scope: pending.scope, roles: pending.roles,
      linkOf: (token, r) => linkFor(o.url, token, r),
    }, claim);
  }));
}
