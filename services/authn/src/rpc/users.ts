/** @module @gatehouse/authn/rpc/users — AuthnService.Users (POST /v1/admin/users, behaviour.md §5.3, §10). */
import { listUsers } from '../domain/admin-users.ts';
import { paginationOf } from '../domain/pagination.ts';
import { publicUser } from '../domain/user.ts';
import type { AuthnHandler, RpcContext } from './deps.ts';

/** A page of users matching `query`, newest first, with the total. @throws AppError `invalid_argument` */
export const usersRpc = (c: RpcContext): AuthnHandler<'Users'> => async (req) => {
  const { page, result } = await listUsers(c, { query: req.query, pagination: req.pagination });
  return { users: result.rows.map(publicUser), pagination: paginationOf(page, result.total) };
};
