/**
 * @module @gatehouse/authn/rpc/oauth
 * The OAuth 2.0 / OpenID Provider endpoints as AuthnService RPCs (issue 18): `/oauth/token`,
 * `/authorize`, `/oauth/revoke`, `/oauth/introspect`, `/userinfo`, the end-session endpoint and (issue 34)
 * RFC 9126 `/oauth/par`, RFC 8628 `/oauth/device_authorization` and the hosted page's
 * `/oauth/device_verification`. Each
 * takes the HTTP request's parameters and answers an OauthHttpResponse (status with a JSON body, a
 * redirect, or an HTML page) that the gateway writes as is: these protocols fix their own wire
 * (RFC 6749 §5.2 `{error, error_description}`, redirects), not the /v1 `{code, message}` shape.
 */
import { auditRecord, scopeClaim, type AuditActor } from '@gatehouse/auth';
import type { authn } from '@gatehouse/contracts';
import { toAppError } from '@gatehouse/errors';
import type { CallContext } from '@gatehouse/rpc';
import { authorize, checkAuthorizationRequest, type AuthorizeResult } from '../domain/authorize.ts';
import { answerConsent, type ConsentPage } from '../domain/consent.ts';
import { DEVICE_CODE_GRANT, DeviceVerificationError, answerDeviceConsent, lookUpUserCode, startDeviceAuthorization } from '../domain/device.ts';
import { DPOP_SIGNING_ALGS, DPoPProofError, boundJkt, checkDPoPProof, dpopNonceKey, issueDPoPNonce, type CheckedProof } from '../domain/dpop.ts';
import { OAuthError, authenticateClient, invalidRequest, parseBasic, type AuthenticatedClient } from '../domain/oauth-client-auth.ts';
import { endSession, introspect, liveToken, revokeToken, userinfoClaims } from '../domain/oauth-endpoints.ts';
import { tokenGrant } from '../domain/oauth-token.ts';
import { pushAuthorizationRequest } from '../domain/par.ts';
import { TOKEN_EXCHANGE_GRANT } from '../domain/token-exchange.ts';
import { isRevoked } from '../domain/user.ts';
import { clearCookies } from './cookies.ts';
import type { AuthnHandler, RpcContext } from './deps.ts';

type HttpResponse = authn.OauthHttpResponse;

/** The request's parameters as strings (the gateway sends strings; anything else is dropped). */
function paramsOf(req: { params?: Record<string, unknown> | null }): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(req.params ?? {})) if (typeof v === 'string') out[k] = v;
  return out;
}

const json = (status: number, body: Record<string, unknown>, extra: Partial<HttpResponse> = {}): HttpResponse => ({ status, body, frameable: false, ...extra });

/** RFC 6749 §5.2 error body; a 401 `invalid_client` after Basic authentication names the scheme in `WWW-Authenticate` (§5.2). */
function oauthError(e: OAuthError, basic: boolean): HttpResponse {
  // only a client that used an HTTP authentication scheme gets a challenge for it
  return json(e.status, { error: e.error, error_description: e.description }, e.status === 401 && basic ? { www_authenticate: 'Basic realm="gatehouse"' } : {});
}

/** Runs an endpoint, turning OAuthError into its RFC 6749 §5.2 answer and anything else into `server_error` (logged). */
async function guarded(c: RpcContext, ctx: CallContext, fn: () => Promise<HttpResponse>): Promise<HttpResponse> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof OAuthError) return oauthError(err, Boolean(ctx.headers.authorization?.toLowerCase().startsWith('basic')));
    const e = toAppError(err);
    if (e.code === 'unavailable') return json(503, { error: 'temporarily_unavailable', error_description: e.message });
    c.logger.error({ err }, 'oauth endpoint failed');
    return json(500, { error: 'server_error', error_description: 'internal error' });
  }
}

function authOf(c: RpcContext, ctx: CallContext, params: Record<string, string>, allowPublic: boolean): Promise<AuthenticatedClient> {
  return authenticateClient(c, { basic: parseBasic(ctx.headers.authorization), params }, allowPublic);
}

/** Records a §5.7 token action. Best effort: never throws. */
async function recordToken(c: RpcContext, ctx: CallContext, action: string, actor: AuditActor, details: Record<string, unknown>, resourceId?: string): Promise<void> {
  try {
    const record = auditRecord(ctx, action, { actor, resourceType: 'token', ...(resourceId ? { resourceId } : {}), details, at: c.now() });
    await c.users.transaction(async (tx) => { tx.events.emit('audit.recorded', record); });
  } catch (err) {
    c.logger.warn({ err, action }, 'audit event not recorded');
  }
}

// ---- DPoP (RFC 9449; issue 34 §4) ----

/** The server-nonce key of every replica: from `--encryption-key`, else `--client-secret` (domain/dpop.ts). */
const nonceKeyOf = (c: RpcContext): Buffer => dpopNonceKey(c.options.encryptionKey || c.options.clientSecret);

/**
 * The request's `DPoP` proof checked for `htm` and the endpoint `path` (RFC 9449 §4.3), `ath` against
 * `accessToken` when given; null when the request has no `DPoP` header.
 * @throws DPoPProofError
 */
async function requestProof(c: RpcContext, ctx: CallContext, htm: string, path: string, accessToken?: string): Promise<CheckedProof | null> {
  const proof = ctx.headers.dpop;
  if (proof === undefined) return null;
  return checkDPoPProof(proof, {
    htm, htu: `${c.options.url}${path}`, now: c.now(), nonceKey: nonceKeyOf(c), useJti: (key, until, now) => c.oauth.useJti(key, until, now),
    ...(accessToken !== undefined ? { accessToken } : {}),
  });
}

/** RFC 9449 §7.1: the `WWW-Authenticate` challenge of the DPoP scheme, with the algorithms a proof may use. */
function dpopChallenge(error: string, description: string): string {
  return `DPoP error="${error}", error_description="${description.replace(/["\\]/g, '')}", algs="${DPOP_SIGNING_ALGS.join(' ')}"`;
}

/** POST /oauth/token (RFC 6749 §3.2): every grant; client authentication per RFC 6749 §2.3 / RFC 7523; a DPoP proof binds the tokens (RFC 9449 §5). */
export const oauthTokenRpc = (c: RpcContext): AuthnHandler<'OauthToken'> => async (req, ctx) => guarded(c, ctx, async () => {
  const p = paramsOf(req);
  if (req.method !== '' && req.method !== 'POST') throw new OAuthError('invalid_request', 'the token endpoint takes POST', 405);
  let dpop: CheckedProof | null;
  try {
    dpop = await requestProof(c, ctx, 'POST', '/oauth/token');
  } catch (err) {
    if (!(err instanceof DPoPProofError)) throw err;
    // RFC 9449 §5 / §8: 400 with the error; `use_dpop_nonce` names the nonce in `DPoP-Nonce`
    return json(400, { error: err.error, error_description: err.message }, err.nonce ? { dpop_nonce: err.nonce } : {});
  }
  let auth: AuthenticatedClient;
  try {
    auth = await authOf(c, ctx, p, p.grant_type !== 'client_credentials' && p.grant_type !== TOKEN_EXCHANGE_GRANT);
  } catch (err) {
    if (p.grant_type === 'client_credentials' && err instanceof OAuthError) {
      await recordToken(c, ctx, 'token.client_credentials_failed', { type: 'service_account', id: p.client_id || null }, { reason: err.description });
    }
    throw err;
  }
  const out = await tokenGrant(c, auth, p, dpop);
  // a token exchange names the agent as actor and the user it acts for in the details (issue 34)
  const actor: AuditActor = out.userId && !out.actors ? { type: 'user', id: out.userId } : { type: 'service_account', id: auth.client.id };
  const delegation = out.actors ? { user_id: out.userId, act: out.actors } : {};
  const bound = dpop && out.response.token_type === 'DPoP' ? { dpop_jkt: dpop.jkt } : {};
  await recordToken(c, ctx, out.action, actor, { client_id: auth.client.id, grant_type: p.grant_type, auth_method: auth.method, ...delegation, ...bound }, out.sessionId);
  // RFC 9449 §8.2: a fresh nonce with the answer, so the client's next proof carries a current one
  return json(200, { ...out.response }, dpop ? { dpop_nonce: issueDPoPNonce(nonceKeyOf(c), c.now()) } : {});
});

/**
 * POST /oauth/par (RFC 9126 §2): the client authenticates as at the token endpoint (public clients
 * with their `client_id`), the request is checked as `/authorize` checks it, and the answer is 201
 * `{request_uri, expires_in}`; a refusal is a 400 (401 for client authentication) RFC 6749 §5.2 body.
 * A DPoP proof (RFC 9449 §10.1) binds the code to its key as `dpop_jkt` (which, when also sent, must match).
 */
export const pushedAuthorizationRequestRpc = (c: RpcContext): AuthnHandler<'PushedAuthorizationRequest'> => async (req, ctx) => guarded(c, ctx, async () => {
  const p = paramsOf(req);
  if (req.method !== '' && req.method !== 'POST') throw new OAuthError('invalid_request', 'the pushed authorization request endpoint takes POST', 405);
  let dpop: CheckedProof | null;
  try {
    dpop = await requestProof(c, ctx, 'POST', '/oauth/par');
  } catch (err) {
    if (!(err instanceof DPoPProofError)) throw err;
    return json(400, { error: err.error, error_description: err.message }, err.nonce ? { dpop_nonce: err.nonce } : {});
  }
  if (dpop) {
    if ((p.dpop_jkt ?? '') !== '' && p.dpop_jkt !== dpop.jkt) return json(400, { error: 'invalid_dpop_proof', error_description: 'dpop_jkt does not name the DPoP proof\'s key' });
    p.dpop_jkt = dpop.jkt;
  }
  const auth = await authOf(c, ctx, p, true);
  const pushed = await pushAuthorizationRequest(c, auth, p, async (params) => {
    const checked = await checkAuthorizationRequest(c, params);
    return checked.ok ? null : { error: checked.error, description: checked.description };
  });
  return json(201, { ...pushed }, dpop ? { dpop_nonce: issueDPoPNonce(nonceKeyOf(c), c.now()) } : {});
});

/**
 * POST /oauth/device_authorization (RFC 8628 §3.1–3.2): the client authenticates as at the token
 * endpoint (public clients with their `client_id`); 200 with the device and user codes, or an RFC 6749
 * §5.2 error (`unauthorized_client` without the device_code grant type, `invalid_scope`, 401 `invalid_client`).
 */
export const deviceAuthorizationRpc = (c: RpcContext): AuthnHandler<'DeviceAuthorization'> => async (req, ctx) => guarded(c, ctx, async () => {
  const p = paramsOf(req);
  if (req.method !== '' && req.method !== 'POST') throw new OAuthError('invalid_request', 'the device authorization endpoint takes POST', 405);
  const auth = await authOf(c, ctx, p, true);
  return json(200, { ...(await startDeviceAuthorization(c, auth, p)) });
});

/**
 * POST /oauth/device_verification: the `/app/device` page's two calls, with the browser's session
 * cookies (401 `login_required` without a live sign-in). `{user_code}` → 200 the consent screen
 * (`consent_ticket`, `client_name`, `scopes` in words, `user_code`), 400 `invalid_user_code`, 429
 * `too_many_attempts` after 5 wrong codes in 15 minutes (RFC 8628 §5.1);
 * `{consent_ticket, decision: allow|deny}` → 200 `{status: approved|denied, client_name}`.
 */
export const deviceVerificationRpc = (c: RpcContext): AuthnHandler<'DeviceVerification'> => async (req, ctx) => guarded(c, ctx, async () => {
  const p = paramsOf(req);
  if (req.method !== '' && req.method !== 'POST') throw new OAuthError('invalid_request', 'the device verification endpoint takes POST', 405);
  const session = await c.authenticator.sessionFromCookies(ctx);
  const user = session && session.loginMethod !== 'client_credentials' ? await c.users.findById(session.userId) : null;
  if (!session || !user || isRevoked(user)) return json(401, { error: 'login_required', error_description: 'sign in to connect a device' });
  try {
    if ((p.consent_ticket ?? '') === '') return json(200, { ...(await lookUpUserCode(c, session, p.user_code ?? '')) });
    const answer = await answerDeviceConsent(c, session, p.consent_ticket!, p.decision ?? '');
    await recordToken(c, ctx, answer.status === 'approved' ? 'token.consent_granted' : 'token.consent_denied', { type: 'user', id: session.userId },
      { client_id: answer.client?.id ?? '', scope: answer.scope.join(' '), grant_type: DEVICE_CODE_GRANT });
    return json(200, { status: answer.status, client_name: answer.client?.name ?? '' });
  } catch (err) {
    if (err instanceof DeviceVerificationError) return json(err.status, { error: err.error, error_description: err.message });
    const e = toAppError(err);
    if (e.code === 'resource_exhausted') return json(429, { error: 'too_many_attempts', error_description: 'too many wrong codes, please try again later' });
    throw err;
  }
});

/**
 * /authorize (GET or POST, RFC 6749 §3.1): the browser's session from its cookies, never a bearer token.
 * A POST with `consent_ticket` is the consent page's answer (issue 34): the request it was shown for
 * runs again with the user's decision.
 */
export const authorizeRpc = (c: RpcContext): AuthnHandler<'Authorize'> => async (req, ctx) => guarded(c, ctx, async () => {
  const session = await c.authenticator.sessionFromCookies(ctx);
  const params = paramsOf(req);
  if (params.consent_ticket === undefined) return renderAuthorize(await authorize(c, params, session));
  if (req.method !== 'POST') return renderAuthorize({ kind: 'error_page', status: 405, error: 'invalid_request', description: 'a consent answer is a POST' });
  const answer = await answerConsent(c, params, session);
  if (!answer.ok) return renderAuthorize({ kind: 'error_page', status: 400, error: 'invalid_request', description: answer.description });
  const client = answer.params.client_id ?? '';
  await recordToken(c, ctx, answer.allowed ? 'token.consent_granted' : 'token.consent_denied', { type: 'user', id: session!.userId },
    { client_id: client, scope: answer.params.scope ?? '' });
  return renderAuthorize(await authorize(c, answer.params, session, answer.allowed ? 'allowed' : 'denied'));
});

/** POST /oauth/revoke (RFC 7009; also authorizer-js's JSON `{refresh_token, client_id}`): 200 whatever the token. */
export const oauthRevokeRpc = (c: RpcContext): AuthnHandler<'OauthRevoke'> => async (req, ctx) => guarded(c, ctx, async () => {
  const p = paramsOf(req);
  const token = p.token || p.refresh_token || '';
  if (token === '') throw invalidRequest('token is required');
  const auth = await authOf(c, ctx, p, true);
  const revoked = await revokeToken(c, auth, token);
  if (revoked) {
    const actor: AuditActor = revoked.loginMethod === 'client_credentials' ? { type: 'service_account', id: auth.client.id } : { type: 'user', id: revoked.userId };
    await recordToken(c, ctx, 'token.revoked', actor, { client_id: auth.client.id }, revoked.id);
  }
  return json(200, {});
});

/** POST /oauth/introspect (RFC 7662): confidential clients only. */
export const oauthIntrospectRpc = (c: RpcContext): AuthnHandler<'OauthIntrospect'> => async (req, ctx) => guarded(c, ctx, async () => {
  const p = paramsOf(req);
  const auth = await authOf(c, ctx, p, false);
  if ((p.token ?? '') === '') throw invalidRequest('token is required');
  return json(200, await introspect(c, auth, p.token!));
});

/**
 * GET or POST /userinfo (OIDC Core §5.3): a user's bearer access token (RFC 6750 §2.1), or a DPoP-bound
 * one as `Authorization: DPoP <token>` with a proof by its key (RFC 9449 §7.1). A DPoP-bound token sent
 * as a bearer token is refused (`invalid_token`).
 */
export const userinfoRpc = (c: RpcContext): AuthnHandler<'Userinfo'> => async (req, ctx) => guarded(c, ctx, async () => {
  if (ctx.headers.authorization?.toLowerCase().startsWith('dpop ')) return dpopUserinfo(c, ctx, req.method || 'GET');
  const invalidToken = json(401, { error: 'invalid_token', error_description: 'the access token is invalid or expired' }, { www_authenticate: 'Bearer error="invalid_token"' });
  if (!ctx.headers.authorization?.toLowerCase().startsWith('bearer ')) return json(401, { error: 'invalid_token', error_description: 'a bearer access token is required' }, { www_authenticate: 'Bearer' });
  let caller;
  try {
    caller = await c.authenticator.requireUser(ctx);
  } catch {
    return invalidToken;
  }
  if (caller.via !== 'bearer') return invalidToken;
  const user = await c.users.findById(caller.userId);
  if (!user) return invalidToken;
  if (!caller.scope.includes('openid')) return json(403, { error: 'insufficient_scope', error_description: 'the openid scope is required' }, { www_authenticate: 'Bearer error="insufficient_scope"' });
  return json(200, userinfoClaims(user, caller.scope));
});

/**
 * /userinfo with `Authorization: DPoP <token>` (RFC 9449 §7.1): the proof (`htm`, `htu`, `ath`, nonce,
 * single use), then the token: live, a user's access token, and bound to the proof's key.
 * Refusals are 401 with a `DPoP` challenge; `use_dpop_nonce` names a fresh nonce in `DPoP-Nonce` (§9).
 */
async function dpopUserinfo(c: RpcContext, ctx: CallContext, method: string): Promise<HttpResponse> {
  const parts = (ctx.headers.authorization ?? '').trim().split(/\s+/);
  const token = parts.length === 2 ? parts[1]! : '';
  const refuse = (error: string, description: string, extra: Partial<HttpResponse> = {}): HttpResponse =>
    json(401, { error, error_description: description }, { www_authenticate: dpopChallenge(error, description), ...extra });
  if (token === '') return refuse('invalid_token', 'a DPoP-bound access token is required');
  let proof: CheckedProof | null;
  try {
    proof = await requestProof(c, ctx, method === 'HEAD' ? 'GET' : method, '/userinfo', token);
  } catch (err) {
    if (!(err instanceof DPoPProofError)) throw err;
    return refuse(err.error, err.message, err.nonce ? { dpop_nonce: err.nonce } : {});
  }
  if (!proof) return refuse('invalid_dpop_proof', 'a DPoP proof is required');
  const live = await liveToken(c, token);
  if (!live || !live.user || live.claims.token_type !== 'access_token' || live.session.expiresAt <= c.now()) return refuse('invalid_token', 'the access token is invalid or expired');
  if (boundJkt(live.claims) !== proof.jkt) return refuse('invalid_token', 'the access token is not bound to the DPoP proof\'s key');
  const scope = scopeClaim(live.claims.scope);
  if (!scope.includes('openid')) return json(403, { error: 'insufficient_scope', error_description: 'the openid scope is required' }, { www_authenticate: dpopChallenge('insufficient_scope', 'the openid scope is required') });
  return json(200, userinfoClaims(live.user, scope));
}

/** GET or POST the end-session endpoint (OpenID Connect RP-Initiated Logout 1.0). */
export const endSessionRpc = (c: RpcContext): AuthnHandler<'EndSession'> => async (req, ctx) => guarded(c, ctx, async () => {
  const browser = await c.authenticator.sessionFromCookies(ctx);
  const out = await endSession(c, paramsOf(req), browser);
  clearCookies(ctx, c.options);
  for (const id of out.ended) await recordToken(c, ctx, 'session.terminated', { type: 'user', id: browser?.userId ?? null }, { reason: 'rp_initiated_logout' }, id);
  // issue 34 §6: OIDC Front-Channel Logout 1.0 §4: the relying parties' logout pages load in iframes first
  if (out.frontChannel.length > 0) {
    const origins = [...new Set(out.frontChannel.map((f) => new URL(f.src).origin))];
    return { status: 200, body: null, frameable: false, html: frontChannelPage(out.frontChannel.map((f) => f.src), out.location), frame_src: origins.join(' ') };
  }
  if (out.location) return { status: 302, body: null, frameable: false, location: out.location };
  return { status: 200, body: null, frameable: false, html: page('Signed out', '<h1>You are signed out</h1><p>You can close this window.</p>') };
});

/** How long the end-session page waits for the logout iframes before it moves on (ms). */
export const FRONT_CHANNEL_WAIT_MS = 3000;

/**
 * The end-session page with one hidden iframe per relying party's `frontchannel_logout_uri` (OIDC
 * Front-Channel Logout 1.0 §4); once they have loaded (or after {@link FRONT_CHANNEL_WAIT_MS}) it goes
 * on to `next` (the post_logout_redirect_uri) when there is one.
 */
function frontChannelPage(srcs: string[], next: string | null): string {
  const frames = srcs.map((s) => `<iframe class="rp-logout" src="${escapeHtml(s)}" title="signing out" width="0" height="0" style="display:none;border:0"></iframe>`).join('');
  const link = next ? `<p><a id="continue" href="${escapeHtml(next)}">Continue</a></p>` : '<p>You can close this window.</p>';
  const script = next
    ? `<script>(function(){var n=${JSON.stringify(next).replace(/</g, '\\u003c')},f=document.querySelectorAll('iframe.rp-logout'),left=f.length,done=false;`
      + 'function go(){if(!done){done=true;location.replace(n);}}'
      + `f.forEach(function(x){x.addEventListener('load',function(){if(--left<=0)go();});});setTimeout(go,${FRONT_CHANNEL_WAIT_MS});})();</script>`
    : '';
  return page('Signed out', `<h1>You are signed out</h1>${frames}${link}`, script);
}

// ---- HTML answers ----

const escapeHtml = (s: string): string => s.replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);

function page(title: string, body: string, script = ''): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)}</title></head><body>${body}${script}</body></html>`;
}

/**
 * The consent page (issue 34): the client's name, the host its answer goes to, the scopes in words, and
 * allow / deny as one form posting the single-use ticket back to /authorize. No script; a frame is refused.
 */
function consentPage(r: ConsentPage): string {
  const items = r.scopes.map((s) => `<li>${escapeHtml(s.words)} <small>(${escapeHtml(s.scope)})</small></li>`).join('');
  const style = '<style>body{font-family:system-ui,sans-serif;max-width:32rem;margin:3rem auto;padding:0 1rem;color:#1a1a1a}'
    + 'button{font:inherit;padding:.6rem 1.2rem;margin-right:.8rem;border-radius:.4rem;border:1px solid #555;cursor:pointer}'
    + 'button[value=allow]{background:#1d4ed8;color:#fff;border-color:#1d4ed8}small{color:#444}</style>';
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">`
    + `<title>Allow ${escapeHtml(r.clientName)}?</title>${style}</head><body><main aria-busy="false">`
    + `<h1>${escapeHtml(r.clientName)} wants to access your account</h1>`
    + (r.clientIdHost !== undefined
      ? `<p>This application describes itself at <strong>${escapeHtml(r.clientIdHost)}</strong>; its name there was not checked by this server.</p>`
      : '')
    + `<p>If you allow it, you will be sent back to <strong>${escapeHtml(r.redirectHost)}</strong>, and the application will be able to:</p>`
    + `<ul>${items}</ul>`
    + `<form method="post" action="${escapeHtml(r.action)}"><input type="hidden" name="consent_ticket" value="${escapeHtml(r.ticket)}">`
    + '<button type="submit" name="decision" value="allow">Allow</button><button type="submit" name="decision" value="deny">Deny</button></form>'
    + '<p><small>You can withdraw this consent later from your account.</small></p></main></body></html>';
}

/** The /authorize result as an HTTP answer (the gateway adds a CSP with a nonce-free inline allowance for these pages only). */
function renderAuthorize(r: AuthorizeResult): HttpResponse {
  switch (r.kind) {
    case 'redirect':
      return { status: 302, body: null, frameable: false, location: r.location };
    case 'error_page':
      return {
        status: r.status,
        body: null, frameable: false,
        html: page('Authorization error', `<h1>Authorization error</h1><p><strong>${escapeHtml(r.error)}</strong>: ${escapeHtml(r.description)}</p>`),
      };
    case 'consent':
      return { status: 200, body: null, frameable: false, html: consentPage(r) };
    case 'form_post': {
      // OAuth 2.0 Form Post Response Mode §2: an auto-submitting form; the submit button covers disabled scripts
      const inputs = Object.entries(r.fields).map(([k, v]) => `<input type="hidden" name="${escapeHtml(k)}" value="${escapeHtml(v)}">`).join('');
      return {
        status: 200,
        body: null, frameable: false,
        html: page('Submitting…', `<form method="post" action="${escapeHtml(r.action)}">${inputs}<noscript><button type="submit">Continue</button></noscript></form>`,
          '<script>document.forms[0].submit()</script>'),
      };
    }
    case 'web_message': {
      // authorizer-js's iframe flow: {type: "authorization_response", response} to the parent or opener at the redirect URI's origin
      const msg = JSON.stringify({ type: 'authorization_response', response: r.fields }).replace(/</g, '\\u003c');
      const origin = JSON.stringify(r.origin).replace(/</g, '\\u003c');
      return {
        status: 200,
        body: null, frameable: true,
        html: page('Signing in…', '', `<script>(function(){var t=window.opener||window.parent;t.postMessage(${msg},${origin});})()</script>`),
      };
    }
  }
}
