/**
 * @module @gatehouse/authn/domain/issue
 * Opening a session and answering with tokens and cookies (behaviour.md §2.2 "any response that
 * issues tokens": a new session, tokens bound to it, both session cookies set).
 */
import { randomUUID } from 'node:crypto';
import { sessionCookies, type SessionRecord } from '@gatehouse/auth';
import { randomToken, sha256Hex } from '@gatehouse/crypto';
import type { CallContext } from '@gatehouse/rpc';
import type { UserRecord } from '../storage/ports.ts';
import { tokenAuthResponse, type AuthResponse } from './auth-response.ts';
import type { AuthnContext } from './deps.ts';
import { cookieOptions } from './options.ts';
import { issueTokens } from './tokens.ts';

export interface SessionGrant {
  loginMethod: string;
  roles: string[];
  scope: string[];
  /** Unix s of the original authentication (kept across rotation) */
  authTime: number;
}

/**
 * Creates a session (opaque 256-bit handle in the cookie, only its SHA-256 stored; expiry
 * `--session-expires-in`), signs tokens bound to it, pushes both session cookies
 * (Max-Age = seconds to expiry) and returns the AuthResponse.
 */
export async function openSessionAndRespond(c: AuthnContext, ctx: CallContext, user: UserRecord, grant: SessionGrant, message: string): Promise<{ response: AuthResponse; session: SessionRecord }> {
  const now = c.now();
  const handle = randomToken(32);
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
  };
  const tokens = await issueTokens(c, user, draft);
  const session = { ...draft, refreshTokenId: tokens.refreshTokenId };
  await c.sessions.create(session);
  ctx.setCookies.push(...sessionCookies(handle, session.expiresAt - now, cookieOptions(c.options)));
  return {
    session,
    response: tokenAuthResponse(message, tokens, user),
  };
}
