/**
 * @module @gatehouse/authn/domain/issue
 * Opening a session and issuing tokens bound to it (behaviour.md §2.2 "any response that issues
 * tokens": a new session, tokens bound to it, both session cookies set). The cookies are values
 * here ({@link SessionCookie}); rpc/cookies.ts writes them as Set-Cookie.
 */
import { randomUUID } from 'node:crypto';
import type { SessionRecord } from '@gatehouse/auth';
import type { common } from '@gatehouse/contracts';
import { randomToken, sha256Hex } from '@gatehouse/crypto';
import type { UserRecord } from '../storage/ports.ts';
import type { AuthnContext } from './deps.ts';
import { currentCallOrigin } from './call-origin.ts';
import { issueTokens, type IssuedTokens, type OidcRequest } from './tokens.ts';

export interface SessionGrant {
  loginMethod: string;
  roles: string[];
  scope: string[];
  /** Unix s of the original authentication (kept across rotation) */
  authTime: number;
  /** RFC 8176 `amr` values of a second factor proven for this login (issue 16); absent: none */
  amr?: string[];
  /** issue 18: the OAuth client the tokens are issued to; absent: the server's own */
  clientId?: string;
  /**
   * issue 34 §6: the browser's sign-on session the grant was made in (the ID token's `sid`); absent:
   * the new session is its own sign-on session
   */
  sid?: string;
}

/** The value both session cookies carry (behaviour.md §2.4), and how long they live. */
export interface SessionCookie {
  /** the opaque 256-bit handle, base64url; only its SHA-256 is stored */
  handle: string;
  /** seconds until the session expires: the cookies' Max-Age */
  maxAgeSeconds: number;
}

/** Tokens issued to a user, and the cookies of the session they are bound to. */
export interface Issued {
  user: UserRecord;
  tokens: IssuedTokens;
  /** the new session's cookie; null when no session was opened (a bearer refresh, behaviour.md §2.2) */
  cookie: SessionCookie | null;
  /** the session the tokens are bound to (issue 18: `sid`, code replay revocation); set by openSession */
  sessionId?: string;
  /** the user's `enrolled_mfa_methods` when the flow asked mfa (behaviour.md §5.3); absent: [] */
  enrolledMfaMethods?: string[];
}

/** How a login-type flow ends: the message of its AuthResponse (behaviour.md §9), and what was issued. */
export interface AuthOutcome {
  message: string;
  /** null when nothing was issued: a verification link was mailed, or a code was sent */
  issued: Issued | null;
  /** login step 8: a code was mailed and the email OTP screen comes next (behaviour.md §3.3) */
  emailOtpSent?: boolean;
  /**
   * signup: the account this call created, for the audit log (§5.7); absent when nothing was created,
   * and with email verification on, whose account is written (and audited) after the answer
   */
  createdUserId?: string;
  /** verify_email: the account whose address the token verified, for the audit log (§5.7) */
  verifiedUser?: { id: string; email: string | null };
  /** a code was sent by SMS and the mobile OTP screen comes next (login step 8, phone signup; behaviour.md §3.2, §3.3) */
  mobileOtpSent?: boolean;
  /** the MFA gate withheld the tokens (behaviour.md §4.1): the AuthResponse mfa built, answered as is */
  gate?: common.AuthResponse;
}

/**
 * issue 34 §6: the sign-on session a session belongs to, the `sid` of its ID tokens and logout tokens
 * (OIDC Front-Channel Logout 1.0 §3, Back-Channel Logout 1.0 §2.4): the browser session an OAuth
 * grant was made in, else the session itself.
 */
export const signOnSessionOf = (s: Pick<SessionRecord, 'id' | 'sid'>): string => s.sid ?? s.id;

/**
 * Creates a session (opaque 256-bit handle, only its SHA-256 stored; expiry `--session-expires-in`)
 * and signs tokens bound to it.
 * @returns the tokens and the session cookie (Max-Age = seconds to expiry)
 */
export async function openSession(c: AuthnContext, user: UserRecord, grant: SessionGrant, oidc: OidcRequest = {}): Promise<Issued> {
  const now = c.now();
  const handle = randomToken(32);
  const origin = currentCallOrigin();
  const draft: SessionRecord = {
    id: randomUUID(),
    userId: user.id,
    handleHash: sha256Hex(handle),
    loginMethod: grant.loginMethod,
    roles: [...grant.roles],
    scope: [...grant.scope],
    authTime: grant.authTime,
    expiresAt: now + c.options.sessionExpiresIn,
    refreshTokenId: null,
    createdAt: now,
    ...(grant.amr && grant.amr.length > 0 ? { amr: [...grant.amr] } : {}),
    ...(grant.clientId ? { clientId: grant.clientId } : {}),
    ...(grant.sid ? { sid: grant.sid } : {}),
    // issue 33: the device that opened it, for the user's session list
    ...(origin?.userAgent ? { userAgent: origin.userAgent } : {}),
    ...(origin?.ipAddress ? { ipAddress: origin.ipAddress } : {}),
  };
  const tokens = await issueTokens(c, user, draft, oidc);
  const session = { ...draft, refreshTokenId: tokens.refreshTokenId };
  await c.sessions.create(session);
  // issue 34 §6: the relying parties of a sign-on session, so its end reaches them (Back-Channel Logout 1.0 §2.7)
  if (grant.clientId && grant.clientId !== c.options.clientId) {
    await c.oauth.addSessionClient({ sessionId: session.id, sid: signOnSessionOf(session), userId: user.id, clientId: grant.clientId, expiresAt: session.expiresAt });
  }
  return { user, tokens, cookie: { handle, maxAgeSeconds: session.expiresAt - now }, sessionId: session.id };
}

