/**
 * @module @gatehouse/authn/domain/login-redirect
 * The Location of a login that ends in a browser redirect (behaviour.md §3.4 `GET /verify_email`,
 * the social, SSO and SAML callbacks of issue 20): tokens in the query, the MFA gate's parameters, or
 * `error` and `error_description`, on the request's validated `redirect_uri` (§3.1).
 */
import { toAppError } from '@gatehouse/errors';
import type { AuthnContext } from './deps.ts';
import type { AuthOutcome, Issued } from './issue.ts';
import { gateRedirectParams } from './mfa-gate.ts';
import { checkRedirectUri } from './redirect.ts';
import { MAX_URL_CHARS, optText, type Opt } from './validation.ts';

/** Where a redirecting login goes, and what it issued (its session cookie is set with the redirect). */
export interface LinkRedirect {
  /** the 302 Location */
  redirectUrl: string;
  /** null when the login failed (the Location then carries `error`) or the gate withheld the tokens */
  issued: Issued | null;
  /** the refusal the Location carries, or null */
  error?: { code: string; message: string } | null;
}

/**
 * Runs `login` and builds the Location: `redirect_uri` (validated per §3.1, default `<url>/app`) with
 * `access_token`, `token_type=bearer`, `expires_in`, `id_token`, `refresh_token` (only with
 * `offline_access`) and `state` (only when given) in the query. Gated: `mfa_required=1&mfa_methods=…&
 * mfa_gate=verify|offer` instead of tokens (mfa set the `mfa` cookie on the call). Failure (any error
 * of `login`, or a bad `redirect_uri`/`state`): the same target, or `<url>/app` when `redirect_uri` is
 * unusable, with `error` (the error code) and `error_description` (its message). Never throws.
 * @param failureLog the log message of an unexpected (`internal`, `unavailable`) failure
 */
export async function loginRedirect(
  c: AuthnContext,
  visit: { redirectUri?: Opt<string>; state?: Opt<string> },
  login: (state: string | null) => Promise<AuthOutcome>,
  failureLog: string,
): Promise<LinkRedirect> {
  let target = `${c.options.url}/app`;
  let state: string | undefined;
  let issued: Issued | null = null;
  let error: LinkRedirect['error'] = null;
  const q = new URLSearchParams();
  try {
    state = optText('state', visit.state, MAX_URL_CHARS) || undefined;
    target = checkRedirectUri(c.options, optText('redirect_uri', visit.redirectUri, MAX_URL_CHARS));
    const outcome = await login(state ?? null);
    issued = outcome.issued;
    if (outcome.gate) {
      for (const [k, v] of Object.entries(gateRedirectParams(outcome.gate))) q.set(k, v);
    } else if (issued) {
      const t = issued.tokens;
      q.set('access_token', t.accessToken);
      q.set('token_type', 'bearer');
      q.set('expires_in', String(t.expiresIn));
      q.set('id_token', t.idToken);
      if (t.refreshToken) q.set('refresh_token', t.refreshToken);
    }
  } catch (err) {
    const e = toAppError(err);
    if (e.code === 'internal' || e.code === 'unavailable') c.logger.error({ err }, failureLog);
    error = { code: e.code, message: e.message };
    q.set('error', e.code);
    q.set('error_description', e.message);
  }
  if (state !== undefined) q.set('state', state);
  const u = new URL(target);
  for (const [k, v] of q) u.searchParams.set(k, v);
  return { redirectUrl: u.toString(), issued, error };
}
