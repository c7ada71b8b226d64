/**
 * @module @gatehouse/authn/domain/authorize
 * The authorization endpoint (RFC 6749 §4.1, §4.2; RFC 7636; OIDC Core §3.1.2, §3.2.2; OAuth 2.0
 * Multiple Response Types and Form Post Response Mode; RFC 9207 `iss`). The client and redirect URI
 * are checked first: until both are known good, an error is shown on an error page and never
 * redirected (RFC 6749 §4.1.2.1, RFC 9700 §4.1.3: exact match). A browser without a session goes to
 * the hosted login page with `return_to`, and comes back here after login (and MFA). A client that is
 * neither the server's own nor first-party then gets the user's consent (issue 34, domain/consent.ts).
 */
import type { SessionRecord } from '@gatehouse/auth';
import { randomToken, sha256Hex } from '@gatehouse/crypto';
import type { ClientRecord } from '../storage/ports.ts';
import { isDocumentClientId, resolveDocumentClient } from './client-metadata-document.ts';
import { OIDC_SCOPES, findClient } from './clients.ts';
import type { AuthnContext } from './deps.ts';
import { hasConsent, needsConsent, openConsent, type ConsentPage } from './consent.ts';
import { openSession } from './issue.ts';
import { continuePushedRequest, takePushedRequest } from './par.ts';
import { redirectUriMatches } from './registration.ts';
import { resourceProblem } from './resource.ts';
import type { CodeGrant } from './oauth-token.ts';
import { checkRedirectUri } from './redirect.ts';
import { isRevoked } from './user.ts';

/** RFC 6749 §4.1.2 / RFC 9700 §4.2.1: codes live at most this many seconds. */
export const CODE_TTL_SECONDS = 60;

/** What /authorize answers; the rpc layer writes it as a 302, an HTML page or an error page. */
export type AuthorizeResult =
  | { kind: 'redirect'; location: string }
  /** response_mode=form_post: auto-submitting form to `action` */
  | { kind: 'form_post'; action: string; fields: Record<string, string> }
  /** response_mode=web_message (authorizer-js's iframe flow): postMessage to the opener or parent at `origin` */
  | { kind: 'web_message'; origin: string; fields: Record<string, string> }
  /** no usable client or redirect URI: shown here, never redirected */
  | { kind: 'error_page'; status: number; error: string; description: string }
  /** issue 34: the user must allow or deny this client first */
  | ConsentPage;

const RESPONSE_TYPES = ['code', 'token', 'id_token', 'id_token token', 'code id_token', 'code token', 'code id_token token'];
const RESPONSE_MODES = ['query', 'fragment', 'form_post', 'web_message'];

/**
 * Does `uri` match one of the client's registered redirect URIs: exactly, or a registered loopback
 * http URI on another port (RFC 8252 §7.3; registration.ts)? The server's own: behaviour.md §3.1.
 */
export function redirectUriAllowed(c: AuthnContext, client: ClientRecord, uri: string): boolean {
  if (client.id === c.options.clientId) {
    try {
      return checkRedirectUri(c.options, uri) === uri;
    } catch {
      return false;
    }
  }
  return client.redirectUris.some((r) => redirectUriMatches(r, uri));
}

/** The `/authorize?...` path and query of `params` without `drop` (the login page's `return_to`). */
function returnTo(c: AuthnContext, params: Record<string, string>, drop: readonly string[]): string {
  const q = new URLSearchParams(Object.entries(params).filter(([k]) => !drop.includes(k)));
  return `${new URL(c.options.url).pathname.replace(/\/+$/, '')}/authorize?${q.toString()}`;
}

/**
 * The login page contract (issue 18): `/app/login?return_to=<url-encoded /authorize?...>`, plus
 * `&prompt=login` when the user must sign in again although a session exists (OIDC Core §3.1.2.1
 * `prompt=login`, or a session older than `max_age`): the page then shows the sign-in form instead
 * of "You are signed in".
 * @param reauthenticate true when a live session is not good enough
 */
export function loginRedirect(c: AuthnContext, params: Record<string, string>, reauthenticate = false): AuthorizeResult {
  // `prompt=login` and `max_age` are satisfied by the login the page performs: not sent back, or it would loop
  const back = returnTo(c, params, ['prompt', 'max_age']);
  return { kind: 'redirect', location: `${c.options.url}/app/login?return_to=${encodeURIComponent(back)}${reauthenticate ? '&prompt=login' : ''}` };
}

function deliver(mode: string, redirectUri: string, fields: Record<string, string>): AuthorizeResult {
  if (mode === 'form_post') return { kind: 'form_post', action: redirectUri, fields };
  if (mode === 'web_message') return { kind: 'web_message', origin: new URL(redirectUri).origin, fields };
  const u = new URL(redirectUri);
  if (mode === 'fragment') {
    u.hash = new URLSearchParams(fields).toString();
    return { kind: 'redirect', location: u.toString() };
  }
  for (const [k, v] of Object.entries(fields)) u.searchParams.set(k, v);
  return { kind: 'redirect', location: u.toString() };
}

/** An authorization request checked as far as it can be without the user (RFC 6749 §3.1, §4.1.1). */
export interface CheckedRequest {
  client: ClientRecord;
  redirectUri: string;
  /** the response_type in its canonical order */
  normalisedType: string;
  mode: string;
  state: string | undefined;
  /** the scopes asked for (default `openid email profile`) */
  granted: string[];
  /** the PKCE S256 challenge, or '' */
  challenge: string;
  /** RFC 8707 §2.1: the resource the access token is for (its `aud`), or null */
  resource: string | null;
  /** an error answered at the redirect URI (RFC 6749 §4.1.2.1) */
  fail(error: string, description: string): AuthorizeResult;
}

/**
 * Checks the client, redirect URI, response type and mode, scope, nonce and PKCE of an authorization
 * request (RFC 6749 §4.1.1, §3.1.2; RFC 7636 §4.3; OIDC Core §3.1.2.1), as `/authorize` and the
 * pushed authorization request endpoint (RFC 9126 §2.1) both must.
 * @returns the checked request, or the refusal: its error code and description, and how `/authorize`
 *   shows it (an error page until the client and redirect URI are known good, else at the redirect URI)
 */
export async function checkAuthorizationRequest(
  c: AuthnContext, params: Record<string, string>,
): Promise<{ ok: true; request: CheckedRequest } | { ok: false; error: string; description: string; result: AuthorizeResult }> {
  const o = c.options;
  const page = (error: string, description: string) => ({ ok: false as const, error, description, result: { kind: 'error_page' as const, status: 400, error, description } });
  const clientId = params.client_id ?? '';
  if (clientId === '') return page('invalid_request', 'client_id is required');
  const client = await findClient(c, clientId);
  if (!client || !client.isActive) {
    // issue 34 §2: why a metadata document's client is unusable (a failure stays cached briefly: no second fetch)
    const doc = isDocumentClientId(c, clientId) ? await resolveDocumentClient(c, clientId) : null;
    return page('invalid_client', doc && !doc.ok ? doc.problem : 'unknown or inactive client');
  }
  let redirectUri = params.redirect_uri ?? '';
  if (redirectUri === '') {
    // RFC 6749 §3.1.2.3: optional only when exactly one is registered
    if (client.redirectUris.length !== 1) return page('invalid_request', 'redirect_uri is required');
    redirectUri = client.redirectUris[0]!;
  }
  if (!redirectUriAllowed(c, client, redirectUri)) return page('invalid_request', 'redirect_uri is not registered for this client');

  const responseType = (params.response_type || o.defaultAuthorizeResponseType).split(' ').filter(Boolean).sort().join(' ');
  const normalisedType = RESPONSE_TYPES.find((t) => t.split(' ').sort().join(' ') === responseType) ?? responseType;
  const implicit = normalisedType !== 'code';
  const modeAsked = params.response_mode ?? '';
  let mode = modeAsked || (implicit ? 'fragment' : o.defaultAuthorizeResponseMode);
  if (implicit && mode === 'query') mode = 'fragment'; // OAuth 2.0 Multiple Response Types §5: tokens never in the query
  const state = params.state;
  const fail = (error: string, description: string): AuthorizeResult =>
    deliver(RESPONSE_MODES.includes(mode) ? mode : 'query', redirectUri, { error, error_description: description, ...(state !== undefined ? { state } : {}), iss: o.url });
  const refuse = (error: string, description: string) => ({ ok: false as const, error, description, result: fail(error, description) });

  if (modeAsked !== '' && !RESPONSE_MODES.includes(modeAsked)) return refuse('invalid_request', 'unsupported response_mode');
  if (!RESPONSE_TYPES.includes(normalisedType)) return refuse('unsupported_response_type', 'unsupported response_type');
  if (normalisedType !== 'code' && client.id !== o.clientId) return refuse('unauthorized_client', 'only the code flow is available to this client');
  if (normalisedType.includes('code') && !client.grantTypes.includes('authorization_code')) return refuse('unauthorized_client', 'the client may not use the authorization_code grant');

  const scope = (params.scope ?? '').split(' ').filter(Boolean);
  const granted = scope.length > 0 ? scope : ['openid', 'email', 'profile'];
  const allowed = client.id === o.clientId ? OIDC_SCOPES : client.allowedScopes.filter((s) => (OIDC_SCOPES as readonly string[]).includes(s));
  if (granted.some((s) => !(allowed as readonly string[]).includes(s))) return refuse('invalid_scope', 'scope is not allowed for this client');
  if (normalisedType.includes('id_token') && !granted.includes('openid')) return refuse('invalid_scope', 'id_token needs the openid scope');
  if (normalisedType.includes('id_token') && !params.nonce) return refuse('invalid_request', 'nonce is required for the id_token response type');

  const challenge = params.code_challenge ?? '';
  const method = params.code_challenge_method ?? (challenge ? 'plain' : '');
  if (challenge !== '' && method !== 'S256') return refuse('invalid_request', 'code_challenge_method must be S256');
  if (challenge !== '' && !/^[A-Za-z0-9\-_]{43}$/.test(challenge)) return refuse('invalid_request', 'invalid code_challenge');
  if (client.isPublic && normalisedType.includes('code') && challenge === '') return refuse('invalid_request', 'PKCE (code_challenge with S256) is required for public clients');
  // RFC 9449 §10: the thumbprint of the DPoP key the code will be redeemed with
  if (params.dpop_jkt !== undefined && !/^[A-Za-z0-9_-]{43}$/.test(params.dpop_jkt)) return refuse('invalid_request', 'dpop_jkt must be a base64url SHA-256 JWK thumbprint');
  // RFC 8707 §2: an absolute URI without a fragment, else `invalid_target` at the redirect URI
  const resource = params.resource || null;
  const problem = resource === null ? null : resourceProblem(resource);
  if (problem !== null) return refuse('invalid_target', problem);
  return { ok: true, request: { client, redirectUri, normalisedType, mode, state, granted, challenge, resource, fail } };
}

/**
 * Handles one authorization request. With `request_uri` (RFC 9126 §4) the pushed request is taken
 * (single use, bound to `client_id`) and only its parameters count; with
 * `--require-pushed-authorization-requests` a request that was not pushed is refused for every
 * client but the server's own, and so it is for a client whose `require_pushed_authorization_requests`
 * is set (RFC 9126 §6).
 * @param session the browser's live session (from its session cookies), or null
 * @param consent the user's answer to this request's consent page (issue 34), or null when none was given:
 *   `denied` answers `access_denied` (RFC 6749 §4.1.2.1), `allowed` skips the consent check
 * @returns where and how to answer; never throws for bad input (every refusal is a result)
 */
export async function authorize(
  c: AuthnContext, incoming: Record<string, string>, session: SessionRecord | null, consent: 'allowed' | 'denied' | null = null,
): Promise<AuthorizeResult> {
  const o = c.options;
  let params = incoming;
  const pushed = (incoming.request_uri ?? '') !== '';
  if (pushed) {
    const taken = await takePushedRequest(c, incoming.client_id ?? '', incoming.request_uri!);
    if (!taken.ok) return { kind: 'error_page', status: 400, error: 'invalid_request_uri', description: taken.description };
    params = taken.params;
  }
  const checked = await checkAuthorizationRequest(c, params);
  if (!checked.ok) return checked.result;
  const { client, redirectUri, normalisedType, mode, state, granted, challenge, resource, fail } = checked.request;
  if (!pushed && o.requirePushedAuthorizationRequests && client.id !== o.clientId) {
    return fail('invalid_request', 'this server requires the authorization request to be pushed to /oauth/par first (RFC 9126 §5)');
  }
  // RFC 9126 §6: the client's own `require_pushed_authorization_requests`; its error code is §4's generic invalid_request
  if (!pushed && client.requirePushedAuthorizationRequests) {
    return fail('invalid_request', 'this client requires the authorization request to be pushed to /oauth/par first (RFC 9126 §6)');
  }

  const prompts = (params.prompt ?? '').split(' ').filter(Boolean);
  if (prompts.includes('none') && prompts.length > 1) return fail('invalid_request', 'prompt=none cannot be combined');
  const maxAge = params.max_age !== undefined && params.max_age !== '' ? Number(params.max_age) : null;
  if (maxAge !== null && (!Number.isSafeInteger(maxAge) || maxAge < 0)) return fail('invalid_request', 'max_age must be a non-negative integer');
  const now = c.now();
  const tooOld = session !== null && maxAge !== null && now - session.authTime > maxAge;
  const user = session ? await c.users.findById(session.userId) : null;
  const live = session !== null && user !== null && !isRevoked(user) && session.loginMethod !== 'client_credentials';
  if (!live || tooOld || prompts.includes('login')) {
    if (prompts.includes('none')) return fail('login_required', 'the user is not logged in');
    // a pushed request continues under a fresh request_uri, so return_to never carries its parameters
    const back = pushed ? await continuePushedRequest(c, client, params, ['prompt', 'max_age']) : params;
    return loginRedirect(c, back, live && (tooOld || prompts.includes('login')));
  }
  if (consent === 'denied') return fail('access_denied', 'the user denied the request');
  // issue 34 §2: a metadata document's client is asked about at every request (its document may change hands)
  const askAgain = prompts.includes('consent') || isDocumentClientId(c, client.id);
  if (consent === null && needsConsent(c, client) && (askAgain || !(await hasConsent(c, user!.id, client.id, granted)))) {
    // OIDC Core §3.1.2.1: prompt=none must not show a page
    if (prompts.includes('none')) return fail('consent_required', 'the user has not allowed this client these scopes');
    return openConsent(c, session, client, pushed ? await continuePushedRequest(c, client, params) : params, redirectUri, granted);
  }

  const fields: Record<string, string> = {};
  const grant: CodeGrant = {
    loginMethod: session.loginMethod, roles: [...session.roles], scope: granted, authTime: session.authTime, nonce: params.nonce || null,
    // issue 34 §6: the grant joins the browser's sign-on session (its `sid`)
    sid: session.sid ?? session.id,
    ...(params.dpop_jkt ? { dpopJkt: params.dpop_jkt } : {}),
    ...(resource !== null ? { resource: [resource] } : {}),
    ...(session.amr && session.amr.length > 0 ? { amr: [...session.amr] } : {}),
  };
  if (normalisedType.includes('code')) {
    const code = randomToken(32);
    await c.oauth.saveCode({
      codeHash: sha256Hex(code), clientId: client.id, redirectUri, codeChallenge: challenge || null, userId: user!.id, sessionId: session.id,
      grant: JSON.stringify(grant), expiresAt: now + CODE_TTL_SECONDS, consumedAt: null, issuedSessionId: null,
    });
    fields.code = code;
  }
  if (normalisedType.includes('token') || normalisedType.includes('id_token')) {
    const issued = await openSession(c, user!, { ...grant, clientId: client.id }, { nonce: grant.nonce, jwtAccessToken: true, audience: grant.resource ?? [] });
    if (normalisedType.split(' ').includes('token')) {
      fields.access_token = issued.tokens.accessToken;
      fields.token_type = 'Bearer';
      fields.expires_in = String(issued.tokens.expiresIn);
    }
    if (normalisedType.includes('id_token')) fields.id_token = issued.tokens.idToken;
    fields.scope = granted.join(' ');
  }
  if (state !== undefined) fields.state = state;
  fields.iss = o.url;
  return deliver(mode, redirectUri, fields);
}
