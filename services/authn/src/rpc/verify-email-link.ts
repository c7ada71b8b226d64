/**
 * @module @gatehouse/authn/rpc/verify-email-link
 * AuthnService.VerifyEmailLink: the emailed link target `GET /verify_email` (behaviour.md §3.4), a
 * gateway route outside /v1 that answers 302 to `redirect_url`.
 */
import { verifyEmailLinkTarget } from '../domain/verify-email.ts';
import { setSessionCookies } from './cookies.ts';
import type { AuthnHandler, RpcContext } from './deps.ts';
import { mfaChallengesOf } from './mfa.ts';

/**
 * `{redirect_url}`, with the session cookies when the token was redeemed and the gate let it through
 * (gated: mfa's `mfa` cookie instead). Never throws for a refusal.
 */
export const verifyEmailLinkRpc = (c: RpcContext): AuthnHandler<'VerifyEmailLink'> => async (req, ctx) => {
  const { redirectUrl, issued } = await verifyEmailLinkTarget(c, mfaChallengesOf(c.mfa, ctx), {
    token: req.token, redirectUri: req.redirect_uri, state: req.state, roles: req.roles, scope: req.scope,
  });
  if (issued?.cookie) setSessionCookies(ctx, c.options, issued.cookie);
  return { redirect_url: redirectUrl };
};
