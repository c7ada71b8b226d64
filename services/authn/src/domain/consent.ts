/**
 * @module @gatehouse/authn/domain/consent
 * User consent at the authorization endpoint (issue 34; RFC 6749 §4.1.1 "the authorization server
 * authenticates the resource owner and obtains an authorization decision", OIDC Core §3.1.2.4, RFC 9700
 * §4.15 "clients that are not trusted"). A client that is neither the server's own nor marked
 * first-party by an admin is shown a consent page naming it, its redirect host and the scopes in plain
 * words. A consent is remembered per user, client and scope set and covers any later request whose
 * scopes it includes; each page is single use (a random ticket, only its SHA-256 stored) and bound to
 * the browser session it was shown to, so neither a replayed nor a stolen form answers it.
 */
import type { SessionRecord } from '@gatehouse/auth';
import { randomToken, sha256Hex } from '@gatehouse/crypto';
import { AppError } from '@gatehouse/errors';
import { pageWindow, type Window } from '@gatehouse/contracts/pagination';
import type { ClientRecord, ConsentGrantRecord, Page } from '../storage/ports.ts';
import { isClientIdUrl } from './client-metadata-document.ts';
import type { AuthnContext } from './deps.ts';
import type { Opt } from './validation.ts';

/** A consent page can be answered for this many seconds after it was shown. */
export const CONSENT_TTL_SECONDS = 600;

/** Each scope /authorize grants, in the words the consent page uses (OIDC Core §5.4, §11). */
export const SCOPE_WORDS: Readonly<Record<string, string>> = Object.freeze({
  openid: 'Know who you are: sign you in with your account',
  profile: 'See your name, nickname, picture and other profile details',
  email: 'See your email address and whether it is verified',
  phone: 'See your phone number and whether it is verified',
  offline_access: 'Keep access while you are not using it (a refresh token)',
});

/** What the consent page shows (the rpc layer renders it). */
export interface ConsentPage {
  kind: 'consent';
  /** the single-use ticket the form posts back */
  ticket: string;
  clientName: string;
  /** the host of the redirect URI the answer goes to: the one fact verified for a self-registered client */
  redirectHost: string;
  /**
   * issue 34 §2: for a client named by an OAuth Client ID Metadata Document, the host of its
   * `client_id` URL (who published the name and logo the page shows); absent otherwise
   */
  clientIdHost?: string;
  scopes: { scope: string; words: string }[];
  /** the form's target: this server's `/authorize` */
  action: string;
}

/** Does `/authorize` ask this client's users for consent? Not the server's own client, not a first-party one. */
export function needsConsent(c: AuthnContext, client: ClientRecord): boolean {
  return client.id !== c.options.clientId && !client.isFirstParty;
}

const scopeKey = (scope: readonly string[]): string[] => [...new Set(scope)].sort();

/** The grant's id, derived from (user, client, scope set) so that saving the same set twice finds one row: a UUIDv8 of SHA-256. */
export function consentGrantId(userId: string, clientId: string, scope: readonly string[]): string {
  const h = sha256Hex(`${userId}\n${clientId}\n${scopeKey(scope).join(' ')}`);
  const variant = ((parseInt(h[16]!, 16) & 0x3) | 0x8).toString(16);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-8${h.slice(13, 16)}-${variant}${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

/** Has the user already allowed the client every scope of `scope` (one remembered grant that includes them all)? */
export async function hasConsent(c: AuthnContext, userId: string, clientId: string, scope: readonly string[]): Promise<boolean> {
  const { rows } = await c.oauth.listConsentGrants(userId, clientId, { offset: 0, limit: 100 });
  return rows.some((g) => scope.every((s) => g.scope.includes(s)));
}

/** Remembers that the user allowed the client `scope` (refreshes `updatedAt` when the set was allowed before). */
export async function rememberConsent(c: AuthnContext, userId: string, clientId: string, scope: readonly string[]): Promise<ConsentGrantRecord> {
  const now = c.now();
  const set = scopeKey(scope);
  return c.oauth.saveConsentGrant({ id: consentGrantId(userId, clientId, set), userId, clientId, scope: set, createdAt: now, updatedAt: now });
}

/**
 * Opens a consent page for one authorization request: stores its parameters under a new ticket bound
 * to `session`, valid {@link CONSENT_TTL_SECONDS}.
 * @param params the /authorize parameters, kept to re-run the request once the user answers
 */
export async function openConsent(
  c: AuthnContext, session: SessionRecord, client: ClientRecord, params: Record<string, string>, redirectUri: string, scope: readonly string[],
): Promise<ConsentPage> {
  const ticket = randomToken(32);
  const now = c.now();
  await c.oauth.saveConsentRequest({
    ticketHash: sha256Hex(ticket), sessionId: session.id, userId: session.userId, clientId: client.id,
    params: JSON.stringify({ ...params, redirect_uri: redirectUri, scope: scope.join(' ') }), expiresAt: now + CONSENT_TTL_SECONDS, consumedAt: null,
  });
  return {
    kind: 'consent', ticket, clientName: client.name, redirectHost: new URL(redirectUri).host,
    ...(isClientIdUrl(client.id) ? { clientIdHost: new URL(client.id).host } : {}),
    scopes: scope.map((s) => ({ scope: s, words: SCOPE_WORDS[s] ?? s })), action: `${c.options.url}/authorize`,
  };
}

/** The user's answer to a consent page, once checked: the original request and the decision. */
export type ConsentAnswer =
  | { ok: true; params: Record<string, string>; allowed: boolean }
  | { ok: false; description: string };

/**
 * Checks and spends a consent page's ticket (`consent_ticket`, `decision` = `allow` | anything else
 * denies). Refused when the ticket is unknown, expired, already answered, or was shown to another
 * browser session than `session`; an allowed answer is remembered as a grant.
 */
export async function answerConsent(c: AuthnContext, form: Record<string, string>, session: SessionRecord | null): Promise<ConsentAnswer> {
  const ticket = form.consent_ticket ?? '';
  if (ticket === '') return { ok: false, description: 'consent_ticket is required' };
  const record = await c.oauth.consumeConsentRequest(sha256Hex(ticket), c.now());
  if (!record) return { ok: false, description: 'this consent page has expired or was already answered' };
  if (!session || session.id !== record.sessionId || session.userId !== record.userId) {
    return { ok: false, description: 'this consent page was shown to another sign-in' };
  }
  const params = JSON.parse(record.params) as Record<string, string>;
  const allowed = form.decision === 'allow';
  // the stored parameters name the scopes the page showed (openConsent writes them)
  if (allowed) await rememberConsent(c, record.userId, record.clientId, (params.scope ?? '').split(' ').filter(Boolean));
  return { ok: true, params, allowed };
}

/** A grant as the RPCs list it, with the client's current name (a deleted client's grants are gone with it). */
export interface ListedGrant extends ConsentGrantRecord {
  clientName: string;
}

/**
 * A user's grants, newest first.
 * @throws AppError `invalid_argument` for a bad page or limit
 */
export async function listConsentGrants(c: AuthnContext, userId: string, pagination: Opt<{ page?: Opt<number>; limit?: Opt<number> }>): Promise<{ page: Window; result: Page<ListedGrant> }> {
  const page = pageWindow(pagination);
  const result = await c.oauth.listConsentGrants(userId, null, page);
  const names = new Map<string, string>();
  for (const g of result.rows) {
    if (!names.has(g.clientId)) names.set(g.clientId, (await c.oauth.findClient(g.clientId))?.name ?? g.clientId);
  }
  return { page, result: { rows: result.rows.map((g) => ({ ...g, clientName: names.get(g.clientId)! })), total: result.total } };
}

/**
 * Revokes one grant and ends the sessions its user holds with its client, so the tokens issued under
 * it stop validating at once; the next /authorize asks again.
 * @param userId the owner the caller must be (a user revoking their own), or null (an admin)
 * @throws AppError `invalid_argument` `id is required`; `not_found` `consent grant not found` (also another user's)
 */
export async function revokeConsentGrant(c: AuthnContext, id: Opt<string>, userId: string | null): Promise<ConsentGrantRecord> {
  const v = (id ?? '').trim();
  if (v === '') throw new AppError('invalid_argument', 'id is required');
  const grant = await c.oauth.findConsentGrant(v);
  if (!grant || (userId !== null && grant.userId !== userId)) throw new AppError('not_found', 'consent grant not found');
  await c.oauth.deleteConsentGrant(grant.id);
  await c.sessions.deleteAllForClient(grant.clientId, grant.userId);
  return grant;
}
