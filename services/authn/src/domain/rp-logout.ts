/**
 * @module @gatehouse/authn/domain/rp-logout
 * Logout that reaches relying parties (issue 34 §6). Each OAuth grant is recorded with the browser's
 * sign-on session it was made in (`sid`, see issue.ts `signOnSessionOf`); when a sign-on session ends
 * (`/v1/logout`, RP-initiated logout at `/logout`) or every session of a user does (an admin's
 * revoke_access or session wipe, a password reset), each client that was issued tokens in it hears:
 * - OIDC Back-Channel Logout 1.0: a signed logout token (§2.4) queued through authn's outbox as an
 *   `oauth.backchannel_logout` job, which the notifications worker POSTs to the client's
 *   `backchannel_logout_uri` (§2.5) with the webhook delivery's outbound guard and retries;
 * - OIDC Front-Channel Logout 1.0: the end-session page loads its `frontchannel_logout_uri` in an
 *   iframe (§2-§4), returned here for the page.
 */
import { randomUUID } from 'node:crypto';
import type { ClientRecord, SessionClientRecord } from '../storage/ports.ts';
import { findClient } from './clients.ts';
import type { AuthnContext } from './deps.ts';

/** Back-Channel Logout 1.0 §2.4: the `events` member naming a logout token. */
export const BACKCHANNEL_LOGOUT_EVENT = 'http://schemas.openid.net/event/backchannel-logout';
/** Back-Channel Logout 1.0 §2.4 (and RFC 8725 §3.11 explicit typing): the JOSE `typ` of a logout token. */
export const LOGOUT_TOKEN_TYP = 'logout+jwt';
/** Seconds a logout token is valid (§2.4: "a short time"); the worker's retries end well within it. */
export const LOGOUT_TOKEN_TTL_SECONDS = 120;

/**
 * Signs a logout token (Back-Channel Logout 1.0 §2.4) for `client`: `iss`, `aud` (the client id),
 * `iat`, `exp` (+{@link LOGOUT_TOKEN_TTL_SECONDS}), a unique `jti`, `events` with
 * {@link BACKCHANNEL_LOGOUT_EVENT} as an empty object, `sub` and `sid` (both: §2.4 allows it, and a
 * client with `backchannel_logout_session_required` gets the `sid` it asked for); never a `nonce`
 * (§2.4, so it cannot pass for an ID token). JOSE header `typ: logout+jwt`.
 * @param sid the sign-on session that ended
 * @returns the compact JWS
 */
export async function signLogoutToken(c: AuthnContext, clientId: string, sub: string, sid: string): Promise<string> {
  return c.jwt.sign({
    iss: c.options.url, aud: clientId, jti: randomUUID(), sub, sid,
    events: { [BACKCHANNEL_LOGOUT_EVENT]: {} },
  }, { expiresInSeconds: LOGOUT_TOKEN_TTL_SECONDS, nowSeconds: c.now(), typ: LOGOUT_TOKEN_TYP });
}

/** One iframe of the end-session page (Front-Channel Logout 1.0 §2-§4). */
export interface FrontChannelLogout {
  clientId: string;
  /** the client's `frontchannel_logout_uri`, with `iss` and `sid` added when it asked for them (§2) */
  src: string;
}

/**
 * Front-Channel Logout 1.0 §2-§3: the iframe URL for `client`, or null when it registered none. With
 * `frontchannel_logout_session_required`, `iss` and `sid` are added as query parameters.
 */
export function frontChannelSrc(c: AuthnContext, client: ClientRecord, sid: string): string | null {
  if (!client.frontchannelLogoutUri) return null;
  const u = new URL(client.frontchannelLogoutUri);
  if (client.frontchannelLogoutSessionRequired) {
    u.searchParams.set('iss', c.options.url);
    u.searchParams.set('sid', sid);
  }
  return u.toString();
}

/**
 * Ends the relying-party side of sign-on sessions: takes the grants recorded for the sign-on session
 * `sid`, or for every sign-on session of `userId`, deletes their sessions (their tokens stop at once),
 * queues a logout token for each that registered a
 * `backchannel_logout_uri` (one `oauth.backchannel_logout` outbox job each, committed together), and
 * returns the front-channel iframes of those that registered a `frontchannel_logout_uri`. Each client
 * of a session is notified once (the record is taken). Never throws: a failure is logged, and logout
 * itself goes on.
 */
export async function logoutRelyingParties(c: AuthnContext, by: { sid: string } | { userId: string }): Promise<FrontChannelLogout[]> {
  try {
    const taken = await c.oauth.takeSessionClients(by, c.now());
    if (taken.length === 0) return [];
    const jobs: { record: SessionClientRecord; client: ClientRecord; token: string }[] = [];
    const frames: FrontChannelLogout[] = [];
    const seen = new Set<string>();
    for (const record of taken) {
      // the grant's tokens end with the sign-on session they were issued in
      await c.sessions.delete(record.sessionId);
      // one notice per client and sign-on session, however many grants it made there
      const key = `${record.sid}|${record.clientId}`;
      if (seen.has(key)) continue;
      seen.add(key);
      const client = await findClient(c, record.clientId);
      if (!client || !client.isActive) continue;
      if (client.backchannelLogoutUri) jobs.push({ record, client, token: await signLogoutToken(c, client.id, record.userId, record.sid) });
      const src = frontChannelSrc(c, client, record.sid);
      if (src) frames.push({ clientId: client.id, src });
    }
    if (jobs.length > 0) {
      await c.users.transaction(async (tx) => {
        for (const j of jobs) {
          tx.events.emit('oauth.backchannel_logout', {
            delivery_id: randomUUID(), client_id: j.client.id, backchannel_logout_uri: j.client.backchannelLogoutUri!, logout_token: j.token,
          });
        }
      });
    }
    return frames;
  } catch (err) {
    c.logger.error({ err }, 'relying parties not notified of a logout');
    return [];
  }
}
