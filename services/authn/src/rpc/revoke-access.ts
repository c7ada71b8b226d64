/** @module @gatehouse/authn/rpc/revoke-access — AuthnService.RevokeAccess (POST /v1/admin/revoke_access, behaviour.md §5.3). */
import { ACCESS_REVOKED, revokeAccess } from '../domain/admin-access.ts';
import { adminAuditOf } from './admin-audit.ts';
import type { AuthnHandler, RpcContext } from './deps.ts';

/** @throws AppError `invalid_argument` `user ID is missing`; `not_found` `user not found` */
export const revokeAccessRpc = (c: RpcContext): AuthnHandler<'RevokeAccess'> => async (req, ctx) => {
  await revokeAccess(c, req.user_id, adminAuditOf(ctx));
  return { message: ACCESS_REVOKED };
};
