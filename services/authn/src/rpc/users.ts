/** @module @gatehouse/authn/rpc/users — AuthnService.Users (POST /v1/admin/users, behaviour.md §5.3, §10). */
import { listUsers } from '../domain/admin-users.ts';
import { paginationOf } from '@gatehouse/contracts/pagination';
import { publicUser } from '../domain/user.ts';
import { mfaChallengesOf } from './mfa.ts';
import type { AuthnHandler, RpcContext } from './deps.ts';

/** A page of users matching `query`, newest first, with the total. @throws AppError `invalid_argument` */
export const usersRpc = (c: RpcContext): AuthnHandler<'Users'> => async (req, ctx) => {
  const { page, result } = await listUsers(c, { query: req.query, pagination: req.pagination });
  // one ask of mfa for the page's `enrolled_mfa_methods` (behaviour.md §5.3)
  const mfa = mfaChallengesOf(c.mfa, ctx);
  const enrolled = mfa && result.rows.length > 0 ? await mfa.enrolledMethods(result.rows.map((u) => u.id)) : new Map<string, string[]>();
  return { users: result.rows.map((u) => publicUser(u, enrolled.get(u.id) ?? [])), pagination: paginationOf(page, result.total) };
};
