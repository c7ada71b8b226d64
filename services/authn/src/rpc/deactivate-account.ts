/** @module @gatehouse/authn/rpc/deactivate-account — AuthnService.DeactivateAccount (POST /v1/deactivate_account, behaviour.md §3.5). */
import { ACCOUNT_DEACTIVATED, deactivateAccount } from '../domain/profile.ts';
import { clearCookies } from './cookies.ts';
import { recordUserAction } from './audit.ts';
import type { AuthnHandler, RpcContext } from './deps.ts';

/** Deactivates the caller's account and clears its cookies. @throws AppError as {@link deactivateAccount} */
export const deactivateAccountRpc = (c: RpcContext): AuthnHandler<'DeactivateAccount'> => async (_req, ctx) => {
  const caller = await c.authenticator.requireUser(ctx);
  await deactivateAccount(c, caller);
  clearCookies(ctx, c.options);
  await recordUserAction(c, ctx, 'user.deactivated', { userId: caller.userId });
  return { message: ACCOUNT_DEACTIVATED };
};
