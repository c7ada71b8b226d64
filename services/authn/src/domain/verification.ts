/**
 * @module @gatehouse/authn/domain/verification
 * Emailed verification links (behaviour.md §2.1): an opaque 256-bit token, only its SHA-256
 * stored, 30 min, single use; a new one supersedes the previous one of the same purpose for the
 * address; at most one link mail per address and purpose per 60 s (§10, silent), claimed before the
 * transaction that issues it, on top of the per-address hourly and daily caps (issue 30 §2).
 */
import { randomUUID } from 'node:crypto';
import { claimSend, sendCapsOf } from '@gatehouse/auth';
import { AppError } from '@gatehouse/errors';
import { randomToken, sha256Hex } from '@gatehouse/crypto';
import type { AuthnTx, UserRecord, VerificationPurpose, VerificationRequestRecord } from '../storage/ports.ts';
import { linkEmail } from '../events.ts';
import type { AuthnContext } from './deps.ts';

/** Link lifetime in seconds (behaviour.md §2.1). */
export const LINK_TTL_SECONDS = 30 * 60;
/** `invite_member` links live 72 h (behaviour.md §2.1). */
export const INVITE_TTL_SECONDS = 72 * 3600;
/** At most one link mail per address and purpose in this many seconds (behaviour.md §10). */
export const LINK_MAIL_INTERVAL_SECONDS = 60;

export interface LinkRequest {
  purpose: VerificationPurpose;
  /** the user the link is for (its email is the recipient unless `email` is given) */
  user: UserRecord;
  /** recipient; defaults to `user.email` */
  email?: string;
  redirectUri: string | null;
  state?: string | null;
  scope?: string[] | null;
  roles?: string[] | null;
  /** builds the mailed URL from the token */
  linkOf(token: string, request: VerificationRequestRecord): string;
}

/** A link mail claimed by {@link claimLinkMail}: to this address, for this purpose. */
export interface LinkMailClaim {
  readonly email: string;
  readonly purpose: VerificationPurpose;
}

/**
 * Claims one link mail to `email` for `purpose`, before the transaction that issues it and before
 * any account is looked up, so a known and an unknown address are answered alike (issue 30 §2): of
 * concurrent requests inside the 60 s interval one gets the claim.
 * @returns the claim to hand to {@link issueLink}, or null inside the interval (nothing is sent; silent, §10)
 * @throws AppError `resource_exhausted` `too many messages to this destination, please try again
 *   later` with `Retry-After` when the address's hourly or daily cap is reached
 */
export async function claimLinkMail(c: AuthnContext, email: string, purpose: VerificationPurpose): Promise<LinkMailClaim | null> {
  const r = await claimSend(c.lockout, sendCapsOf(c.options), { channel: 'email', destination: email, purpose, intervalSeconds: LINK_MAIL_INTERVAL_SECONDS }, c.now());
  if (r.send) return { email, purpose };
  c.logger.debug({ purpose }, 'link mail suppressed: one per address and purpose per 60 s');
  return null;
}

/**
 * Issues a link inside `tx`: stores the hashed token (superseding the previous one) and queues the
 * `email.send` job in the same transaction. Returns null, and does nothing, without a claim (a link
 * of this purpose went to the address less than 60 s ago; behaviour.md §10: silent).
 * @param claim from {@link claimLinkMail} for this address and purpose, made before `tx` began
 * @throws Error when `claim` is for another address or purpose (a programming error)
 */
export async function issueLink(c: AuthnContext, tx: AuthnTx, req: LinkRequest, claim: LinkMailClaim | null): Promise<{ token: string; request: VerificationRequestRecord } | null> {
  const email = req.email ?? req.user.email;
  if (!email) throw new Error('issueLink: the user has no email address');
  if (!claim) return null;
  if (claim.email !== email || claim.purpose !== req.purpose) throw new Error('issueLink: the claim is for another address or purpose');
  const now = c.now();
  const token = randomToken(32);
  const request: VerificationRequestRecord = {
    id: randomUUID(),
    identifier: req.purpose,
    email,
    tokenHash: sha256Hex(token),
    expiresAt: now + (req.purpose === 'invite_member' ? INVITE_TTL_SECONDS : LINK_TTL_SECONDS),
    redirectUri: req.redirectUri,
    state: req.state ?? null,
    scope: req.scope && req.scope.length > 0 ? req.scope : null,
    roles: req.roles && req.roles.length > 0 ? req.roles : null,
    userId: req.user.id,
    consumedAt: null,
    createdAt: now,
    updatedAt: now,
  };
  await tx.verifications.issue(request);
  linkEmail(tx.events, c.jobKey, req.purpose, email, req.user, req.linkOf(token, request));
  return { token, request };
}

/** `<url>/verify_email?token=…&redirect_uri=…[&state=…&scope=…&roles=…]` (behaviour.md §3.2, §3.4). */
export function verifyEmailLink(url: string, token: string, r: Pick<VerificationRequestRecord, 'redirectUri' | 'state' | 'scope' | 'roles'>): string {
  const q = new URLSearchParams({ token, redirect_uri: r.redirectUri ?? `${url}/app` });
  if (r.state) q.set('state', r.state);
  if (r.scope && r.scope.length > 0) q.set('scope', r.scope.join(' '));
  if (r.roles && r.roles.length > 0) q.set('roles', r.roles.join(','));
  return `${url}/verify_email?${q.toString()}`;
}

/** `<redirect>?token=…` (or `&token=…` when the redirect already has a query; behaviour.md §3.4). */
export function resetPasswordLink(redirect: string, token: string): string {
  const u = new URL(redirect);
  u.searchParams.set('token', token);
  return u.toString();
}

/** The mailed URL for a request of `purpose` (used when a link is re-sent). */
export function linkFor(url: string, token: string, r: VerificationRequestRecord): string {
  if (r.identifier === 'forgot_password') return resetPasswordLink(r.redirectUri ?? `${url}/app/reset-password`, token);
  if (r.identifier === 'invite_member') {
    return `${url}/app/setup-password?${new URLSearchParams({ token, redirect_uri: r.redirectUri ?? `${url}/app` }).toString()}`;
  }
  return verifyEmailLink(url, token, r);
}

/**
 * Finds a redeemable request: known token, one of `purposes`, unconsumed, unexpired.
 * @throws AppError `invalid_argument` `message` otherwise
 */
export async function findRedeemable(c: AuthnContext, tx: AuthnTx, token: string | undefined, purposes: readonly VerificationPurpose[], message: string): Promise<VerificationRequestRecord> {
  const invalid = new AppError('invalid_argument', message);
  if (!token || token.trim() === '') throw invalid;
  const r = await tx.verifications.findByTokenHash(sha256Hex(token.trim()));
  if (!r || !purposes.includes(r.identifier) || r.consumedAt !== null || r.expiresAt <= c.now()) throw invalid;
  return r;
}

/** The user a request belongs to: by id, else by address. */
export async function userOf(tx: AuthnTx, r: VerificationRequestRecord): Promise<UserRecord | null> {
  return r.userId ? tx.users.findById(r.userId) : tx.users.findByEmail(r.email);
}
