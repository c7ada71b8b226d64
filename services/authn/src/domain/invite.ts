/**
 * @module @gatehouse/authn/domain/invite
 * `invite_members` (behaviour.md §5.3): creates users with an unverified email (`user.created`) and
 * mails each a link through the `email.send` job: with magic link login on, a `magic_link_login` link
 * to `/verify_email`; otherwise an `invite_member` link to `<url>/app/setup-password`, redeemed by
 * `reset_password` (72 h, §2.1). Audit `admin.invite_sent` per invited user.
 */
import { randomUUID } from 'node:crypto';
import type { BusEvents } from '@gatehouse/contracts';
import { AppError } from '@gatehouse/errors';
import type { UserRecord } from '../storage/ports.ts';
import type { AdminAudit } from './admin-users.ts';
import type { AuthnContext } from './deps.ts';
import { isEmailServiceEnabled } from './options.ts';
import { checkRedirectUri } from './redirect.ts';
import { publicUser } from './user.ts';
import { claimLinkMail, issueLink, linkFor, verifyEmailLink, type LinkMailClaim } from './verification.ts';
import { MAX_URL_CHARS, normaliseEmail, optText, type Opt } from './validation.ts';

export const MAX_INVITES = 100;
export const invitedMessage = (n: number): string => `${n} user(s) invited successfully.`;

/**
 * @returns the created users, in request order
 * @throws AppError `invalid_argument` (`cannot invite more than 100 members in a single request`,
 *   `no valid emails found`, `invalid redirect URI`); `failed_precondition` (`email sending is
 *   disabled`, `either basic authentication or magic link login is required`); `already_exists`
 *   `all emails already exist`
 */
export async function inviteMembers(c: AuthnContext, req: { emails: readonly string[]; redirectUri?: Opt<string> }, audit: AdminAudit): Promise<UserRecord[]> {
  const o = c.options;
  if (req.emails.length > MAX_INVITES) throw new AppError('invalid_argument', 'cannot invite more than 100 members in a single request');
  if (!isEmailServiceEnabled(o)) throw new AppError('failed_precondition', 'email sending is disabled');
  if (!o.enableBasicAuthentication && !o.enableMagicLinkLogin) throw new AppError('failed_precondition', 'either basic authentication or magic link login is required');
  const redirectUri = checkRedirectUri(o, optText('redirect_uri', req.redirectUri, MAX_URL_CHARS));
  const emails: string[] = [];
  for (const raw of req.emails) {
    try {
      const e = normaliseEmail(raw);
      if (!emails.includes(e)) emails.push(e);
    } catch {
      // §5.3: invalid emails are dropped
    }
  }
  if (emails.length === 0) throw new AppError('invalid_argument', 'no valid emails found');
  const purpose = o.enableMagicLinkLogin ? 'magic_link_login' : 'invite_member';
  const now = c.now();
  // one claim per address before the transaction (issue 30 §2): the caps hold for invites too
  const claims = new Map<string, LinkMailClaim | null>();
  for (const email of emails) claims.set(email, await claimLinkMail(c, email, purpose));
  const created = await c.users.transaction(async (tx) => {
    const out: UserRecord[] = [];
    for (const email of emails) {
      await tx.users.lockIdentifier('email', email);
      if (await tx.users.findByEmail(email)) continue;
      const user: UserRecord = {
        id: randomUUID(), email, emailVerifiedAt: null, passwordHash: null, signupMethods: purpose === 'magic_link_login' ? 'magic_link_login' : 'basic_auth',
        givenName: null, familyName: null, middleName: null, nickname: null, gender: null, birthdate: null, picture: null,
        phoneNumber: null, phoneNumberVerifiedAt: null, roles: [...o.defaultRoles], createdAt: now, updatedAt: now,
        revokedTimestamp: null, deactivatedAt: null, isMultiFactorAuthEnabled: null, hasSkippedMfaSetupAt: null, mfaLockedAt: null, appData: null,
      };
      await tx.users.create(user);
      const createdEvent: BusEvents['user.created'] = { user: publicUser(user), signup_method: user.signupMethods };
      tx.events.emit('user.created', createdEvent);
      await issueLink(c, tx, {
        purpose, user, redirectUri,
        linkOf: (token, r) => (purpose === 'magic_link_login' ? verifyEmailLink(o.url, token, r) : linkFor(o.url, token, r)),
      }, claims.get(email) ?? null);
      audit(tx.events, 'admin.invite_sent', { resourceId: user.id });
      out.push(user);
    }
    if (out.length === 0) throw new AppError('already_exists', 'all emails already exist');
    return out;
  });
  return created;
}
