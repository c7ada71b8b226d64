/**
 * @module @gatehouse/authn/rpc/federated
 * AuthnInternal.CompleteFederatedLogin (issue 20): the end of every upstream login. The orgs
 * service calls it after an org OIDC SSO callback or a SAML ACS it verified; authn's own social
 * callbacks call {@link completeFederated} in process. Session cookies (or mfa's `mfa` cookie) travel
 * back on the call's context; a refusal is a `redirect_url` carrying `error`, never an RPC error.
 */
import type { CallContext } from '@gatehouse/rpc';
import { completeFederatedLogin, SSO_METHOD, type FederatedLogin, type FederatedResult } from '../domain/federated.ts';
import { recordUserAction } from './audit.ts';
import { setSessionCookies } from './cookies.ts';
import type { AuthnInternalHandler, RpcContext } from './deps.ts';
import { mfaChallengesOf } from './mfa.ts';

/**
 * Completes `login` for the call `ctx`: the domain's {@link completeFederatedLogin}, the session
 * cookies when tokens were issued, and, for a social provider, the audit row `oauth.callback_success`
 * or `oauth.callback_failed` (behaviour.md §5.7; `sso` callers record their own `sso.*`/`saml.*`).
 * Never throws.
 */
export async function completeFederated(c: RpcContext, ctx: CallContext, login: FederatedLogin): Promise<FederatedResult> {
  const r = await completeFederatedLogin(c, mfaChallengesOf(c.mfa, ctx), login);
  if (r.issued?.cookie) setSessionCookies(ctx, c.options, r.issued.cookie);
  if (login.method !== SSO_METHOD) {
    const details: Record<string, unknown> = { provider: login.method, created: r.created };
    if (r.error) details.error = r.error.code;
    await recordUserAction(c, ctx, r.error ? 'oauth.callback_failed' : 'oauth.callback_success', {
      userId: r.userId, email: r.userId ? null : (typeof login.email === 'string' ? login.email : null), details,
    });
  }
  return r;
}

/** `{redirect_url, user_id, created, error}`; never throws for a refusal. */
export const completeFederatedLoginRpc = (c: RpcContext): AuthnInternalHandler<'CompleteFederatedLogin'> => async (req, ctx) => {
  const r = await completeFederated(c, ctx, {
    method: req.method, issuer: req.issuer, subject: req.subject, email: req.email, emailVerified: req.email_verified,
    givenName: req.given_name, familyName: req.family_name, nickname: req.nickname, picture: req.picture,
    redirectUri: req.redirect_uri, state: req.state, roles: req.roles ?? [], scope: req.scope ?? [],
    orgId: req.org_id, error: req.error, errorDescription: req.error_description,
  });
  return {
    redirect_url: r.redirectUrl,
    created: r.created,
    ...(r.userId ? { user_id: r.userId } : {}),
    ...(r.error ? { error: r.error.code } : {}),
  };
};
