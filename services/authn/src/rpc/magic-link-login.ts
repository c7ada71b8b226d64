/** @module @gatehouse/authn/rpc/magic-link-login — AuthnService.MagicLinkLogin (POST /v1/magic_link_login, behaviour.md §3.4). */
import { MAGIC_LINK_SENT, magicLinkLogin } from '../domain/magic-link.ts';
import { recordUserAction } from './audit.ts';
import type { AuthnHandler, RpcContext } from './deps.ts';

/** Mails a magic link; one answer whether or not the address has an account. @throws AppError as {@link magicLinkLogin} */
export const magicLinkLoginRpc = (c: RpcContext): AuthnHandler<'MagicLinkLogin'> => async (req, ctx) => {
  await magicLinkLogin(c, { email: req.email, roles: req.roles, scope: req.scope, state: req.state, redirectUri: req.redirect_uri });
  await recordUserAction(c, ctx, 'user.magic_link_requested', { email: req.email });
  return { message: MAGIC_LINK_SENT };
};
