/**
 * @module @gatehouse/authn/domain/par
 * Pushed authorization requests (RFC 9126; issue 34 §4). A client posts its authorization request to
 * `/oauth/par`, authenticated as at the token endpoint; the request is checked as `/authorize` would
 * check it and kept server-side for {@link PAR_TTL_SECONDS}, and the client sends the browser to
 * `/authorize?client_id=…&request_uri=urn:ietf:params:oauth:request_uri:<random>`.
 *
 * Storage: the pushed request lives in the pending-request table that also holds consent pages
 * (`OAuthStore.saveConsentRequest` / `consumeConsentRequest`), so every authn replica sees it and a
 * use is atomic. It is keyed by the SHA-256 of `par:<random>` (a namespace of its own: a consent
 * ticket can never name it) and carries no session or user (the nil UUID) until it is used.
 *
 * Single use (RFC 9126 §4): `/authorize` consumes the request_uri. When that request cannot finish at
 * once (the browser must sign in first, or the user must answer the consent page), the same request
 * is pushed again under a fresh, internal request_uri that lives {@link CONSENT_TTL_SECONDS}: the
 * login page's `return_to` and the consent ticket carry that one, never the parameters themselves.
 */
import { randomToken, sha256Hex } from '@gatehouse/crypto';
import type { ClientRecord } from '../storage/ports.ts';
import { CONSENT_TTL_SECONDS } from './consent.ts';
import type { AuthnContext } from './deps.ts';
import { OAuthError, invalidRequest, type AuthenticatedClient } from './oauth-client-auth.ts';

/** RFC 9126 §2.2: `expires_in` of a pushed request, in seconds. */
export const PAR_TTL_SECONDS = 60;

/** RFC 9126 §2.2: the form of the `request_uri` the endpoint returns. */
export const REQUEST_URI_PREFIX = 'urn:ietf:params:oauth:request_uri:';

/** The session and user of a pushed request that no browser has used yet. */
const NOBODY = '00000000-0000-0000-0000-000000000000';

/** Parameters of client authentication (RFC 6749 §2.3.1, RFC 7523 §2.2): never part of the stored request. */
const CLIENT_AUTH_PARAMS = ['client_secret', 'client_assertion', 'client_assertion_type'];

const keyOf = (reference: string): string => sha256Hex(`par:${reference}`);

/** The RFC 9126 §2.2 success body. */
export interface PushedRequest {
  request_uri: string;
  expires_in: number;
}

/** Stores `params` (already checked) for `clientId`; @returns its new request_uri */
async function store(c: AuthnContext, clientId: string, params: Record<string, string>, ttlSeconds: number): Promise<string> {
  const reference = randomToken(32);
  await c.oauth.saveConsentRequest({
    ticketHash: keyOf(reference), sessionId: NOBODY, userId: NOBODY, clientId,
    params: JSON.stringify(params), expiresAt: c.now() + ttlSeconds, consumedAt: null,
  });
  return `${REQUEST_URI_PREFIX}${reference}`;
}

/**
 * POST /oauth/par (RFC 9126 §2.1): stores the authenticated client's authorization request.
 * @param check the `/authorize` request check (domain/authorize.ts), run on the parameters as pushed;
 *   null when they are acceptable, else the RFC 6749 §4.1.2.1 error and description
 * @returns 201 body `{request_uri, expires_in: 60}`
 * @throws OAuthError `invalid_request` (a `request_uri` in the push, §2.1; a `client_id` naming another
 *   client), or the check's error (`invalid_scope`, `unsupported_response_type`, …), all 400
 */
export async function pushAuthorizationRequest(
  c: AuthnContext, auth: AuthenticatedClient, form: Record<string, string>,
  check: (params: Record<string, string>) => Promise<{ error: string; description: string } | null>,
): Promise<PushedRequest> {
  if ((form.request_uri ?? '') !== '') throw invalidRequest('request_uri must not be pushed (RFC 9126 §2.1)');
  if ((form.client_id ?? '') !== '' && form.client_id !== auth.client.id) throw invalidRequest('client_id does not name the authenticated client');
  const params = Object.fromEntries(Object.entries(form).filter(([k]) => !CLIENT_AUTH_PARAMS.includes(k)));
  params.client_id = auth.client.id;
  const refused = await check(params);
  if (refused) throw new OAuthError(refused.error, refused.description);
  return { request_uri: await store(c, auth.client.id, params, PAR_TTL_SECONDS), expires_in: PAR_TTL_SECONDS };
}

/**
 * Takes (consumes) the pushed request `requestUri` for `clientId` at `/authorize` (RFC 9126 §4).
 * @returns the pushed parameters, or why the request_uri is refused: unknown, expired, already used,
 *   or pushed by another client
 */
export async function takePushedRequest(
  c: AuthnContext, clientId: string, requestUri: string,
): Promise<{ ok: true; params: Record<string, string> } | { ok: false; description: string }> {
  if (!requestUri.startsWith(REQUEST_URI_PREFIX)) return { ok: false, description: 'request_uri was not issued by this server\'s /oauth/par' };
  const record = await c.oauth.consumeConsentRequest(keyOf(requestUri.slice(REQUEST_URI_PREFIX.length)), c.now());
  if (!record || record.sessionId !== NOBODY) return { ok: false, description: 'request_uri is unknown, expired or already used' };
  if (record.clientId !== clientId) return { ok: false, description: 'request_uri was pushed by another client' };
  return { ok: true, params: JSON.parse(record.params) as Record<string, string> };
}

/**
 * Pushes a taken request again under a fresh internal request_uri, for a request that continues after
 * the login page or the consent page; `drop` names parameters the continuation must not repeat
 * (`prompt=login` and `max_age`, which the login just satisfied).
 * @returns the `/authorize` parameters that name it: `{client_id, request_uri}`
 */
export async function continuePushedRequest(
  c: AuthnContext, client: ClientRecord, params: Record<string, string>, drop: readonly string[] = [],
): Promise<Record<string, string>> {
  const kept = Object.fromEntries(Object.entries(params).filter(([k]) => !drop.includes(k)));
  return { client_id: client.id, request_uri: await store(c, client.id, kept, CONSENT_TTL_SECONDS) };
}
