/**
 * @module @gatehouse/authn/domain/user-sessions
 * The signed-in user's own sessions (issue 33, the account console's "active sessions"; the same
 * self-service Keycloak's account API and Ory's `/sessions` offer): `sessions` lists them with the
 * device that opened each and its last use, `revoke_session` ends one, `revoke_other_sessions` ends
 * all but the caller's. An ended session is deleted as `logout` deletes it (behaviour.md §2.1: a
 * token is valid only while its session exists), so its tokens fail on their next use, and the
 * relying parties of its sign-on session are logged out (OIDC Back-Channel Logout 1.0 §2.7).
 */
import { AppError } from '@gatehouse/errors';
import type { SessionRecord, UserCaller } from '@gatehouse/auth';
import type { AuthnContext } from './deps.ts';
import { signOnSessionOf } from './issue.ts';
import { logoutRelyingParties } from './rp-logout.ts';
import type { Opt } from './validation.ts';

/** messages of `revoke_session` and `revoke_other_sessions` */
export const SESSION_REVOKED = 'Session revoked';
export const OTHER_SESSIONS_REVOKED = 'Other sessions revoked';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** One listed session: the record, its last use (Unix s; `createdAt` before the first) and whether it is the caller's. */
export interface ListedSession {
  session: SessionRecord;
  lastUsedAt: number;
  isCurrent: boolean;
}

/**
 * The caller's live sessions: the current one first, then by last use, newest first (ties: newest
 * created, then id).
 */
export async function listUserSessions(c: AuthnContext, caller: UserCaller): Promise<ListedSession[]> {
  const rows = await c.sessions.listForUser(caller.userId);
  return rows
    .map((s) => ({ session: s, lastUsedAt: Math.max(s.lastUsedAt ?? 0, s.createdAt), isCurrent: s.id === caller.sessionId }))
    .sort((a, b) => Number(b.isCurrent) - Number(a.isCurrent) || b.lastUsedAt - a.lastUsedAt
      || b.session.createdAt - a.session.createdAt || (a.session.id < b.session.id ? -1 : 1));
}

/**
 * Ends one of the caller's sessions, and the relying parties' grants made in it when it is a sign-on
 * session (as `logout` does).
 * @param id a session id from {@link listUserSessions}
 * @returns the ended session (`id === caller.sessionId` when the caller ended its own: clear its cookies)
 * @throws AppError `invalid_argument` `session id is required`; `not_found` `session not found` (also
 *   an expired session or another user's, so ids of other users' sessions cannot be probed)
 */
export async function revokeUserSession(c: AuthnContext, caller: UserCaller, id: Opt<string>): Promise<SessionRecord> {
  const wanted = (id ?? '').trim();
  if (wanted === '') throw new AppError('invalid_argument', 'session id is required');
  const session = UUID.test(wanted) ? await c.sessions.get(wanted.toLowerCase()) : null;
  if (!session || session.userId !== caller.userId) throw new AppError('not_found', 'session not found');
  await c.sessions.delete(session.id);
  await logoutRelyingParties(c, { sid: signOnSessionOf(session) });
  return session;
}

/**
 * Ends every session of the caller except the current one, and the relying parties' grants made in
 * the ended sign-on sessions.
 * @returns the ended sessions as listed before (the count may be higher by sessions opened meanwhile)
 *   and how many were deleted
 */
export async function revokeOtherUserSessions(c: AuthnContext, caller: UserCaller): Promise<{ ended: SessionRecord[]; count: number }> {
  const ended = (await c.sessions.listForUser(caller.userId)).filter((s) => s.id !== caller.sessionId);
  const count = await c.sessions.deleteAllForUser(caller.userId, caller.sessionId);
  const current = signOnSessionOf(caller.session);
  for (const sid of new Set(ended.map(signOnSessionOf))) {
    if (sid !== current) await logoutRelyingParties(c, { sid });
  }
  return { ended, count };
}
