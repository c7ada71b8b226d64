/**
 * @module @gatehouse/authn/domain/federated
 * Federated login completion (issue 20): the one end of every upstream login, social callbacks
 * (authn's own), org OIDC SSO and SAML ACS (the orgs service, through AuthnInternal). The caller has
 * already verified the upstream's answer (code exchange, ID token, assertion); this module resolves
 * the upstream identity to a user, creates one on first sight, and logs them in through the MFA gate
 * (behaviour.md §4.1), like every other first step.
 *
 * Identity linking rules:
 * 1. (issuer, subject) already linked → that user, whatever email the upstream sends now.
 * 2. Otherwise, an upstream email that an account already holds links to it **only when the upstream
 *    verified the email**; an unverified one is refused ({@link UNVERIFIED_EMAIL_IN_USE}) and links
 *    nothing. Linking to an account whose own email was never verified marks it verified and removes
 *    its password and sessions: whoever registered the address without proving it (account
 *    pre-hijacking) loses the account to the address's proven owner.
 * 3. Otherwise a new user (signup method = the method; email verified as the upstream says), with
 *    the §3.1 self-service roles: `user.created` and, for a social provider, `user.signup` (§8).
 */
import { randomUUID } from 'node:crypto';
import { AppError } from '@gatehouse/errors';
import type { BusEvents } from '@gatehouse/contracts';
import type { UserRecord } from '../storage/ports.ts';
import { userSignedUp } from '../events.ts';
import type { AuthnContext, MfaChallenges } from './deps.ts';
import { loginRedirect, type LinkRedirect } from './login-redirect.ts';
import { passMfaGate } from './mfa-gate.ts';
import { DEFAULT_SCOPE, grantedRoles, selfServiceRoles } from './roles.ts';
import { addSignupMethod, blankUser, isRevoked, publicUser } from './user.ts';
import { MAX_FIELD_CHARS, MAX_URL_CHARS, normaliseEmail, normaliseList, type Opt } from './validation.ts';

/** The ten social providers (behaviour.md §1.3, §5.2), each also a signup and login method. */
export const SOCIAL_PROVIDERS = ['google', 'github', 'facebook', 'microsoft', 'apple', 'linkedin', 'discord', 'twitter', 'twitch', 'roblox'] as const;
export type SocialProvider = (typeof SOCIAL_PROVIDERS)[number];
/** The method of an organization's OIDC or SAML connection (behaviour.md §5.3 signup_methods `sso`). */
export const SSO_METHOD = 'sso';
/** Every method a federated login may carry. */
export const FEDERATED_METHODS: readonly string[] = [...SOCIAL_PROVIDERS, SSO_METHOD];

export const UNVERIFIED_EMAIL_IN_USE =
  'an account with this email already exists and the identity provider did not verify the email; sign in to that account another way';
export const USER_REVOKED = 'user access has been revoked';
export const SIGNUP_DISABLED = 'signup is disabled for this instance';
export const LOGGED_IN = 'Logged in successfully';
const MAX_ISSUER_CHARS = 512;
const MAX_SUBJECT_CHARS = 255;

/** An upstream identity as the caller verified it. */
export interface FederatedIdentity {
  /** a {@link FEDERATED_METHODS} entry */
  method: string;
  /** provider name, OIDC issuer URL or SAML IdP entity ID (≤ 512 characters) */
  issuer: string;
  /** the upstream's stable user id: OIDC `sub`, GitHub numeric id, SAML NameID (≤ 255 characters) */
  subject: string;
  email?: Opt<string>;
  /** the upstream vouches for the email (OIDC `email_verified`, GitHub `verified`, …) */
  emailVerified: boolean;
  givenName?: Opt<string>;
  familyName?: Opt<string>;
  nickname?: Opt<string>;
  /** an http(s) URL; anything else is dropped */
  picture?: Opt<string>;
}

/** A completion: the identity and what the login asked for at its start. */
export interface FederatedLogin extends FederatedIdentity {
  redirectUri?: Opt<string>;
  state?: Opt<string>;
  /** requested roles (§3.1 self-service rules); empty: the defaults */
  roles?: readonly string[];
  scope?: readonly string[];
  /** the organization of an SSO/SAML connection (recorded by the caller) */
  orgId?: Opt<string>;
  /** the upstream refused (e.g. `access_denied`) or the caller's check failed: redirect with it, touch nothing */
  error?: Opt<string>;
  errorDescription?: Opt<string>;
}

/** What a completion did. */
export interface FederatedResult extends LinkRedirect {
  /** the user logged in (or gated); null when refused */
  userId: string | null;
  /** this call created the user */
  created: boolean;
}

/** The user a federated identity resolves to. */
export interface ResolvedUser {
  user: UserRecord;
  /** created by this call */
  created: boolean;
  /** linked by this call (created, or an existing account by verified email) */
  linked: boolean;
  /** the password and sessions of a pre-registered, never verified account were removed */
  signedOut: boolean;
}

/** Trimmed, cut to `max`, or null when empty (upstream profile data is never refused for its length). */
function profileText(v: Opt<string>, max = MAX_FIELD_CHARS): string | null {
  if (typeof v !== 'string') return null;
  const t = v.trim();
  return t === '' ? null : t.slice(0, max);
}

function pictureUrl(v: Opt<string>): string | null {
  const t = profileText(v, MAX_URL_CHARS);
  if (t === null) return null;
  try {
    const u = new URL(t);
    return u.protocol === 'https:' || u.protocol === 'http:' ? t : null;
  } catch {
    return null;
  }
}

/**
 * Checks the identity's method, issuer and subject.
 * @throws AppError `invalid_argument` `invalid federated identity: <what>`
 */
function checkIdentity(id: FederatedIdentity): { issuer: string; subject: string } {
  const bad = (what: string): AppError => new AppError('invalid_argument', `invalid federated identity: ${what}`);
  if (!FEDERATED_METHODS.includes(id.method)) throw bad('unknown method');
  const issuer = (id.issuer ?? '').trim();
  const subject = (id.subject ?? '').trim();
  if (issuer === '' || issuer.length > MAX_ISSUER_CHARS) throw bad('issuer');
  if (subject === '' || subject.length > MAX_SUBJECT_CHARS) throw bad('subject');
  return { issuer, subject };
}

/**
 * Resolves an upstream identity to a user by the rules of this module's header, in one transaction:
 * the new user, its link and its events commit together or not at all.
 * @param rolesReq requested roles (already a non-empty list, or undefined for the defaults)
 * @throws AppError `invalid_argument` `invalid federated identity: …`, `invalid email address`,
 *   `invalid roles`; `failed_precondition` {@link UNVERIFIED_EMAIL_IN_USE}, {@link USER_REVOKED},
 *   {@link SIGNUP_DISABLED} (a social first login with `--enable-signup` off)
 */
export async function resolveFederatedUser(c: AuthnContext, id: FederatedIdentity, rolesReq: string[] | undefined): Promise<ResolvedUser> {
  const o = c.options;
  const { issuer, subject } = checkIdentity(id);
  const emailRaw = profileText(id.email, 320);
  const email = emailRaw === null ? null : normaliseEmail(emailRaw);
  const requested = rolesReq ? selfServiceRoles(o, rolesReq) : undefined;
  const social = id.method !== SSO_METHOD;
  const now = c.now();
  const resolved = await c.users.transaction(async (tx): Promise<ResolvedUser> => {
    const known = await tx.identities.find(issuer, subject);
    let user: UserRecord | null = known ? await tx.users.findById(known.userId) : null;
    // a link whose user is gone (deleted outside delete_user) is stale: resolve afresh
    if (known && !user) await tx.identities.unlink(known.id);
    let created = false;
    let linked = false;
    let signedOut = false;
    if (!user && email !== null) {
      await tx.users.lockIdentifier('email', email);
      const holder = await tx.users.findByEmail(email);
      if (holder) {
        if (!id.emailVerified) throw new AppError('failed_precondition', UNVERIFIED_EMAIL_IN_USE);
        user = holder;
        if (holder.emailVerifiedAt === null) {
          // pre-hijacking: the address's unproven registrant keeps no way in
          user = { ...holder, emailVerifiedAt: now, passwordHash: null, updatedAt: now };
          signedOut = true;
        }
        linked = true;
      }
    }
    if (!user) {
      if (social && !o.enableSignup) throw new AppError('failed_precondition', SIGNUP_DISABLED);
      user = {
        ...blankUser(now),
        email,
        emailVerifiedAt: email !== null && id.emailVerified ? now : null,
        signupMethods: id.method,
        givenName: profileText(id.givenName),
        familyName: profileText(id.familyName),
        nickname: profileText(id.nickname),
        picture: pictureUrl(id.picture),
        roles: requested ?? [...o.defaultRoles],
      };
      await tx.users.create(user);
      if (social) userSignedUp(tx.events, user, id.method);
      else {
        const data: BusEvents['user.created'] = { user: publicUser(user), signup_method: id.method };
        tx.events.emit('user.created', data);
      }
      created = true;
      linked = true;
    }
    if (isRevoked(user)) throw new AppError('failed_precondition', USER_REVOKED);
    if (linked) await tx.identities.link({ id: randomUUID(), issuer, subject, userId: user.id, method: id.method, createdAt: now });
    if (!created) {
      // behaviour.md §3.4 (as a magic link): requested non-protected roles are added to an existing user
      const extra = (requested ?? []).filter((r) => !user!.roles.includes(r));
      const methods = addSignupMethod(user.signupMethods, id.method);
      if (extra.length > 0 || methods !== user.signupMethods || signedOut) {
        user = { ...user, roles: [...user.roles, ...extra], signupMethods: methods, updatedAt: now };
        await tx.users.update(user);
      }
    }
    return { user, created, linked, signedOut };
  });
  if (resolved.signedOut) await c.sessions.deleteAllForUser(resolved.user.id);
  return resolved;
}

/**
 * Completes a federated login (issue 20): resolves the identity ({@link resolveFederatedUser}), then
 * the MFA gate (behaviour.md §4.1) with login method = the method, and answers the Location of
 * {@link loginRedirect}: tokens (`user.login`), the gate's parameters, or `error`/`error_description`
 * on the validated `redirect_uri`. `login.error` short-cuts to that error redirect. Never throws.
 * @param mfa the mfa service's challenges for this call; null without it
 */
export async function completeFederatedLogin(c: AuthnContext, mfa: MfaChallenges | null, login: FederatedLogin): Promise<FederatedResult> {
  let userId: string | null = null;
  let created = false;
  const out = await loginRedirect(c, login, async (state) => {
    if (login.error) throw new AppError('unauthenticated', profileText(login.errorDescription, MAX_URL_CHARS) ?? profileText(login.error) ?? 'login failed');
    const roles = normaliseList('roles', login.roles ?? []);
    const scope = normaliseList('scope', login.scope ?? []);
    const r = await resolveFederatedUser(c, login, roles);
    created = r.created;
    const grant = { loginMethod: login.method, roles: grantedRoles(c.options, r.user.roles, roles), scope: scope ?? [...DEFAULT_SCOPE], authTime: c.now() };
    const outcome = await passMfaGate(c, mfa, { user: r.user, grant, state, issuedMessage: LOGGED_IN, emitLogin: true });
    userId = r.user.id;
    return outcome;
  }, 'federated login failed');
  return { ...out, userId, created };
}
