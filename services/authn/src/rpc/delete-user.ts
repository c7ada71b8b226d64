/** @module @gatehouse/authn/rpc/delete-user — AuthnService.DeleteUser (POST /v1/admin/delete_user, behaviour.md §5.3). */
import { USER_DELETED, deleteUser } from '../domain/admin-access.ts';
import { adminAuditOf } from './admin-audit.ts';
import type { AuthnHandler, RpcContext } from './deps.ts';

/** @throws AppError `invalid_argument`, `not_found` */
export const deleteUserRpc = (c: RpcContext): AuthnHandler<'DeleteUser'> => async (req, ctx) => {
  await deleteUser(c, req, adminAuditOf(ctx));
  return { message: USER_DELETED };
};
