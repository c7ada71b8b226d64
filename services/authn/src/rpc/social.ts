/**
 * @module @gatehouse/authn/rpc/social
 * AuthnService.SocialLogin and SocialCallback (issue 20): `GET /oauth_login/<provider>` and
 * `GET|POST /oauth_callback/<provider>`, gateway routes outside /v1 that answer 302 to `redirect_url`.
 *
 * The pending login lives in the browser, not on the server: the `__Host-gatehouse_social` cookie
 * (`gatehouse_social` on `/oauth_callback/<provider>` without `--app-cookie-secure`) holds the
 * provider, the upstream `state`, the PKCE verifier, the OIDC `nonce` and what the login asked for
 * (`redirect_uri`, `state`, `roles`, `scope`), sealed with AES-256-GCM (the deployment's job key,
 * associated data `social_login:<provider>`), HttpOnly, 10 minutes, cleared by the callback. The
 * callback refuses a missing, expired, foreign or tampered cookie and a `state` that differs from it
 * (RFC 6749 §10.12, RFC 9700 §4.7), then the code exchange checks PKCE and the nonce.
 */
import { ownCookie, ownCookieName, parseCookies, pathUnder } from '@gatehouse/auth';
import { decrypt, encrypt } from '@gatehouse/crypto';
import { AppError } from '@gatehouse/errors';
import type { CallContext } from '@gatehouse/rpc';
import { isProviderEnabled, PROVIDERS, type AuthnOptions, type Provider } from '../domain/options.ts';
import { checkRedirectUri } from '../domain/redirect.ts';
import { selfServiceRoles } from '../domain/roles.ts';
import { MAX_URL_CHARS, optText } from '../domain/validation.ts';
import { splitList } from '../domain/verify-email.ts';
import type { SocialUpstream, UpstreamChecks } from '../social/upstream.ts';
import { recordUserAction } from './audit.ts';
import type { AuthnHandler, RpcContext } from './deps.ts';
import { completeFederated } from './federated.ts';

export const PENDING_COOKIE = 'gatehouse_social';
const PENDING_SECONDS = 600;

/** The sealed pending login. */
interface PendingLogin extends UpstreamChecks {
  provider: Provider;
  /** Unix seconds */
  expiresAt: number;
  redirectUri?: string;
  clientState?: string;
  roles?: string[];
  scope?: string[];
}

/**
 * The provider named by the route, enabled.
 * @throws AppError `not_found` `unknown social provider: <name>`; `failed_precondition`
 *   `<provider> login is not enabled for this instance` (client id or secret missing, behaviour.md §5.2)
 */
export function enabledProvider(o: AuthnOptions, name: string): Provider {
  const p = name.trim().toLowerCase() as Provider;
  if (!PROVIDERS.includes(p)) throw new AppError('not_found', `unknown social provider: ${name.slice(0, 64)}`);
  if (!isProviderEnabled(o, p)) throw new AppError('failed_precondition', `${p} login is not enabled for this instance`);
  return p;
}

/**
 * The pending-login cookie (issue 30 §7): `__Host-` prefixed when Secure, else on the provider's
 * callback path only. Apple posts its answer cross-site (form_post): the cookie must be SameSite=None
 * (Secure) to come back.
 */
const pendingCookie = (o: AuthnOptions, p: Provider, value: string, maxAge: number): string => ownCookie(PENDING_COOKIE, value, {
  maxAgeSeconds: maxAge, path: pathUnder(o.url, `/oauth_callback/${p}`), secure: o.appCookieSecure, sameSite: p === 'apple' ? 'none' : 'lax',
});

/**
 * `{redirect_url}`: the provider's authorization URL, with the sealed pending-login cookie and the
 * audit row `oauth.login_initiated`.
 * @throws AppError as {@link enabledProvider}; `invalid_argument` `invalid redirect URI`, `invalid roles`,
 *   a field over its length; `unavailable` when the provider's discovery fails
 */
export const socialLoginRpc = (c: RpcContext, upstream: SocialUpstream): AuthnHandler<'SocialLogin'> => async (req, ctx) => {
  const o = c.options;
  const p = enabledProvider(o, req.provider);
  const redirectUri = optText('redirect_uri', req.redirect_uri, MAX_URL_CHARS);
  checkRedirectUri(o, redirectUri);
  const clientState = optText('state', req.state, MAX_URL_CHARS);
  const roles = splitList(optText('roles', req.roles, MAX_URL_CHARS));
  if (roles) selfServiceRoles(o, roles);
  const scope = splitList(optText('scope', req.scope, MAX_URL_CHARS));
  const checks = upstream.newChecks(p);
  const url = await upstream.authorizationUrl(p, checks);
  const pending: PendingLogin = {
    ...checks, provider: p, expiresAt: c.now() + PENDING_SECONDS,
    ...(redirectUri ? { redirectUri } : {}), ...(clientState ? { clientState } : {}), ...(roles ? { roles } : {}), ...(scope ? { scope } : {}),
  };
  ctx.setCookies.push(pendingCookie(o, p, encrypt(c.jobKey, JSON.stringify(pending), `social_login:${p}`), PENDING_SECONDS));
  await recordUserAction(c, ctx, 'oauth.login_initiated', { resourceType: 'oauth_provider', resourceId: p, details: { provider: p } });
  return { redirect_url: url };
};

/** The caller's pending login for `p`, or null when missing, expired, foreign or tampered. */
function pendingOf(c: RpcContext, ctx: CallContext, p: Provider): PendingLogin | null {
  const sealed = parseCookies(ctx.headers.cookie)[ownCookieName(PENDING_COOKIE, c.options.appCookieSecure)];
  if (!sealed) return null;
  try {
    const pending = JSON.parse(decrypt(c.jobKey, sealed, `social_login:${p}`)) as PendingLogin;
    return pending.provider === p && pending.expiresAt >= c.now() ? pending : null;
  } catch {
    return null;
  }
}

/**
 * `{redirect_url}`: the federated login completion's Location (tokens, the MFA gate's parameters, or
 * `error`/`error_description` on the login's validated `redirect_uri`), with the session cookies; the
 * pending-login cookie is cleared. Refusals are redirects; only an unknown or disabled provider throws.
 * @throws AppError as {@link enabledProvider}
 */
export const socialCallbackRpc = (c: RpcContext, upstream: SocialUpstream): AuthnHandler<'SocialCallback'> => async (req, ctx) => {
  const o = c.options;
  const p = enabledProvider(o, req.provider);
  const pending = pendingOf(c, ctx, p);
  ctx.setCookies.push(pendingCookie(o, p, '', 0));
  const asked = { redirectUri: pending?.redirectUri, state: pending?.clientState, roles: pending?.roles ?? [], scope: pending?.scope ?? [] };
  const refuse = async (message: string): Promise<{ redirect_url: string }> => {
    const r = await completeFederated(c, ctx, { method: p, issuer: p, subject: '', emailVerified: false, ...asked, error: 'unauthenticated', errorDescription: message });
    return { redirect_url: r.redirectUrl };
  };
  if (req.error) return refuse(`${p} login failed: ${optText('error_description', req.error_description, MAX_URL_CHARS) || req.error.slice(0, 256)}`);
  if (!pending) return refuse(`${p} login failed: the login expired or was started in another browser`);
  if (!req.state || req.state !== pending.state) return refuse(`${p} login failed: invalid state`);
  let profile;
  try {
    profile = await upstream.identity(p, pending, { code: req.code ?? null, state: req.state, user: req.user ?? null, iss: req.iss ?? null });
  } catch (err) {
    return refuse(err instanceof AppError ? err.message : `${p} login failed`);
  }
  const r = await completeFederated(c, ctx, {
    method: p, issuer: p, subject: profile.subject, email: profile.email, emailVerified: profile.emailVerified,
    givenName: profile.givenName ?? null, familyName: profile.familyName ?? null, nickname: profile.nickname ?? null, picture: profile.picture ?? null,
    ...asked,
  });
  return { redirect_url: r.redirectUrl };
};
