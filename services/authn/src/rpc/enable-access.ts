/** @module @gatehouse/authn/rpc/enable-access — AuthnService.EnableAccess (POST /v1/admin/enable_access, behaviour.md §5.3). */
import { ACCESS_ENABLED, enableAccess } from '../domain/admin-access.ts';
import { adminAuditOf } from './admin-audit.ts';
import type { AuthnHandler, RpcContext } from './deps.ts';

/** @throws AppError `invalid_argument` `user ID is missing`; `not_found` `user not found` */
export const enableAccessRpc = (c: RpcContext): AuthnHandler<'EnableAccess'> => async (req, ctx) => {
  await enableAccess(c, req.user_id, adminAuditOf(ctx));
  return { message: ACCESS_ENABLED };
};
