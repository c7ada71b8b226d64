/**
 * @module @gatehouse/authn/domain/device
 * The OAuth 2.0 Device Authorization Grant (RFC 8628; issue 34 §5). A device without a browser (a TV,
 * a CLI) posts to `/oauth/device_authorization` (§3.1, client authentication as at the token endpoint,
 * public clients by `client_id`) and gets a `device_code`, a short `user_code` and the verification URI
 * `<url>/app/device` (§3.2). The user opens it on another device, signs in, enters the code and answers
 * the consent screen; meanwhile the device polls the token endpoint with
 * `grant_type=urn:ietf:params:oauth:grant-type:device_code` (§3.4) and gets `authorization_pending`,
 * `slow_down` (polling faster than `interval`, which then grows by 5 s), `access_denied`,
 * `expired_token`, or, once, the tokens (§3.5).
 *
 * Storage: `OAuthStore` device authorizations (the `authn_device_authorizations` table), so every authn
 * replica sees the user's answer and the device's polls; only SHA-256 hashes of both codes are stored.
 * The consent screen's single-use ticket lives in the pending-request table of the `/authorize` consent
 * page (`saveConsentRequest`), keyed by the SHA-256 of `device:<ticket>` and bound to the browser session.
 *
 * Brute force (§5.1): the user code has 20^8 ≈ 2.6·10^10 values and lives 10 minutes; a signed-in user
 * gets {@link LOCKOUT_MAX_FAILURES} wrong entries per {@link LOCKOUT_WINDOW_SECONDS} (the login lockout's
 * shared attempt window), then `resource_exhausted` until the window admits another.
 */
import { randomInt } from 'node:crypto';
import { claimAttempt, type SessionRecord } from '@gatehouse/auth';
import { randomToken, sha256Hex } from '@gatehouse/crypto';
import type { ClientRecord, DeviceAuthorizationRecord } from '../storage/ports.ts';
import { OIDC_SCOPES, findClient } from './clients.ts';
import { CONSENT_TTL_SECONDS, SCOPE_WORDS, rememberConsent } from './consent.ts';
import type { AuthnContext } from './deps.ts';
import type { SessionGrant } from './issue.ts';
import { OAuthError, invalidGrant, invalidRequest, type AuthenticatedClient } from './oauth-client-auth.ts';

export { LOCKOUT_MAX_FAILURES, LOCKOUT_WINDOW_SECONDS } from '@gatehouse/auth';

/** RFC 8628 §3.4: the grant type of the token request. */
export const DEVICE_CODE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';

/** RFC 8628 §3.2 `expires_in`: seconds a device code and its user code live, unless `--device-code-expires-in` says otherwise. */
export const DEVICE_CODE_TTL_SECONDS = 600;

/** RFC 8628 §3.2 `interval`: seconds the client waits between polls (the RFC's default). */
export const DEVICE_POLL_INTERVAL_SECONDS = 5;

/** RFC 8628 §3.5: seconds added to the interval for every `slow_down`. */
export const SLOW_DOWN_SECONDS = 5;

/** RFC 8628 §6.1: consonants only (no vowels, so no words), no look-alikes (no 0/O, 1/I, U/V). */
export const USER_CODE_ALPHABET = 'BCDFGHJKLMNPQRSTVWXZ';

/** The letters of a user code; shown as two groups of four (`WDJB-MJHT`). */
export const USER_CODE_LENGTH = 8;

/** The path of the verification page in the hosted app, after `--url`. */
export const VERIFICATION_PATH = '/app/device';

/** The RFC 8628 §3.2 success body. */
export interface DeviceAuthorizationResponse {
  device_code: string;
  user_code: string;
  verification_uri: string;
  verification_uri_complete: string;
  expires_in: number;
  interval: number;
}

/** A new user code: {@link USER_CODE_LENGTH} letters of {@link USER_CODE_ALPHABET} (uniform, CSPRNG) as `XXXX-XXXX`. */
export function generateUserCode(): string {
  let s = '';
  for (let i = 0; i < USER_CODE_LENGTH; i++) s += USER_CODE_ALPHABET[randomInt(USER_CODE_ALPHABET.length)];
  return `${s.slice(0, 4)}-${s.slice(4)}`;
}

/**
 * A user code as typed, normalised (RFC 8628 §6.1: case-insensitive; dashes and spaces ignored).
 * @returns the {@link USER_CODE_LENGTH} upper-case letters, or null when the input cannot be a user code
 */
export function normaliseUserCode(input: string): string | null {
  const s = input.toUpperCase().replace(/[\s-]/g, '');
  if (s.length !== USER_CODE_LENGTH) return null;
  for (const ch of s) if (!USER_CODE_ALPHABET.includes(ch)) return null;
  return s;
}

const userCodeHash = (normalised: string): string => sha256Hex(`user_code:${normalised}`);
const ticketKey = (ticket: string): string => sha256Hex(`device:${ticket}`);
const attemptKey = (userId: string): string => sha256Hex(`device_user_code:${userId}`);

/**
 * POST /oauth/device_authorization (RFC 8628 §3.1–3.2) for an authenticated client.
 * @param p the form: `scope` (optional: `openid email profile` when absent, as at `/authorize`)
 * @returns the §3.2 body: `device_code` (256 random bits), `user_code`, `verification_uri`
 *   (`<url>/app/device`), `verification_uri_complete` (with `?user_code=`), `expires_in` (`--device-code-expires-in`,
 *   default 600), `interval` 5
 * @throws OAuthError `unauthorized_client` when the client's `grant_types` lack {@link DEVICE_CODE_GRANT};
 *   `invalid_scope` for a scope outside the client's allowed OIDC scopes; `invalid_request` for a
 *   `client_id` naming another client
 */
export async function startDeviceAuthorization(c: AuthnContext, auth: AuthenticatedClient, p: Record<string, string>): Promise<DeviceAuthorizationResponse> {
  if ((p.client_id ?? '') !== '' && p.client_id !== auth.client.id) throw invalidRequest('client_id does not name the authenticated client');
  if (!auth.client.grantTypes.includes(DEVICE_CODE_GRANT)) throw new OAuthError('unauthorized_client', `the client may not use the ${DEVICE_CODE_GRANT} grant`);
  const asked = (p.scope ?? '').split(' ').filter(Boolean);
  const scope = [...new Set(asked.length > 0 ? asked : ['openid', 'email', 'profile'])];
  const allowed = auth.client.id === c.options.clientId ? OIDC_SCOPES : auth.client.allowedScopes.filter((s) => (OIDC_SCOPES as readonly string[]).includes(s));
  if (scope.some((s) => !(allowed as readonly string[]).includes(s))) throw new OAuthError('invalid_scope', 'scope is not allowed for this client');
  const deviceCode = randomToken(32);
  const userCode = generateUserCode();
  const now = c.now();
  const ttl = c.options.deviceCodeExpiresIn ?? DEVICE_CODE_TTL_SECONDS;
  await c.oauth.saveDeviceAuthorization({
    deviceCodeHash: sha256Hex(deviceCode), userCodeHash: userCodeHash(normaliseUserCode(userCode)!), clientId: auth.client.id, scope,
    status: 'pending', userId: null, grant: null, interval: DEVICE_POLL_INTERVAL_SECONDS, lastPolledAt: null,
    expiresAt: now + ttl, consumedAt: null,
  });
  const uri = `${c.options.url}${VERIFICATION_PATH}`;
  return {
    device_code: deviceCode, user_code: userCode, verification_uri: uri,
    verification_uri_complete: `${uri}?${new URLSearchParams({ user_code: userCode }).toString()}`,
    expires_in: ttl, interval: DEVICE_POLL_INTERVAL_SECONDS,
  };
}

/** What the consent screen of `/app/device` shows, and the ticket its answer carries. */
export interface DeviceConsent {
  /** single use, bound to the browser session, valid until the device code expires (at most 10 min) */
  consent_ticket: string;
  client_id: string;
  client_name: string;
  /** the scopes in the words of the `/authorize` consent page */
  scopes: { scope: string; words: string }[];
  /** the code as entered, normalised to `XXXX-XXXX` */
  user_code: string;
}

/** A refusal of the verification page's requests (the rpc layer answers it as `{error, error_description}`). */
export class DeviceVerificationError extends Error {
  readonly error: string;
  readonly status: number;
  constructor(error: string, description: string, status = 400) {
    super(description);
    this.error = error;
    this.status = status;
  }
}

const WRONG_CODE = 'That code is not valid or has expired. Check the code shown on your device and try again.';

/**
 * The signed-in user entered `userCode` on `/app/device`: finds its pending request and opens the
 * consent screen for it. Each entry is claimed against the user's attempt window before the code is
 * looked at (RFC 8628 §5.1); a right code gives its claim back.
 * @throws DeviceVerificationError `invalid_user_code` (400) for a malformed, unknown, expired or already
 *   answered code, `invalid_client` when its client is gone or inactive
 * @throws AppError `resource_exhausted` (with `Retry-After`) after too many wrong entries
 */
export async function lookUpUserCode(c: AuthnContext, session: SessionRecord, userCode: string): Promise<DeviceConsent> {
  const now = c.now();
  const claim = await claimAttempt(c.lockout, attemptKey(session.userId), now, 'device_user_code_lockout');
  const normalised = normaliseUserCode(userCode);
  const record = normalised ? await c.oauth.findDeviceAuthorizationByUserCode(userCodeHash(normalised), now) : null;
  if (!record || record.status !== 'pending') throw new DeviceVerificationError('invalid_user_code', WRONG_CODE);
  await c.lockout.release(claim);
  const client = await findClient(c, record.clientId);
  if (!client || !client.isActive) throw new DeviceVerificationError('invalid_client', 'the application that asked for this code is no longer registered');
  const ticket = randomToken(32);
  await c.oauth.saveConsentRequest({
    ticketHash: ticketKey(ticket), sessionId: session.id, userId: session.userId, clientId: client.id,
    params: JSON.stringify({ device_code_hash: record.deviceCodeHash }), expiresAt: Math.min(record.expiresAt, now + CONSENT_TTL_SECONDS), consumedAt: null,
  });
  return {
    consent_ticket: ticket, client_id: client.id, client_name: client.name, user_code: `${normalised!.slice(0, 4)}-${normalised!.slice(4)}`,
    scopes: record.scope.map((s) => ({ scope: s, words: SCOPE_WORDS[s] ?? s })),
  };
}

/**
 * The user's answer on the consent screen: spends the ticket (single use, same browser session) and
 * records `approved` (with the session's grant: login method, roles, auth time, `amr`) or `denied`.
 * An approval is remembered as a consent grant, listed and revocable like those of `/authorize`.
 * @param decision `allow`; anything else denies
 * @returns the recorded status and the client
 * @throws DeviceVerificationError `invalid_request` for a missing, unknown, expired, answered or
 *   another session's ticket, or a device code that expired or was answered meanwhile
 */
export async function answerDeviceConsent(
  c: AuthnContext, session: SessionRecord, ticket: string, decision: string,
): Promise<{ status: 'approved' | 'denied'; client: ClientRecord | null; scope: string[] }> {
  if (ticket === '') throw new DeviceVerificationError('invalid_request', 'consent_ticket is required');
  const now = c.now();
  const request = await c.oauth.consumeConsentRequest(ticketKey(ticket), now);
  if (!request) throw new DeviceVerificationError('invalid_request', 'this consent screen has expired or was already answered');
  if (request.sessionId !== session.id || request.userId !== session.userId) throw new DeviceVerificationError('invalid_request', 'this consent screen was shown to another sign-in');
  const { device_code_hash: hash } = JSON.parse(request.params) as { device_code_hash: string };
  const record = await c.oauth.findDeviceAuthorization(hash);
  if (!record) throw new DeviceVerificationError('invalid_request', 'this code has expired');
  const allowed = decision === 'allow';
  const grant: SessionGrant = {
    loginMethod: session.loginMethod, roles: [...session.roles], scope: record.scope, authTime: session.authTime,
    ...(session.amr && session.amr.length > 0 ? { amr: [...session.amr] } : {}),
  };
  const status = allowed ? 'approved' as const : 'denied' as const;
  if (!(await c.oauth.answerDeviceAuthorization(hash, { status, userId: session.userId, grant: allowed ? JSON.stringify(grant) : null }, now))) {
    throw new DeviceVerificationError('invalid_request', 'this code has expired or was already answered');
  }
  if (allowed) await rememberConsent(c, session.userId, record.clientId, record.scope);
  return { status, client: await findClient(c, record.clientId), scope: record.scope };
}

/** What a successful device_code redemption gives the token endpoint to issue. */
export interface DeviceGrantApproval {
  record: DeviceAuthorizationRecord;
  grant: SessionGrant;
}

/**
 * `grant_type=urn:ietf:params:oauth:grant-type:device_code` (RFC 8628 §3.4–3.5): one poll.
 * While pending, a poll sooner than `interval` seconds after the previous one is `slow_down` and the
 * interval grows by {@link SLOW_DOWN_SECONDS} for every later poll; an approved code is redeemed once.
 * @returns the approved request and the grant to open a session with (the caller checks the user and issues the tokens)
 * @throws OAuthError `unauthorized_client` (grant type not enabled for the client), `invalid_request`
 *   (no device_code), `invalid_grant` (unknown, another client's, already redeemed),
 *   `expired_token`, `authorization_pending`, `slow_down`, `access_denied` (all 400, §3.5)
 */
export async function pollDeviceCode(c: AuthnContext, auth: AuthenticatedClient, p: Record<string, string>): Promise<DeviceGrantApproval> {
  if (!auth.client.grantTypes.includes(DEVICE_CODE_GRANT)) throw new OAuthError('unauthorized_client', `the client may not use the ${DEVICE_CODE_GRANT} grant`);
  const deviceCode = p.device_code ?? '';
  if (deviceCode === '') throw invalidRequest('device_code is required');
  const hash = sha256Hex(deviceCode);
  const record = await c.oauth.findDeviceAuthorization(hash);
  if (!record || record.clientId !== auth.client.id) throw invalidGrant('invalid device_code');
  if (record.consumedAt !== null) throw invalidGrant('device_code already used');
  const now = c.now();
  if (now >= record.expiresAt) throw new OAuthError('expired_token', 'the device_code has expired; start a new device authorization');
  if (record.status === 'denied') throw new OAuthError('access_denied', 'the user denied the request');
  if (record.status === 'pending') {
    const tooSoon = record.lastPolledAt !== null && now - record.lastPolledAt < record.interval;
    const interval = tooSoon ? record.interval + SLOW_DOWN_SECONDS : record.interval;
    const recorded = await c.oauth.recordDevicePoll(hash, record.lastPolledAt, now, interval);
    // a poll that lost the compare-and-set raced another poll of the same code: too fast as well
    if (tooSoon || !recorded) throw new OAuthError('slow_down', `polling too fast: wait at least ${interval} seconds between requests`);
    throw new OAuthError('authorization_pending', 'the user has not answered yet');
  }
  if (!(await c.oauth.consumeDeviceAuthorization(hash, now))) throw invalidGrant('device_code already used');
  return { record, grant: JSON.parse(record.grant ?? '{}') as SessionGrant };
}
